import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { describe, expect, it } from 'vitest';
import { WRITER_PROMPT_HEAD } from '../../src/engines/writer';
import { EngineError } from '../../src/engines/port';
import { CreditEventsView, CreditUsageView } from '../../queries/credits/views';
import { DiscoveryAcceptView, DiscoveryRunAnswer, DiscoveryRunsView, type DiscoveryRunView } from '../../queries/discovery/views';
import { callTool, toolOk, useAreaClients } from '../mcp/support';
import { importAnswers } from '../support/answers';
import { WRITE_WAITS } from '../../src/runtime';
import { simulatedEnginesWith } from '../support/engines';
import { call, caughtUp, startServer, type TestServer } from '../support/server';
import type { World } from '../support/tenancy';
import { until } from '../support/until';

/** A live writer that answers every proposal request with the same three prompts, while on. */
let writerRepeats = false;
const REPEATED = JSON.stringify(
  ['Is Acme any good?', 'Acme or Zoomer for trail running?', 'Where is Acme sold?'].map((text) => ({
    text,
    source: 'keyword_gaps',
    topic: 'Running shoes',
  })),
);
/** when set, the writer's prompt requests after this many are refused for good */
let writerRefusesAfter: number | null = null;
let writerRequests = 0;
const engines = simulatedEnginesWith(async (_model, req, simulated) => {
  if (writerRefusesAfter !== null && req.prompt.startsWith(`${WRITER_PROMPT_HEAD} prompts`) && ++writerRequests > writerRefusesAfter)
    throw new EngineError('rejected', 'the provider refused the request');
  const answer = await simulated();
  return writerRepeats && req.prompt.startsWith(`${WRITER_PROMPT_HEAD} prompts`) ? { ...answer, text: REPEATED } : answer;
});

let s: TestServer, w: World, a: Client, scoped: Client, b: Client;
let promptId: string;
useAreaClients(
  async (ctx) => {
    ({ s, w, a, scoped, b } = ctx);
    const site = w.a.a1;
    const topic = await call(s, 'POST', '/api/v1/topics', { key: w.a.key, body: { website_id: site, name: 'Running shoes' } });
    const prompt = await call(s, 'POST', '/api/v1/prompts', {
      key: w.a.key,
      body: { website_id: site, text: 'best trail shoes', topic_id: topic.body.topic.id },
    });
    promptId = prompt.body.prompt.id;
    await call(s, 'POST', '/api/v1/competitors', { key: w.a.key, body: { website_id: site, name: 'Zoomer', url: 'https://zoomer.example.org' } });
    await importAnswers(s, w.a.key, site, [
      { prompt_id: promptId, model: 'chatgpt', run_at: new Date(Date.now() - 3_600_000).toISOString(), text: 'Zoomer makes the best trail shoes.' },
      {
        prompt_id: promptId,
        model: 'gemini',
        run_at: new Date(Date.now() - 7_200_000).toISOString(),
        text: 'Acme has a guide.',
        citations: ['https://acme.example.com/guides/running-shoes-for-flat-feet', 'https://other.example.net/x-y'],
      },
    ]);
    await caughtUp(s, ['answers', 'catalog']);
  },
  () => startServer({}, {}, undefined, { engines }),
);

const start = (key: string, body: unknown) => call<any>(s, 'POST', '/api/v1/prompt-discovery/runs', { key, body });
const runs = (key: string, query: Record<string, string | number>) => call<any>(s, 'GET', '/api/v1/prompt-discovery/runs', { key, query });
async function finished(runId: string, websiteId = w.a.a1): Promise<DiscoveryRunView> {
  return until('the run ends', async () => {
    const r = DiscoveryRunsView.parse((await runs(w.a.key, { website_id: websiteId, limit: 20 })).body);
    const run = r.runs.find((x) => x.run_id === runId);
    return run && (run.status === 'succeeded' || run.status === 'failed') ? run : undefined;
  });
}

/** The credits recorded for a run, one amount per charge (global key, last 24 hours). */
async function creditsOf(runId: string): Promise<number[]> {
  await caughtUp(s, ['credits']);
  const page = CreditEventsView.parse(await toolOk(a, 'get_credit_usage_events', { range: '24h', website_id: w.a.a1, page_size: 50 }));
  return page.events.filter((e) => e.ref_id === runId && e.kind === 'prompt_discovery').map((e) => e.credits);
}

/** Text compared for sameness: case, punctuation and spacing aside. */
const normalized = (text: string) =>
  text
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();

/** What every completed run holds: a count within its band, each prompt new to the website and to the run, with its topic and a served source. */
function expectFilledBand(run: DiscoveryRunView, served: readonly string[]) {
  expect(run.prompts.length).toBeGreaterThanOrEqual(run.prompt_count_min);
  expect(run.prompts.length).toBeLessThanOrEqual(run.prompt_count_max);
  expect(run.status).toBe('succeeded');
  expect(run.error).toBeNull();
  const keys = run.prompts.map((p) => normalized(p.text));
  expect(new Set(keys).size).toBe(keys.length);
  expect(keys).not.toContain(normalized('best trail shoes'));
  for (const p of run.prompts) {
    expect(p.topic, p.text).toEqual(expect.any(String));
    expect(served, p.text).toContain(p.source);
  }
}

describe('prompt discovery', () => {
  it("given every source, then a run with the defaults suggests prompts from the site's pages, keyword gaps and the guidelines, lists social and search_console as unavailable with a reason, and charges credits", async () => {
    const r = await start(w.a.key, {
      website_id: w.a.a1,
      name: 'All sources',
      sources: ['website_analysis', 'social', 'search_console', 'keyword_gaps', 'brand_guidelines'],
      custom_instructions: 'We make waterproof trail running shoes.\nHighlight lightweight hiking boots.',
    });
    expect(r.status).toBe(201);
    const created = DiscoveryRunAnswer.parse(r.body).run;
    expect(created).toMatchObject({
      name: 'All sources',
      status: 'queued',
      locale: 'en-US',
      country: 'United States',
      prompt_count_min: 25,
      prompt_count_max: 50,
      prompts: [],
    });
    const run = await finished(created.run_id);
    expectFilledBand(run, ['website_analysis', 'keyword_gaps', 'brand_guidelines']);
    expect(run.unavailable_sources.map((u) => u.source).sort()).toEqual(['search_console', 'social']);
    for (const u of run.unavailable_sources) expect(u.reason).toMatch(/connection/);
    const bySource = (src: string) => run.prompts.filter((p) => p.source === src);
    // each served source's material: the page's subject and the topic, the competitor named instead of the brand, the guidelines
    expect(bySource('website_analysis').length).toBeGreaterThan(0);
    for (const p of bySource('website_analysis')) expect(p.text.toLowerCase()).toMatch(/running shoes/);
    expect(bySource('website_analysis').some((p) => p.text.includes('x y'))).toBe(false);
    expect(bySource('keyword_gaps').length).toBeGreaterThan(0);
    for (const p of bySource('keyword_gaps')) expect(p.text).toMatch(/Zoomer/);
    expect(bySource('keyword_gaps')[0].topic).toBe('Running shoes');
    expect(bySource('brand_guidelines').length).toBeGreaterThan(0);
    for (const p of bySource('brand_guidelines')) expect(p.text.toLowerCase()).toMatch(/waterproof trail running shoes|lightweight hiking boots/);
    // the run's 2 credits and 1 for the writer's one request
    expect((await creditsOf(run.run_id)).sort()).toEqual([1, 2]);
    const usage = CreditUsageView.parse(await toolOk(a, 'get_credit_usage', { range: '24h', website_id: w.a.a1 }));
    expect(usage.by_kind.find((k) => k.kind === 'prompt_discovery')).toMatchObject({ events: 2, credits: 3 });
  });

  it('given a website with one known page and one topic, when a run asks for exactly 30, then the writer is asked again for what its first answer lacked (a prompt the website has) and the run holds 30 new prompts', async () => {
    const r = await start(w.a.key, {
      website_id: w.a.a1,
      name: 'Exactly 30',
      sources: ['website_analysis', 'keyword_gaps'],
      prompt_count_min: 30,
      prompt_count_max: 30,
    });
    const run = await finished(r.body.run.run_id);
    expectFilledBand(run, ['website_analysis', 'keyword_gaps']);
    expect(run.prompts).toHaveLength(30);
    expect(run.unavailable_sources).toEqual([]);
    // two writer requests (1 credit each) and the run's 2
    expect((await creditsOf(run.run_id)).sort()).toEqual([1, 1, 2]);
  });

  it('given a custom band of 60 to 80, then a run holds between 60 and 80 new distinct prompts', async () => {
    const r = await start(w.a.key, {
      website_id: w.a.a1,
      name: 'Wide band',
      sources: ['website_analysis', 'keyword_gaps', 'brand_guidelines'],
      custom_instructions: 'We make waterproof trail running shoes.',
      prompt_count_min: 60,
      prompt_count_max: 80,
    });
    expectFilledBand(await finished(r.body.run.run_id), ['website_analysis', 'keyword_gaps', 'brand_guidelines']);
  });

  it('given a writer that keeps answering the same prompts, then after 4 requests the run fails saying how many it found against prompt_count_min, and the requests are charged', async () => {
    writerRepeats = true;
    let run: DiscoveryRunView;
    try {
      const r = await start(w.a.key, { website_id: w.a.a1, name: 'Repeats', sources: ['keyword_gaps'], prompt_count_min: 5, prompt_count_max: 10 });
      run = await finished(r.body.run.run_id);
    } finally {
      writerRepeats = false;
    }
    expect(run.status).toBe('failed');
    expect(run.error).toBe('The writer proposed 3 new distinct prompts in 4 requests, fewer than prompt_count_min (5)');
    expect(run.prompts).toEqual([]);
    expect(await creditsOf(run.run_id)).toEqual([1, 1, 1, 1]);
  });

  it('given a writer that answers once and then refuses for good, then the run fails with the refusal and the request it answered is charged', async () => {
    writerRefusesAfter = 1;
    writerRequests = 0;
    let run: DiscoveryRunView;
    try {
      const body = { website_id: w.a.a1, name: 'Refused', sources: ['website_analysis', 'keyword_gaps'], prompt_count_min: 30, prompt_count_max: 30 };
      run = await finished((await start(w.a.key, body)).body.run.run_id);
    } finally {
      writerRefusesAfter = null;
    }
    expect(run.status).toBe('failed');
    expect(run.error).toBe('The writer failed: the provider refused the request');
    expect(await creditsOf(run.run_id)).toEqual([1]);
  });

  it('given bad input, then 400 naming the field: brand_guidelines without instructions, no source, unknown source, counts out of order, locale; nothing written', async () => {
    const before = await s.head();
    for (const [body, message] of [
      [{ name: 'x', sources: ['brand_guidelines'] }, 'custom_instructions'],
      [{ name: 'x', sources: ['brand_guidelines'], custom_instructions: '   ' }, 'custom_instructions'],
      [{ name: 'x', sources: [] }, 'sources'],
      [{ name: 'x', sources: ['tiktok'] }, 'sources'],
      [{ name: 'x', sources: ['keyword_gaps', 'keyword_gaps'] }, 'sources'],
      [{ name: 'x', sources: ['keyword_gaps'], prompt_count_min: 40, prompt_count_max: 30 }, 'prompt_count_max'],
      [{ name: 'x', sources: ['keyword_gaps'], prompt_count_max: 101 }, 'prompt_count_max'],
      [{ name: 'x', sources: ['keyword_gaps'], locale: 'english' }, 'locale'],
      [{ sources: ['keyword_gaps'] }, 'name'],
    ] as const) {
      const r = await start(w.a.key, { website_id: w.a.a1, ...body });
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.error, JSON.stringify(body)).toContain(message);
    }
    expect(await s.head()).toBe(before);
    const mcp = await callTool(a, 'start_prompt_discovery', { website_id: w.a.a1, name: 'x', sources: ['brand_guidelines'] });
    expect(mcp.isError).toBe(true);
    expect(mcp.text).toContain('custom_instructions');
  });

  it('given many runs, then the history is newest first, limit default 10 and max 20 (past it 400); MCP answers the same', async () => {
    const site = w.a.a2;
    for (let i = 0; i < 12; i++) expect((await start(w.a.key, { website_id: site, name: `run ${i}`, sources: ['keyword_gaps'] })).status).toBe(201);
    const list = DiscoveryRunsView.parse((await runs(w.a.key, { website_id: site })).body);
    expect(list.runs).toHaveLength(10);
    expect(list.runs[0].name).toBe('run 11');
    expect(DiscoveryRunsView.parse((await runs(w.a.key, { website_id: site, limit: 20 })).body).runs).toHaveLength(12);
    expect((await runs(w.a.key, { website_id: site, limit: 21 })).body.error).toContain('limit');
    expect((await runs(w.a.key, { website_id: site, limit: 0 })).status).toBe(400);
    const viaMcp = DiscoveryRunsView.parse(await toolOk(scoped, 'get_prompt_discovery_runs', { website_id: site, limit: 3 }));
    expect(viaMcp.runs.map((r) => r.name)).toEqual(['run 11', 'run 10', 'run 9']);
    const started = DiscoveryRunAnswer.parse(
      await toolOk(scoped, 'start_prompt_discovery', { website_id: site, name: 'via mcp', sources: ['website_analysis'] }),
    );
    expect(started.run.status).toBe('queued');
    const done = await finished(started.run.run_id, site);
    // nothing of a2 is known: the run fails with why the source gave nothing, and no writer request is made
    expect(done.status).toBe('failed');
    expect(done.error).toBe(
      'No source has material to propose prompts from: website_analysis: no pages of the website are known yet (none is cited in its answers) and it has no topics',
    );
    expect(done.prompts).toEqual([]);
  });

  it('given a finished run, when suggestions are accepted, then they become prompts (filed under their topic), again is the same prompts, bad indices 400; the activity feed has it', async () => {
    const r = await start(w.a.key, { website_id: w.a.a1, name: 'To accept', sources: ['keyword_gaps'] });
    const run = await finished(r.body.run.run_id);
    expect(run.prompts.length).toBeGreaterThan(2);
    const accept = (key: string, body: unknown, id = run.run_id) => call<any>(s, 'POST', `/api/v1/prompt-discovery/runs/${id}/accept`, { key, body });
    const ok = await accept(w.a.key, { indices: [0, 2] });
    expect(ok.status).toBe(200);
    const made = DiscoveryAcceptView.parse(ok.body);
    expect(made.prompts.map((p) => p.text)).toEqual([run.prompts[0].text, run.prompts[2].text]);
    const topics = await call(s, 'GET', '/api/v1/topics', { key: w.a.key, query: { website_id: w.a.a1 } });
    const topicId = topics.body.data.find((t: any) => t.name === 'Running shoes').id;
    expect(made.prompts[0].topic_id).toBe(topicId);
    const prompts = await call(s, 'GET', '/api/v1/prompts', { key: w.a.key, query: { website_id: w.a.a1 } });
    const listed = JSON.stringify(prompts.body);
    expect(listed).toContain(run.prompts[0].text);
    const again = DiscoveryAcceptView.parse((await accept(w.a.key, { indices: [2, 0] })).body);
    expect(again.prompts.map((p) => p.prompt_id).sort()).toEqual(made.prompts.map((p) => p.prompt_id).sort());
    const list = DiscoveryRunsView.parse((await runs(w.a.key, { website_id: w.a.a1, limit: 20 })).body);
    expect(list.runs.find((x) => x.run_id === run.run_id)?.accepted_indices).toEqual([0, 2]);
    expect((await accept(w.a.key, { indices: [run.prompts.length] })).body.error).toContain('indices');
    expect((await accept(w.a.key, { indices: [] })).status).toBe(400);
    expect((await accept(w.a.key, { indices: [1, 1] })).status).toBe(400);
    expect((await accept(w.a.key, { indices: [1], website_id: w.a.a2 })).status).toBe(404);
    expect((await accept(w.b.key, { indices: [1] })).status).toBe(404);
    expect((await accept(w.a.scoped, { indices: [1] })).body).toEqual({ error: 'Unauthorized access to this website' });
    await caughtUp(s, ['activity']);
    const feed = await call(s, 'GET', '/api/v1/activity', { key: w.a.key, query: { entity_type: 'prompt_discovery_run', change_type: 'accepted' } });
    expect(feed.body.data.length).toBeGreaterThanOrEqual(1);
  });

  it('given the runs read model held back past the wait, when a run is started, then 503 says the change is recorded and the run is listed once the read model catches up', async () => {
    // given
    const runner = s.rt.runners.get('discovery')!;
    await runner.stop();
    // waits of 0.5 s and 1 s instead of 5 s and 20 s: the read model is stopped, so the 503 comes after both
    Object.assign(s.rt.writeWaits, { usualMs: 500, readBackMs: 1000 });
    let r: Awaited<ReturnType<typeof start>>;
    try {
      // when
      r = await start(w.a.key, { website_id: w.a.a1, name: 'Held back', sources: ['keyword_gaps'] });
    } finally {
      Object.assign(s.rt.writeWaits, WRITE_WAITS);
      await runner.start();
    }
    // then
    expect(r.status).toBe(503);
    expect(r.body).toEqual({ error: 'The change is recorded but cannot be read yet: read it again shortly' });
    const listed = await until('the run is listed', async () => {
      const all = DiscoveryRunsView.parse((await runs(w.a.key, { website_id: w.a.a1, limit: 20 })).body).runs;
      return all.find((x) => x.name === 'Held back');
    });
    await finished(listed.run_id);
  }, 120_000);

  it("given tenancy, then another organization's website is 403 and a scoped key reaches its own website only (REST and tools)", async () => {
    expect((await start(w.b.key, { website_id: w.a.a1, name: 'x', sources: ['keyword_gaps'] })).body).toEqual({
      error: 'Unauthorized access to this website',
    });
    expect((await start(w.a.scoped, { website_id: w.a.a1, name: 'x', sources: ['keyword_gaps'] })).status).toBe(403);
    expect((await runs(w.b.key, { website_id: w.a.a1 })).status).toBe(403);
    // the scoped key's other website: neither its history nor a run through the tools
    expect((await runs(w.a.scoped, { website_id: w.a.a1 })).body).toEqual({ error: 'Unauthorized access to this website' });
    const scopedStart = await callTool(scoped, 'start_prompt_discovery', { website_id: w.a.a1, name: 'x', sources: ['keyword_gaps'] });
    expect(scopedStart.text).toBe('Unauthorized access to this website');
    expect((await callTool(scoped, 'get_prompt_discovery_runs', { website_id: w.a.a1 })).text).toBe('Unauthorized access to this website');
    const other = await callTool(b, 'get_prompt_discovery_runs', { website_id: w.a.a1 });
    expect(other.text).toBe('Unauthorized access to this website');
    expect((await runs(w.a.revoked, { website_id: w.a.a1 })).status).toBe(401);
  });
});
