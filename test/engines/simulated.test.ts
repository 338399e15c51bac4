import { describe, expect, it } from 'vitest';
import { MODEL_IDS, SHOPPING_MODEL_IDS } from '../../src/domain/models';
import { type AnswerRequest, type AnswerResult, EngineError } from '../../src/engines/port';
import { createSimulatedEngine, simulateAnswer } from '../../src/engines/simulated';
import { SIM_PROMPTS, SIM_WEBSITE, simDays } from '../support/engines';

const entities = [SIM_WEBSITE.brand, ...SIM_WEBSITE.competitors];

const req = (extra: Partial<AnswerRequest> = {}): AnswerRequest => ({
  model: MODEL_IDS[0],
  prompt: SIM_PROMPTS[0],
  website: SIM_WEBSITE,
  day: '2025-03-14',
  seed: 7,
  ...extra,
});

const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** Entities the text mentions (name or identifier as a whole word, or domain), in first-occurrence order. */
function mentions(r: AnswerResult): string[] {
  const found: Array<{ name: string; at: number }> = [];
  for (const e of entities) {
    const words = [e.name, ...('identifiers' in e ? (e.identifiers as readonly string[]) : [])].map((w) => new RegExp(`\\b${esc(w)}\\b`, 'i'));
    const ats = [...words.map((re) => r.text.search(re)), r.text.toLowerCase().indexOf(e.domain)].filter((i) => i >= 0);
    if (ats.length) found.push({ name: e.name, at: Math.min(...ats) });
  }
  return found.sort((a, b) => a.at - b.at).map((f) => f.name);
}

function sample(): AnswerResult[] {
  const out: AnswerResult[] = [];
  for (const model of MODEL_IDS)
    for (const prompt of SIM_PROMPTS) for (const day of simDays(8)) out.push(simulateAnswer(req({ model, prompt, day })));
  return out;
}

describe('the simulated engine', () => {
  it('given the same inputs, then the same answer, from any engine instance', async () => {
    const a = await createSimulatedEngine().ask(req());
    const b = await createSimulatedEngine({ seed: 'ignored when the request has one' }).ask(req());
    expect(b).toEqual(a);
    expect(simulateAnswer(req({ location: { country: 'DE', city: 'Berlin' }, persona: { name: 'Team lead' } }))).toEqual(
      simulateAnswer(req({ location: { country: 'DE', city: 'Berlin' }, persona: { name: 'Team lead' } })),
    );
  });

  it('given a different seed, day, model, location or entity set, then a different answer', () => {
    const base = simulateAnswer(req());
    const variants = [
      req({ seed: 8 }),
      req({ day: '2025-03-15' }),
      req({ model: MODEL_IDS[1] }),
      req({ location: { country: 'US', city: 'Denver' } }),
      req({ website: { ...SIM_WEBSITE, competitors: SIM_WEBSITE.competitors.slice(1) } }),
      req({ prompt: SIM_PROMPTS[1] }),
    ];
    for (const v of variants) expect(simulateAnswer(v)).not.toEqual(base);
  });

  it('given the engine default seed, then it is used when the request has none', () => {
    const { seed: _, ...noSeed } = req();
    expect(simulateAnswer(noSeed, 'abc')).toEqual(simulateAnswer({ ...noSeed, seed: 'abc' }));
    expect(simulateAnswer(noSeed, 'abc')).not.toEqual(simulateAnswer(noSeed, 'abd'));
  });

  it('given many answers, then plausible variation: some mention nobody, orders and first places vary, identifiers and domains appear', () => {
    const answers = sample();
    const ms = answers.map(mentions);
    const none = ms.filter((m) => m.length === 0).length;
    expect(none).toBeGreaterThan(answers.length * 0.05);
    expect(none).toBeLessThan(answers.length * 0.6);
    // every entity is mentioned sometimes, and more than one entity comes first
    for (const e of entities) expect(ms.some((m) => m.includes(e.name))).toBe(true);
    expect(new Set(ms.filter((m) => m.length).map((m) => m[0])).size).toBeGreaterThan(2);
    // the brand is not always at the same position
    const brandPositions = new Set(ms.map((m) => m.indexOf(SIM_WEBSITE.brand.name)).filter((p) => p >= 0));
    expect(brandPositions.size).toBeGreaterThan(1);
    const texts = answers.map((a) => a.text).join('\n');
    expect(texts).toMatch(/\bTrello Boards\b|\bAsana Inc\b|\bMondayWorkOS\b|monday\.com Work OS/);
    expect(texts).toMatch(/\b(acmetasks|trello|asana|monday|clickup)\.com\b/);
    // the same prompt across days keeps a recognisable pattern but is not frozen
    const oneSeries = simDays(8).map((day) => simulateAnswer(req({ day })).text);
    expect(new Set(oneSeries).size).toBeGreaterThan(4);
  });

  it('given many answers, then citations on entity domains and third-party sites, with http, www and tracking sometimes', () => {
    const urls = sample().flatMap((a) => a.citations);
    const hosts = urls.map((u) => new URL(u).hostname);
    expect(hosts.some((h) => entities.some((e) => h === e.domain || h.endsWith(`.${e.domain}`)))).toBe(true);
    expect(hosts.some((h) => !entities.some((e) => h === e.domain || h.endsWith(`.${e.domain}`)))).toBe(true);
    expect(urls.some((u) => u.startsWith('http://'))).toBe(true);
    expect(urls.some((u) => u.startsWith('https://www.'))).toBe(true);
    expect(urls.some((u) => /[?&]utm_source=/.test(u))).toBe(true);
    for (const a of sample()) expect(new Set(a.citations).size).toBe(a.citations.length);
    const thirdParty = new Set(hosts.filter((h) => !entities.some((e) => h.endsWith(e.domain))));
    expect(thirdParty.size).toBeGreaterThan(5);
  });

  it('given shopping models, then priced product cards in order on some answers; never on other models', () => {
    const answers = MODEL_IDS.flatMap((model) =>
      SIM_PROMPTS.flatMap((prompt) => simDays(6).map((day) => ({ model, r: simulateAnswer(req({ model, prompt, day })) }))),
    );
    for (const { model, r } of answers) {
      if (!SHOPPING_MODEL_IDS.includes(model)) expect(r.products).toEqual([]);
    }
    const shopping = answers.filter((a) => SHOPPING_MODEL_IDS.includes(a.model));
    const withCards = shopping.filter((a) => a.r.products.length > 0);
    expect(withCards.length).toBeGreaterThan(shopping.length * 0.3);
    const brands = new Set<string>();
    for (const { r } of withCards) {
      r.products.forEach((p, i) => {
        expect(p.position).toBe(i + 1);
        expect(p.price).toBeGreaterThan(0);
        expect(p.currency).toBe('USD');
        expect(p.name).toContain(p.brand!);
        expect(p.merchant).toBeTruthy();
        expect(p.url).toMatch(/^https:\/\//);
        brands.add(p.brand!);
      });
    }
    expect([...brands].some((b) => entities.some((e) => e.name === b))).toBe(true);
    expect([...brands].some((b) => !entities.some((e) => e.name === b))).toBe(true);
  });

  it('given a location, then prices in its currency', () => {
    const cards = simDays(20).flatMap(
      (day) => simulateAnswer(req({ model: SHOPPING_MODEL_IDS[0], day, location: { country: 'GB', city: 'Leeds' } })).products,
    );
    expect(cards.length).toBeGreaterThan(0);
    for (const c of cards) expect(c.currency).toBe('GBP');
  });

  it('given no website, then answers without entities, still with citations', () => {
    const r = simulateAnswer(req({ website: undefined }));
    expect(r.text.length).toBeGreaterThan(20);
    expect(mentions(r)).toEqual([]);
  });

  it('given search-backed models, then retrieved pages include every citation and more, with search queries; other models report none; the same each time', () => {
    const searching = ['perplexity', 'gemini', 'claude', 'chatgpt'] as const;
    for (const model of searching) {
      for (const day of simDays(5)) {
        const r = simulateAnswer(req({ model, day }));
        expect(r.retrieved!.slice(0, r.citations.length)).toEqual(r.citations);
        expect(r.retrieved!.length).toBeGreaterThan(r.citations.length);
        expect(r.search_queries!.length).toBeGreaterThan(0);
        expect(simulateAnswer(req({ model, day }))).toEqual(r);
      }
    }
    const plain = simulateAnswer(req({ model: 'mistral' }));
    expect(plain.retrieved).toBeUndefined();
    expect(plain.search_queries).toBeUndefined();
  });

  it('reports usage and a simulated provider model', () => {
    const r = simulateAnswer(req());
    expect(r.usage.credits).toBe(1);
    expect(r.usage.output_tokens).toBeGreaterThan(0);
    expect(r.provider_model).toMatch(/^simulated\//);
    expect(r.latency_ms).toBeGreaterThan(0);
  });

  it('given a model outside the catalogue, then rejected', async () => {
    await expect(createSimulatedEngine().ask(req({ model: 'gpt-2' }))).rejects.toBeInstanceOf(EngineError);
  });

  it('is fast (prints the rate)', () => {
    // enough for a rate to print; the engine's throughput is measured by the benches that run it (`npm run bench`)
    const n = 10_000;
    const reqs = SIM_PROMPTS.map((prompt) => req({ prompt, location: { country: 'US', city: 'Austin' } }));
    let chars = 0;
    const started = performance.now();
    for (let i = 0; i < n; i++) {
      const r = simulateAnswer({ ...reqs[i & 3], model: MODEL_IDS[i % MODEL_IDS.length], day: i & 1 ? '2025-03-14' : '2025-03-15', seed: i });
      chars += r.text.length;
    }
    const ms = performance.now() - started;
    console.log(`simulated engine: ${Math.round((n / ms) * 1000).toLocaleString('en')} answers/s in-process (${n} answers in ${ms.toFixed(0)} ms)`);
    expect(chars).toBeGreaterThan(0);
  });
});
