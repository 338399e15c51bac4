import { describe, expect, it } from 'vitest';
import { compileEntities, type EntityInput } from '../../src/analysis/answer';
import {
  type AttributeInput,
  compileAttributes,
  type ExtractedObservation,
  extractObservations,
  isValidScore,
  normalizeScore,
} from '../../src/analysis/observations';
import { MODEL_IDS } from '../../src/domain/models';
import { createSimulatedEngine } from '../../src/engines/simulated';
import { SIM_PROMPTS, SIM_WEBSITE, simDays } from '../support/engines';

// Given: a website (Acme) with competitors and the traits it watches, compiled once for every case below.
const ENTITIES: EntityInput[] = [
  { id: 'acme', name: 'Acme', is_self: true, identifiers: ['AcmeHQ'], url: 'https://www.acme.com/' },
  { id: 'globex', name: 'Globex', is_self: false, identifiers: [], url: 'https://globex.io' },
  { id: 'initech', name: 'Initech', is_self: false, identifiers: [], url: 'https://initech.com' },
  { id: 'bestbuy', name: 'Best Buy', is_self: false, identifiers: [], url: 'https://www.bestbuy.com' },
];
const ATTRIBUTES: AttributeInput[] = [
  { id: 'price', name: 'Price', description: 'How affordable the product is said to be' },
  { id: 'support', name: 'Support', description: 'How helpful its support is said to be' },
  { id: 'integrations', name: 'Integrations', description: null },
];
const entities = compileEntities(ENTITIES);
const attributes = compileAttributes(ATTRIBUTES);

const extract = (text: string) => extractObservations(entities, attributes, text);
/** entity/attribute/score triples, the shape most cases compare */
const said = (text: string) => extract(text).map((o) => `${o.entity_id}/${o.attribute_id}/${o.score}`);

describe('observations: praise and criticism', () => {
  it('given an answer that recommends the brand for its value for money, when extracted, then a positive price observation of plain strength', () => {
    const text = 'Acme is often recommended for its value for money.';
    expect(extract(text)).toEqual([{ entity_id: 'acme', attribute_id: 'price', positive: true, score: 0.6, text_span: text }]);
  });

  it('given an answer that criticizes a competitor, when extracted, then a negative observation', () => {
    expect(said('Globex is expensive.')).toEqual(['globex/price/-0.6']);
    expect(said('Many users report poor customer support at Globex.')).toEqual(['globex/support/-0.6']);
    expect(said('Globex lacks integrations.')).toEqual(['globex/integrations/-0.6']);
  });

  it.each([
    // when the answer says …                         then
    { text: "Acme's support isn't great.", then: ['acme/support/-0.56'] },
    { text: 'Acme is not cheap.', then: ['acme/price/-0.35'] },
    { text: 'Acme is never expensive.', then: ['acme/price/0.42'] },
    { text: 'Acme users have no complaints about support.', then: ['acme/support/0.42'] },
    { text: 'Acme offers no free plan.', then: ['acme/price/-0.5'] },
    { text: "Acme doesn't offer good integrations.", then: ['acme/integrations/-0.42'] },
  ])('given a negated statement "$text", when extracted, then the polarity flips: $then', ({ text, then }) => {
    expect(said(text)).toEqual(then);
  });

  it('given a contrast clause, when extracted, then each clause carries its own polarity for the attribute it names', () => {
    const text = 'Acme stands out for customer support, though pricing can be a concern.';
    expect(extract(text)).toEqual([
      { entity_id: 'acme', attribute_id: 'support', positive: true, score: 0.6, text_span: text },
      { entity_id: 'acme', attribute_id: 'price', positive: false, score: -0.3, text_span: text },
    ]);
    expect(said('Although Acme is affordable, its support is poor.')).toEqual(['acme/price/0.6', 'acme/support/-0.6']);
    expect(said('Acme is great except for its pricing.')).toEqual(['acme/price/-0.3']);
    expect(said('Acme has great support and poor pricing.')).toEqual(['acme/support/0.8', 'acme/price/-0.6']);
  });

  it('given one sentence that both praises and criticizes one attribute, when extracted, then one observation with the net score', () => {
    expect(said('Acme stands out for transparent pricing, though pricing can be a concern.')).toEqual(['acme/price/0.3']);
  });
});

describe('observations: which entities', () => {
  it('given a sentence naming two entities, when extracted, then the statement is attributed to each', () => {
    expect(said('Acme and Globex both offer excellent customer support.')).toEqual(['acme/support/0.9', 'globex/support/0.9']);
    expect(said('Acme, Globex, and Initech all offer solid support.')).toEqual(['acme/support/0.6', 'globex/support/0.6', 'initech/support/0.6']);
  });

  it('given two entities in separate clauses, when extracted, then each gets only its own clause', () => {
    expect(said('Acme has great support, and Globex is cheap.')).toEqual(['acme/support/0.8', 'globex/price/0.5']);
    expect(said('Acme is excellent value for money, but Globex is overpriced.')).toEqual(['acme/price/0.9', 'globex/price/-0.8']);
  });

  it('given a comparison, when extracted, then the baseline entity gets nothing', () => {
    expect(said('Compared with Globex, Acme tends to offer better value for money.')).toEqual(['acme/price/0.3']);
    expect(said('Acme is cheaper than Globex.')).toEqual(['acme/price/0.6']);
  });

  it('given an answer that names the brand by its domain or identifier, when extracted, then the brand gets the observation', () => {
    const text = 'See acme.com: affordable plans and helpful support.';
    expect(said(text)).toEqual(['acme/price/0.6', 'acme/support/0.6']);
    expect(said('AcmeHQ has excellent customer service.')).toEqual(['acme/support/0.9']);
  });

  it('given a sentence that names nobody, when extracted, then a pronoun refers to the single subject of the previous sentence', () => {
    expect(extract('Acme is a popular tool. Its pricing is fair.')).toEqual([
      { entity_id: 'acme', attribute_id: 'price', positive: true, score: 0.6, text_span: 'Its pricing is fair.' },
    ]);
    // two candidates: ambiguous, nothing
    expect(extract('Acme and Globex are popular. Their pricing is fair.')).toEqual([]);
  });

  it('given list items under an entity heading, when extracted, then they are about that entity', () => {
    const text = '1. **Acme**\n   - Great support\n   - Pricing can be steep\n2. **Globex**\n   - Limited integrations';
    expect(extract(text).map((o) => [o.entity_id, o.attribute_id, o.score, o.text_span])).toEqual([
      ['acme', 'support', 0.8, 'Great support'],
      ['acme', 'price', -0.3, 'Pricing can be steep'],
      ['globex', 'integrations', -0.6, 'Limited integrations'],
    ]);
    // a bullet after a paragraph sentence is not taken as its child
    expect(extract('Acme is popular with small teams.\n- Pricing can be steep')).toEqual([]);
  });

  it('given an entity whose name holds a lexicon or attribute word, when extracted, then the name is not read as praise or as the attribute', () => {
    expect(said('Best Buy sells it, with customer support.')).toEqual([]);
    expect(said('Best Buy has helpful support.')).toEqual(['bestbuy/support/0.6']);
    const es = compileEntities([{ id: 'as', name: 'Acme Support', is_self: true, url: 'https://acmesupport.com' }]);
    const said2 = (t: string) => extractObservations(es, attributes, t).map((o) => `${o.entity_id}/${o.attribute_id}/${o.score}`);
    expect(said2('Acme Support is great.')).toEqual([]);
    expect(said2('Acme Support is great, though its pricing is steep.')).toEqual(['as/price/-0.6']);
  });
});

describe('observations: nothing to say', () => {
  it.each([
    { why: 'no attribute', text: 'Acme is a great tool and the best choice overall.' },
    { why: 'no polarity', text: 'Users on forums frequently mention Acme for customer support.' },
    { why: 'no entity', text: 'Customer support is excellent and pricing is fair.' },
    { why: 'a question', text: 'Is Acme worth the price?' },
    { why: 'an echoed question', text: 'There is no single best answer to "Is Acme worth the price?", but a few options stand out.' },
    { why: 'a condition only', text: 'If cheap pricing matters, compare Acme with others.' },
    { why: 'an empty text', text: '' },
  ])('given an answer with $why, when extracted, then no observation', ({ text }) => {
    expect(extract(text)).toEqual([]);
  });

  it('given no attributes or no entities, when extracted, then nothing', () => {
    expect(extractObservations(entities, compileAttributes([]), 'Acme is cheap.')).toEqual([]);
    expect(extractObservations(compileEntities([]), attributes, 'Acme is cheap.')).toEqual([]);
  });
});

describe('observations: scores', () => {
  it('given hedged, plain and intensified wording, when extracted, then magnitudes are ordered', () => {
    const magnitude = (text: string) => {
      const [o] = extract(text);
      expect(o, text).toBeDefined();
      return Math.abs(o.score!);
    };
    const hedged = magnitude('Acme has somewhat helpful support.');
    const plain = magnitude('Acme has helpful support.');
    const intensified = magnitude('Acme has extremely helpful support.');
    expect(hedged).toBeLessThan(plain);
    expect(plain).toBeLessThan(intensified);
    expect(hedged).toBeCloseTo(0.3);
    expect(plain).toBeCloseTo(0.6);
    expect(intensified).toBeGreaterThanOrEqual(0.9);
    // criticism too
    expect(magnitude('Acme can be a bit expensive.')).toBeLessThan(magnitude('Acme is expensive.'));
    expect(magnitude('Acme is expensive.')).toBeLessThan(magnitude('Acme is very expensive.'));
    expect(magnitude('Acme is the best value for money.')).toBeGreaterThanOrEqual(0.9);
  });

  it('isValidScore and normalizeScore: finite, |score| in [0.1, 1], sign of positive; rounded to 3 decimals', () => {
    expect(isValidScore(true, 0.5)).toBe(true);
    expect(isValidScore(false, -0.1)).toBe(true);
    expect(isValidScore(true, 1)).toBe(true);
    for (const [positive, score] of [
      [true, -0.5],
      [false, 0.5],
      [true, 0],
      [true, 0.05],
      [true, 1.01],
      [true, Number.NaN],
      [true, Number.POSITIVE_INFINITY],
      [true, '0.5'],
      [true, null],
      [false, undefined],
    ] as const) {
      expect(isValidScore(positive, score), `${positive} ${String(score)}`).toBe(false);
      expect(normalizeScore(positive, score)).toBeNull();
    }
    expect(normalizeScore(true, 0.123456)).toBe(0.123);
    expect(normalizeScore(false, -0.6789)).toBe(-0.679);
    expect(normalizeScore(true, 1)).toBe(1);
  });
});

describe('observations: spans and text', () => {
  it('given any answer, when extracted, then text_span is the trimmed sentence, a substring of the text', () => {
    const text = '  Acme is great.   Globex is expensive!\n\n* Initech has excellent support ';
    const obs = extract(text);
    expect(obs.map((o) => o.text_span)).toEqual(['Globex is expensive!', 'Initech has excellent support']);
    for (const o of obs) expect(text.includes(o.text_span)).toBe(true);
  });

  it('given a very long sentence, when extracted, then the span is cut to 500 characters', () => {
    const text = `Acme is expensive ${'and keeps adding options '.repeat(40)}for everyone.`;
    const [o] = extract(text);
    expect(o.text_span.length).toBeLessThanOrEqual(500);
    expect(text.startsWith(o.text_span)).toBe(true);
  });

  it('given abbreviations and domains, when split, then they do not end sentences', () => {
    expect(said('Acme is one of the best, e.g. for support.')).toEqual(['acme/support/0.9']);
    expect(extract('Acme Inc. is praised for support.')[0].text_span).toBe('Acme Inc. is praised for support.');
  });

  it('given a decomposed accent in a name, when extracted, then the entity is found and the span is the composed text', () => {
    const es = compileEntities([{ id: 'mueller', name: 'Müller', is_self: true, url: null }]);
    const text = 'Mu\u0308ller has excellent support.';
    const obs = extractObservations(es, attributes, text);
    expect(obs).toEqual([{ entity_id: 'mueller', attribute_id: 'support', positive: true, score: 0.9, text_span: text.normalize('NFC') }]);
  });

  it('given curly apostrophes and markdown, when extracted, then they read like plain text', () => {
    expect(said('**Acme**’s support isn’t great.')).toEqual(['acme/support/-0.56']);
    expect(said('| Globex | excellent support | expensive |')).toEqual(['globex/support/0.9', 'globex/price/-0.6']);
  });
});

describe('compileAttributes', () => {
  it('given names and descriptions, when compiled, then terms hold the name, meaningful description words and built-in synonyms', () => {
    const [price, support, integrations] = attributes.attributes;
    expect(price.terms).toEqual(
      expect.arrayContaining(['price', 'prices', 'pricing', 'affordable', 'cost', 'cheap', 'expensive', 'value for money']),
    );
    expect(support.terms).toEqual(expect.arrayContaining(['support', 'customer support', 'customer service', 'help desk']));
    expect(support.terms).not.toContain('supports'); // the verb
    expect(support.terms).not.toContain('helpful'); // an evaluative word of the description: a cue, not a term
    expect(integrations.terms).toEqual(expect.arrayContaining(['integrations', 'integration', 'api']));
    const custom = compileAttributes([{ id: 'b', name: 'Battery life', description: 'How long the battery lasts on one charge' }]).attributes[0];
    expect(custom.terms).toEqual(expect.arrayContaining(['battery life', 'battery', 'lasts', 'charge']));
    expect(custom.terms).not.toContain('life');
  });

  it('given an attribute named by a synonym or a phrase, when compiled, then it gets the synonym group', () => {
    const c = compileAttributes([
      { id: 'cost', name: 'Cost' },
      { id: 'svc', name: 'Customer Service' },
      { id: 'ship', name: 'Shipping speed' },
      { id: 'ease', name: 'Ease of use' },
    ]);
    const es = compileEntities([{ id: 'acme', name: 'Acme', is_self: true }]);
    const said2 = (t: string) => extractObservations(es, c, t).map((o) => `${o.attribute_id}/${o.score}`);
    expect(said2('Acme is affordable.')).toEqual(['cost/0.6']);
    expect(said2('Acme has a responsive help desk.')).toEqual(['svc/0.6']);
    expect(said2('Acme has slow delivery.')).toEqual(['ship/-0.6']);
    expect(said2('Acme is very intuitive.')).toEqual(['ease/0.9']);
  });
});

// ---- over many simulated answers ----

const simEntities = compileEntities(
  [SIM_WEBSITE.brand, ...SIM_WEBSITE.competitors].map((e, i) => ({
    id: `e${i}`,
    name: e.name,
    is_self: i === 0,
    identifiers: 'identifiers' in e ? (e.identifiers as string[]) : [],
    url: `https://${e.domain}`,
  })),
);
const simAttributes = compileAttributes(ATTRIBUTES.slice(0, 2));

async function simulatedTexts(): Promise<string[]> {
  const engine = createSimulatedEngine({ seed: 7 });
  const out: string[] = [];
  for (const model of MODEL_IDS)
    for (const prompt of SIM_PROMPTS) for (const day of simDays(6)) out.push((await engine.ask({ model, prompt, day, website: SIM_WEBSITE })).text);
  return out;
}

describe('observations over simulated answers', () => {
  it('given many simulated answers, when extracted, then every score matches its direction and a realistic share speaks of Price and Support', async () => {
    const texts = await simulatedTexts();
    let withPrice = 0;
    let withSupport = 0;
    let positives = 0;
    let negatives = 0;
    for (const text of texts) {
      const obs = extractObservations(simEntities, simAttributes, text);
      const keys = new Set<string>();
      for (const o of obs) {
        expect(typeof o.score).toBe('number');
        expect(isValidScore(o.positive, o.score)).toBe(true);
        expect(Math.sign(o.score!)).toBe(o.positive ? 1 : -1);
        expect(Math.abs(o.score!)).toBeGreaterThanOrEqual(0.1);
        expect(Math.abs(o.score!)).toBeLessThanOrEqual(1);
        expect(text.includes(o.text_span)).toBe(true);
        expect(o.text_span.length).toBeLessThanOrEqual(500);
        const key = `${o.entity_id}/${o.attribute_id}/${o.text_span}`;
        expect(keys.has(key)).toBe(false); // one per (entity, attribute, sentence)
        keys.add(key);
        if (o.positive) positives++;
        else negatives++;
      }
      if (obs.some((o) => o.attribute_id === 'price')) withPrice++;
      if (obs.some((o) => o.attribute_id === 'support')) withSupport++;
    }
    // Price comes up in 2 of the engine's 12 qualities and in "though pricing can be a concern"; Support in 1
    expect(withPrice).toBeGreaterThan(texts.length * 0.2);
    expect(withPrice).toBeLessThan(texts.length * 0.9);
    expect(withSupport).toBeGreaterThan(texts.length * 0.04);
    expect(withSupport).toBeLessThan(texts.length * 0.5);
    expect(positives).toBeGreaterThan(0);
    expect(negatives).toBeGreaterThan(0);
  });

  it('given the same inputs, when extracted again (also after other catalogues), then the same observations', async () => {
    const texts = await simulatedTexts();
    const first = texts.map((t) => extractObservations(simEntities, simAttributes, t));
    // interleave other catalogues and texts: the extractor's reused buffers must not leak between calls
    for (const t of texts.slice(0, 20)) extract(t);
    const again = texts.map((t) => extractObservations(simEntities, compileAttributes(ATTRIBUTES.slice(0, 2)), t));
    expect(again).toEqual(first);
    expect(first.flat().length).toBeGreaterThan(50);
  });

  it('is fast (prints the rate)', async () => {
    const base = await simulatedTexts();
    // ~800-character answers: simulated answers joined
    const texts: string[] = [];
    for (let i = 0; texts.length < 500; i++) {
      let t = '';
      for (let j = i; t.length < 650; j += 7) t += (t ? ' ' : '') + base[j % base.length];
      texts.push(t);
    }
    const chars = texts.reduce((n, t) => n + t.length, 0) / texts.length;
    for (const t of texts) extractObservations(simEntities, simAttributes, t); // warm up
    // enough for a rate to print; the throughput figure itself is bench/observations.ts's (`npm run bench`)
    const n = 5_000;
    let found: ExtractedObservation[] = [];
    let count = 0;
    const started = performance.now();
    for (let i = 0; i < n; i++) {
      found = extractObservations(simEntities, simAttributes, texts[i % texts.length]);
      count += found.length;
    }
    const ms = performance.now() - started;
    console.log(
      `observation extractor: ${Math.round((n / ms) * 1000).toLocaleString('en')} answers/s, ${((ms * 1000) / n).toFixed(1)} µs per answer of ~${Math.round(chars)} characters (${n} answers in ${ms.toFixed(0)} ms)`,
    );
    expect(count).toBeGreaterThan(0);
  });
});
