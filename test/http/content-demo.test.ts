import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { everyListedAnswer } from '../support/answers';
import { call, caughtUp, type TestServer } from '../support/server';
import { until } from '../support/until';
import { type DemoStart, startDemo, untilDemoHistory } from '../support/demo';

/**
 * The demo website has tracked pages (its own and third-party) that its simulated answers cite: on a first start the
 * content listing shows figures, and they are the ones the answers listing (which analyzes each answer's sources when
 * read, sharing nothing with the content read model) gives.
 */
let d: DemoStart;
let s: TestServer;
let key: string;
let demo: string;

beforeAll(async () => {
  d = await startDemo('aivis-content-demo-');
  ({ s, key, demo } = d);
  await untilDemoHistory(d, 150_000, 500);
  await caughtUp(s, ['answers', 'content']);
}, 200_000);
afterAll(() => d?.close());

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
