import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { everyListedAnswer } from '../support/answers';
import { call, caughtUp, type TestServer } from '../support/server';
import { stepwise } from '../support/stepwise';
import { until } from '../support/until';
import { type DemoStart, startDemo, untilDemoHistory } from '../support/demo';

/**
 * The demo website a newcomer sees first is provisioned (its competitors before the website) and given 30 days of
 * simulated answers (here with each append applied on its own, as on a busy server: the catalogue before the website).
 * Its metrics must count each entity in its own column: they are compared with the answers
 * listing, which analyzes each answer's text when it is read and shares nothing with the metric facts.
 *
 * It also has tracked pages (its own and third-party) that its simulated answers cite: on a first start the content
 * listing shows figures, and they are the ones the answers listing (which analyzes each answer's sources when read,
 * sharing nothing with the content read model) gives. One demo serves both (its history is most of the file's work).
 */
let d: DemoStart;
let s: TestServer;
let key: string;
let demo: string;

beforeAll(async () => {
  d = await startDemo('aivis-demo-', stepwise);
  ({ s, key, demo } = d);
  await untilDemoHistory(d, 150_000, 250);
  await caughtUp(s, ['answers', 'content']);
}, 200_000);
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

describe('the embedded demo content', () => {
  it('given the demo history, then its tracked pages carry the citation figures the answers listing gives', async () => {
    const cited = new Map<string, number>();
    const answers = await everyListedAnswer<{ sources: { normalized_url: string }[] }>(s, key, demo);
    const total = answers.length;
    for (const a of answers) {
      for (const u of new Set(a.sources.map((x) => x.normalized_url))) cited.set(u, (cited.get(u) ?? 0) + 1);
    }
    const listed = await call(s, 'POST', '/api/v1/content', { key, body: { website_id: demo } });
    expect(listed.status).toBe(200);
    const items = listed.body.content as { normalized_url: string; type: string; citations: number; total_responses: number }[];
    expect(items.length).toBeGreaterThanOrEqual(6);
    expect(new Set(items.map((x) => x.type))).toEqual(new Set(['imported', 'external', 'generated']));
    for (const x of items) {
      expect(x.total_responses).toBe(total);
      expect(x.citations, x.normalized_url).toBe(cited.get(x.normalized_url) ?? 0);
    }
    expect(items.filter((x) => x.type === 'imported' && x.citations > 0).length).toBeGreaterThanOrEqual(2);
    expect(items.filter((x) => x.type === 'external' && x.citations > 0).length).toBeGreaterThanOrEqual(1);
  });

  it('given the demo, then it has one generated draft, written by the simulated writer from its brief', async () => {
    const listed = await call(s, 'POST', '/api/v1/content', { key, body: { website_id: demo, content_type: 'generated' } });
    expect(listed.body.content).toHaveLength(1);
    const id = listed.body.content[0].content_id;
    const draft = await until('the demo draft', async () => {
      const r = await call(s, 'GET', `/api/v1/content/${id}`, { key });
      return r.body.stage === 'generated' ? r.body : undefined;
    });
    expect(draft).toMatchObject({ type: 'generated', pipeline_status: 'succeeded', version_number: 2, url: null });
    expect(draft.title).toMatch(/buyer's guide/);
    expect(draft.brief).toContain('## Outline');
    expect(draft.body).toContain(`# ${draft.title}`);
  });
});
