import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { everyListedAnswer } from '../support/answers';
import { call, caughtUp, type TestServer } from '../support/server';
import { stepwise } from '../support/stepwise';
import { type DemoStart, startDemo, untilDemoHistory } from '../support/demo';

/**
 * The demo website a newcomer sees first is provisioned (its competitors before the website) and given 30 days of
 * simulated answers (here with each append applied on its own, as on a busy server: the catalogue before the website).
 * Its metrics must count each entity in its own column: they are compared with the answers
 * listing, which analyzes each answer's text when it is read and shares nothing with the metric facts.
 */
let d: DemoStart;
let s: TestServer;
let key: string;
let demo: string;

beforeAll(async () => {
  d = await startDemo('aivis-demo-metrics-', stepwise);
  ({ s, key, demo } = d);
  await untilDemoHistory(d, 120_000, 250);
  await caughtUp(s, ['answers']);
}, 180_000);
afterAll(() => d?.close());

describe('the embedded demo website', () => {
  it('given its 30 days of answers, then the brand has a share of voice above zero, and every entity the rates its answers give when read one by one', async () => {
    // every answer as the listing analyzes it
    const mentioned = new Map<string, number>();
    const answers = await everyListedAnswer<{ mentioned: boolean; competitors: { id: string }[] }>(s, key, demo);
    const total = answers.length;
    for (const a of answers) {
      if (a.mentioned) mentioned.set(demo, (mentioned.get(demo) ?? 0) + 1);
      for (const c of a.competitors) mentioned.set(c.id, (mentioned.get(c.id) ?? 0) + 1);
    }
    expect(total).toBeGreaterThan(0);
    const competitors = (await call(s, 'GET', '/api/v1/competitors', { key, query: { website_id: demo } })).body.competitors as {
      id: string;
      name: string;
    }[];
    const idOf = new Map([['Demo Brand', demo], ...competitors.map((c) => [c.name, c.id] as [string, string])]);
    const all = [...mentioned.values()].reduce((a, b) => a + b, 0);
    const pct = (x: number, n: number) => (n === 0 ? 0 : Math.round(((100 * x) / n) * 10_000) / 10_000);

    // the stored facts are in line as written (not set right by the read)
    expect((await call(s, 'GET', '/readyz')).body.sites_out_of_line).toEqual([]);
    const sov = await call(s, 'POST', '/api/v1/metrics/share-of-voice/cumulative', { key, body: { website_id: demo } });
    const rate = await call(s, 'POST', '/api/v1/metrics/mention-rate/cumulative', { key, body: { website_id: demo } });
    expect(sov.status).toBe(200);
    expect(rate.body.responses).toBe(total);
    expect(sov.body.data['Demo Brand'].share_of_voice).toBeGreaterThan(0);
    // the facts read are held within the budget (FACTS_CACHE_MB, 512 by default), and /readyz says so
    const facts = (await call(s, 'GET', '/readyz')).body.facts_cache;
    expect(facts).toMatchObject({ budget_bytes: 512 * 1024 * 1024, websites_held: 1, evictions: 0 });
    expect(facts.held_bytes).toBeGreaterThan(0);
    expect(facts.held_bytes).toBeLessThanOrEqual(facts.budget_bytes);
    expect(Object.keys(sov.body.data).sort()).toEqual([...idOf.keys()].sort());
    for (const [name, id] of idOf) {
      expect(rate.body.data[name].mention_rate, name).toBe(pct(mentioned.get(id) ?? 0, total));
      expect(sov.body.data[name].share_of_voice, name).toBe(pct(mentioned.get(id) ?? 0, all));
    }
  });
});
