import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { computeValuation } from '../../queries/ai-value/compute';
import { emptyCounts, type ModelCounts, type TopicInput, valuate } from '../../queries/ai-value/model';
import { NO_PUBLISHED_CONTENT } from '../../queries/ai-value/attribution';
import { MODEL_IDS } from '../../src/domain/models';
import { call, caughtUp, startServer, type TestServer, useServer } from '../support/server';

/**
 * The counting of docs/VALUATION.md, section 1, against a reference written from that page alone: random answers
 * (entities named in a random order, models, prompts of both types under topics of both kinds, times across both
 * windows and outside them) are imported, then the computation's valuation must equal the model fed with counts
 * the reference took from the imported items themselves.
 */

let s: TestServer;
let key: string;
// a shrinking failure builds many websites: past the default 600 requests a minute it would read as 429s
useServer(
  async (server) => {
    s = server;
    key = (await s.org('Counts')).key;
  },
  () => startServer({ RATE_LIMIT_PER_MIN: '1000000' }),
);

const DAY = 86_400_000;
const ENTITIES = ['Acme', 'Bolt', 'Crux'];

const item = fc.record({
  prompt: fc.integer({ min: 0, max: 4 }),
  model: fc.constantFrom(...MODEL_IDS.slice(0, 3)),
  /** hours before the computation: the window, the previous window, and outside both */
  hours: fc.oneof(
    { arbitrary: fc.integer({ min: 1, max: 28 * 24 }), weight: 4 },
    { arbitrary: fc.integer({ min: 28 * 24, max: 56 * 24 }), weight: 2 },
    { arbitrary: fc.integer({ min: 56 * 24, max: 60 * 24 }), weight: 1 },
  ),
  order: fc.shuffledSubarray(ENTITIES),
});

async function post(path: string, body: unknown) {
  const r = await call(s, 'POST', path, { key, body });
  expect(r.status, `${path} ${JSON.stringify(r.body)}`).toBe(201);
  return r.body;
}

describe('the counting of the AI search value against a reference', () => {
  it('given random answers across the windows, then the valuation is the model of the reference counts', async () => {
    let n = 0;
    let valued = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(item, { minLength: 110, maxLength: 160 }), fc.integer({ min: 0, max: 2 }), async (items, brandedTopic) => {
        n++;
        const site = (await post('/api/v1/websites', { name: 'Acme', url: `https://acme${n}.example.com` })).website.id as string;
        await post('/api/v1/competitors', { website_id: site, name: 'Bolt', url: 'https://bolt.example.com' });
        await post('/api/v1/competitors', { website_id: site, name: 'Crux', url: 'https://crux.example.com' });
        const topics = [
          (await post('/api/v1/topics', { website_id: site, name: 'CRM software' })).topic.id as string,
          (await post('/api/v1/topics', { website_id: site, name: 'Hotel booking' })).topic.id as string,
        ];
        // prompts: 0, 1 under topic 0; 2, 3 under topic 1; 4 under none. brandedTopic: which topic's prompts are branded
        const spec = [
          { topic: 0, type: brandedTopic === 0 ? 'branded' : 'non_branded' },
          { topic: 0, type: 'branded' },
          { topic: 1, type: brandedTopic === 1 ? 'branded' : 'non_branded' },
          { topic: 1, type: brandedTopic === 1 ? 'branded' : 'non_branded' },
          { topic: null, type: 'non_branded' },
        ] as const;
        const prompts: string[] = [];
        for (const [i, p] of spec.entries())
          prompts.push(
            (
              await post('/api/v1/prompts', {
                website_id: site,
                text: `Question ${i}?`,
                type: p.type,
                ...(p.topic === null ? {} : { topic_id: topics[p.topic] }),
              })
            ).prompt.id,
          );
        const at = new Date(Math.floor(Date.now() / 1000) * 1000);
        await post('/api/v1/responses/import', {
          website_id: site,
          responses: items.map((x) => ({
            prompt_id: prompts[x.prompt],
            model: x.model,
            run_at: new Date(at.getTime() - x.hours * 3_600_000).toISOString(),
            text: x.order.length ? `${x.order.join(', then ')}.` : 'Nothing to say.',
          })),
        });
        await caughtUp(s, ['answers', 'catalog']);
        const got = await computeValuation(s.rt.database.db, site, at);

        // the reference: straight from the items and the page
        const branded = [0, 1].map(
          (t) => spec.filter((p) => p.topic === t && p.type === 'branded').length * 2 > spec.filter((p) => p.topic === t).length,
        );
        const win = [new Map<string, ModelCounts>(), new Map<string, ModelCounts>()];
        const prev = [new Map<string, ModelCounts>(), new Map<string, ModelCounts>()];
        let measured = 0;
        for (const x of items) {
          const ms = x.hours * 3_600_000;
          if (ms > 56 * DAY) continue;
          const inW = ms <= 28 * DAY;
          if (inW) measured++;
          const p = spec[x.prompt];
          if (p.topic === null || (p.type === 'branded') !== branded[p.topic]) continue;
          const m = (inW ? win : prev)[p.topic];
          const c = m.get(x.model) ?? emptyCounts();
          m.set(x.model, c);
          c.n++;
          const pos = x.order.indexOf('Acme');
          if (pos >= 0) {
            c.mentioned++;
            c.B += 1 / (pos + 1);
          }
          for (let k = 0; k < x.order.length; k++) c.D += 1 / (k + 1);
        }
        expect(got.measured_responses).toBe(measured);
        if (measured < 50) {
          expect(got.valuation).toBeNull();
          return;
        }
        const input: TopicInput[] = [0, 1].map((t) => ({
          topic_id: topics[t],
          name: t === 0 ? 'CRM software' : 'Hotel booking',
          branded: branded[t],
          prompts: spec.flatMap((p, i) => (p.topic === t ? [`Question ${i}?`] : [])),
          economics: null,
          window: win[t],
          previous: prev[t],
          locations: 0,
          personas: 0,
        }));
        const want = valuate({ topics: input, measured_responses: measured, attribution: { unavailable: NO_PUBLISHED_CONTENT } });
        expect(got.valuation).toEqual(want);
        valued++;
      }),
      { numRuns: 6, seed: 21 },
    );
    // most histories are past the 50-answer threshold: the comparison is of valuations, not of two gatherings
    expect(valued).toBeGreaterThanOrEqual(4);
  }, 240_000);
});
