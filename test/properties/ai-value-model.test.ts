import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  ASSUMPTIONS,
  categoryOf,
  localIntent,
  type ModelCounts,
  mixAdjusted,
  nameTokens,
  type TopicInput,
  valuate,
} from '../../queries/ai-value/model';
import { Valuation } from '../../queries/ai-value/views';

/**
 * The AI search value model (docs/VALUATION.md) as properties over random websites: whatever the answers and the
 * economics, the bands are ordered, captured and headroom add up to the market band by band, the totals are the sums
 * of the topics counted, duplicates are counted once.
 */

const cents = (x: number) => Math.round(x * 100);

/** One model's counts that could come from real answers: B ≤ D, B ≤ mentioned ≤ n, D ≤ n × entities. */
const modelCounts = fc
  .record({
    n: fc.integer({ min: 1, max: 400 }),
    mentionedShare: fc.double({ min: 0, max: 1, noNaN: true }),
    entities: fc.integer({ min: 1, max: 6 }),
  })
  .chain(({ n, mentionedShare, entities }) => {
    const mentioned = Math.floor(n * mentionedShare);
    return fc
      .record({
        brandWeight: fc.double({ min: 0.01, max: 1, noNaN: true }),
        othersWeight: fc.double({ min: 0, max: entities - 1, noNaN: true }),
      })
      .map(({ brandWeight, othersWeight }): ModelCounts => {
        const B = mentioned * brandWeight;
        return { n, mentioned, B, D: B + n * othersWeight };
      });
  });

const byModel = fc
  .uniqueArray(fc.tuple(fc.constantFrom('m1', 'm2', 'm3', 'm4', 'm5'), modelCounts), { selector: ([m]) => m, maxLength: 5 })
  .map((xs) => new Map(xs));

const WORDS = ['crm', 'software', 'pricing', 'plans', 'hotel', 'loan', 'near me', 'zorblat', 'reviews', 'tools', 'best', 'the'];
const topicName = fc.array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 3 }).map((ws) => ws.join(' '));

const topic = fc.record({
  name: topicName,
  branded: fc.boolean(),
  prompts: fc.array(
    fc.array(fc.constantFrom(...WORDS), { maxLength: 4 }).map((ws) => `Which ${ws.join(' ')}?`),
    { maxLength: 3 },
  ),
  economics: fc.option(
    fc.oneof(
      fc.record({ monthly_searches: fc.integer({ min: 0, max: 100_000 }), cpc_usd: fc.double({ min: 0, max: 50, noNaN: true }) }),
      // markets of a few cents, where rounding to cents collapses a band unless it opens by one cent
      fc.record({ monthly_searches: fc.constant(1), cpc_usd: fc.constantFrom(0.01, 0.02, 0.03) }),
    ),
  ),
  window: byModel,
  previous: byModel,
  locations: fc.integer({ min: 0, max: 3 }),
  personas: fc.integer({ min: 0, max: 3 }),
});

const website = fc.array(topic, { maxLength: 8 }).map((ts) => ({
  topics: ts.map((t, i): TopicInput => ({ ...t, topic_id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}` })),
  measured_responses: 50,
  attribution: { unavailable: 'no content hub' } as const,
}));

describe('the AI search value model over random websites', () => {
  it('given any website, then the valuation has the stored shape and every band is ordered', () => {
    fc.assert(
      fc.property(website, (input) => {
        const v = valuate(input);
        Valuation.parse(v);
        const bands = [v.captured, v.headroom, v.contribution.modeled_attributed, ...v.topics.flatMap((t) => [t.captured, t.headroom])];
        for (const b of bands) {
          expect(b.conservative).toBeLessThanOrEqual(b.expected);
          expect(b.expected).toBeLessThanOrEqual(b.upside);
          expect(b.conservative).toBeGreaterThanOrEqual(0);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('given any website, then captured + headroom = market, band by band (conservative with upside), per topic and in total', () => {
    fc.assert(
      fc.property(website, (input) => {
        const v = valuate(input);
        const check = (market: number, cap: typeof v.captured, head: typeof v.headroom) => {
          expect(cents(cap.conservative) + cents(head.upside)).toBe(cents(market));
          expect(cents(cap.expected) + cents(head.expected)).toBe(cents(market));
          expect(cents(cap.upside) + cents(head.conservative)).toBe(cents(market));
          expect(cap.upside).toBeLessThanOrEqual(market);
        };
        for (const t of v.topics) check(t.value_usd_mo, t.captured, t.headroom);
        check(v.market.value_usd_mo, v.captured, v.headroom);
      }),
      { numRuns: 300 },
    );
  });

  it('given any website, then the totals are the sums of the topics counted in total, and only of those', () => {
    fc.assert(
      fc.property(website, (input) => {
        const v = valuate(input);
        const counted = v.topics.filter((t) => t.counted_in_total);
        const sum = (f: (t: (typeof counted)[number]) => number) => counted.reduce((a, t) => a + cents(f(t)), 0);
        expect(cents(v.market.value_usd_mo)).toBe(sum((t) => t.value_usd_mo));
        for (const k of ['conservative', 'expected', 'upside'] as const) {
          expect(cents(v.captured[k])).toBe(sum((t) => t.captured[k]));
          expect(cents(v.headroom[k])).toBe(sum((t) => t.headroom[k]));
        }
        expect(v.market.topics_total).toBe(counted.length);
        expect(v.market.topics_priced).toBe(counted.filter((t) => t.value_usd_mo > 0).length);
        if (v.market.topics_priced === 0) expect(v.market.value_usd_mo).toBe(0);
      }),
      { numRuns: 300 },
    );
  });

  it('given any website, then the band is a point only without error or without value, and current_sov_pct is a weighted mean of non-branded pw shares', () => {
    fc.assert(
      fc.property(website, (input) => {
        const v = valuate(input);
        for (const t of v.topics) {
          if (t.standard_error_pp > 0 && t.value_usd_mo > 0) expect(t.captured.upside).toBeGreaterThan(t.captured.conservative);
          if (t.share_basis === 'unmeasured') expect(t.standard_error_pp).toBe(0);
          expect(t.share_basis).toBe(t.responses_28d === 0 ? 'unmeasured' : t.branded ? 'mention_rate' : 'pw_sov');
        }
        const eligible = v.topics.filter((t) => t.counted_in_total && !t.branded && t.value_usd_mo > 0 && t.responses_28d > 0);
        if (!eligible.length) expect(v.market.current_sov_pct).toBe(0);
        else {
          const lo = Math.min(...eligible.map((t) => t.pw_sov_pct));
          const hi = Math.max(...eligible.map((t) => t.pw_sov_pct));
          expect(v.market.current_sov_pct).toBeGreaterThanOrEqual(lo - 1e-3);
          expect(v.market.current_sov_pct).toBeLessThanOrEqual(hi + 1e-3);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('given any website, then topics with the same name tokens are counted once (the older) and suggested for merging', () => {
    fc.assert(
      fc.property(website, (input) => {
        const v = valuate(input);
        const seen = new Map<string, number>();
        v.topics.forEach((t, i) => {
          const key = [...nameTokens(t.name)].sort().join(' ');
          const first = key ? seen.get(key) : undefined;
          expect(t.counted_in_total).toBe(first === undefined);
          if (first === undefined && key) seen.set(key, i);
          if (first !== undefined)
            expect(v.merge_suggestions).toContainEqual(
              expect.objectContaining({ topic_ids: [v.topics[first].topic_id, t.topic_id], duplicate: true, similarity: 1 }),
            );
        });
      }),
      { numRuns: 300 },
    );
  });

  it('given more answers at the same shares, then the standard error shrinks', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 200 }), fc.double({ min: 0, max: 1, noNaN: true }), (n, p) => {
        const at = (k: number) => mixAdjusted(new Map([['m1', { n: n * k, mentioned: Math.round(n * k * p), B: 0, D: 0 }]]), 'mention_rate')!;
        expect(at(4).se).toBeLessThan(at(1).se);
      }),
    );
  });
});

describe('categories, local intent and name tokens (docs/VALUATION.md, sections 3 and 4)', () => {
  it('given keywords in the name and prompts, then the name weighs 3, a prompt 1, ties go to the first listed, none is general', () => {
    expect(categoryOf('Acme CRM reviews', ['Is Acme a good CRM?'])?.id).toBe('software');
    expect(categoryOf('Hotel loans', [])?.id).toBe('finance'); // 3 and 3: finance is listed before travel
    expect(categoryOf('Hotels', ['Best loan?', 'Cheapest mortgage?'])?.id).toBe('travel'); // 3 against 2
    expect(categoryOf('Zorblat', ['Which zorblat?'])).toBeNull();
    expect(categoryOf('Apps', [])?.id).toBe('software');
    expect(categoryOf('Happy', [])).toBeNull(); // whole words only: "app" is not in "happy"
  });

  it('given a local phrase in the name or a prompt, then local intent', () => {
    expect(localIntent('Plumbers', ['Best plumber near me?'])).toBe(true);
    expect(localIntent('Plumbers', ['Best plumber?'])).toBe(false);
    expect(localIntent('Local dentists', [])).toBe(true);
  });

  it('given names that differ in case, order, plural and stop words, then the same tokens', () => {
    expect(nameTokens('Pricing plans')).toEqual(nameTokens('Plans & pricing'));
    expect(nameTokens('The best CRM tools')).toEqual(new Set(['crm', 'tool']));
    expect(ASSUMPTIONS.assumptions_version).toMatch(/^\d{4}\.\d{2}$/);
  });
});

describe('a band with an error is never a point, even on a one-cent market (docs/VALUATION.md, section 3)', () => {
  it('given a branded topic worth one cent whose share rounds to the whole cent at both ends, when valued, then the conservative bound loses the cent', () => {
    // 9 of 10 answers mention the brand: s = 0.9, SE = 0.1097, s_c = 0.685 and s_u = 1: both bounds round to the cent
    const t: TopicInput = {
      topic_id: '00000000-0000-4000-8000-000000000001',
      name: 'Acme reviews',
      branded: true,
      prompts: [],
      economics: { monthly_searches: 1, cpc_usd: 0.01 },
      window: new Map([['m1', { n: 10, mentioned: 9, B: 9, D: 9 }]]),
      previous: new Map(),
      locations: 0,
      personas: 0,
    };
    const [v] = valuate({ topics: [t], measured_responses: 50, attribution: { unavailable: 'none' } }).topics;
    expect(v.standard_error_pp).toBeGreaterThan(0);
    expect(v.captured).toEqual({ conservative: 0, expected: 0.01, upside: 0.01 });
    expect(v.headroom).toEqual({ conservative: 0, expected: 0, upside: 0.01 });
  });
});
