import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { Knex } from 'knex';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { wordCount } from '../../commands/content/pipeline';
import { PipelineAnswers } from '../../queries/content/versions';
import { EngineError } from '../../src/engines/port';
import { createEngines, type Engines } from '../../src/engines/registry';
import { WHOLE_DOCUMENT_DIRECTIVE } from '../../src/engines/writer';
import { createSafeFetcher } from '../../src/net/safe-fetch';
import { type NatsServerProcess, startNatsServer, storeBytes } from '../bus/nats-server';
import { onRealPostgres } from '../support/db';
import { call, caughtUp, startServer, type TestServer } from '../support/server';
import { importAnswers } from '../support/answers';
import { useWorld, websiteTenancyChecks, type World } from '../support/tenancy';
import { until } from '../support/until';
import { newSite } from '../support/http';
import { grepDatabase } from '../support/db-grep';

/** No check of the schema's size here (see grepDatabase). */
const grep = (db: Knex, needle: string) => grepDatabase(db, needle, { checkColumns: false });

/**
 * The writer: the simulated engine, except that a revision asked for a FRAGMENT answers one (the directive of the
 * retry cures FRAGMENT-ONCE), and a brief for a title with REFUSE is refused: the writer's failures, on demand.
 */
const simulated = createEngines({ mode: 'simulated' });
const writerEngines: Engines = {
  ...simulated,
  engineFor: (model) => ({
    async ask(req) {
      const base = simulated.engineFor(model);
      if (req.prompt.startsWith('aivis writer: brief') && /^Title: .*REFUSE/m.test(req.prompt))
        throw new EngineError('rejected', 'the model refused the request');
      if (req.prompt.startsWith('aivis writer: revise')) {
        const retried = req.prompt.includes(WHOLE_DOCUMENT_DIRECTIVE);
        if (req.prompt.includes('FRAGMENT-ONCE') && !retried) return { ...(await base.ask(req)), text: 'Only a fragment.' };
        if (req.prompt.includes('FRAGMENT-ALWAYS')) return { ...(await base.ask(req)), text: 'Only a fragment.' };
      }
      return base.ask(req);
    },
  }),
};

let page: Server;
let pageUrl = '';
let nats: NatsServerProcess | null = null;
afterAll(async () => {
  await new Promise((r) => (page ? page.close(r) : r(null)));
  await nats?.dispose();
});

/** The server over real Postgres and a private NATS JetStream (the in-process bus on PGlite), with a live page on 127.0.0.1. */
async function start(): Promise<TestServer> {
  page = createServer((req, res) => {
    if (req.url === '/gone') return void res.writeHead(404).end('gone');
    res.writeHead(200, { 'content-type': 'text/html' }).end('<html><body><h1>Acme pricing</h1><p>Plans start at 9 dollars.</p></body></html>');
  });
  await new Promise<void>((r) => page.listen(0, '127.0.0.1', r));
  pageUrl = `http://127.0.0.1:${(page.address() as AddressInfo).port}`;
  if (onRealPostgres) nats = await startNatsServer();
  return startServer({}, {}, undefined, {
    natsUrl: nats?.url,
    engines: writerEngines,
    fetch: createSafeFetcher({ allowAddress: (ip) => ip === '127.0.0.1' }),
  });
}

let s: TestServer;
let w: World;
useWorld((ctx) => ({ s, w } = ctx), start);

const status = (key: string, id: string) => call(s, 'GET', `/api/v1/content/${id}/status`, { key });
async function until200Stage(key: string, id: string, stage: string, pipeline?: string) {
  return until(`content ${id} at ${stage}`, async () => {
    const r = await status(key, id);
    return r.status === 200 && r.body.stage === stage && (pipeline === undefined || r.body.status === pipeline) ? r.body : undefined;
  });
}
async function generate(key: string, body: Record<string, unknown>) {
  const r = await call(s, 'POST', '/api/v1/content/generate', { key, body });
  expect(r.status, JSON.stringify(r.body)).toBe(202);
  return r.body.content_id as string;
}
/** A finished article (brief approved at once): its id. */
async function article(key = w.a.key, website = w.a.a1, title = 'Best CRM for small teams') {
  const id = await generate(key, { website_id: website, title, auto_approve_brief: true });
  await until200Stage(key, id, 'generated', 'succeeded');
  return id;
}
const item = (key: string, id: string) => call(s, 'GET', `/api/v1/content/${id}`, { key });

describe('generation: brief, approval, article', () => {
  it('given a generation, then 202 running at pending_brief; its brief waits for approval (running means waiting); approved, the article is written', async () => {
    const r = await call(s, 'POST', '/api/v1/content/generate', { key: w.a.key, body: { website_id: w.a.a1, title: 'CRM pricing explained' } });
    expect(r.status).toBe(202);
    expect(PipelineAnswers.generated.parse(r.body)).toMatchObject({ status: 'running', stage: 'pending_brief' });
    const id = r.body.content_id;
    expect((await status(w.a.key, id)).body).toMatchObject({ status: 'running' });
    await until200Stage(w.a.key, id, 'generated_brief');
    await new Promise((x) => setTimeout(x, 300));
    expect((await status(w.a.key, id)).body).toEqual({ status: 'running', stage: 'generated_brief', error: null });
    const brief = (await item(w.a.key, id)).body;
    expect(brief).toMatchObject({
      type: 'generated',
      title: 'CRM pricing explained',
      url: null,
      normalized_url: null,
      version_number: 1,
      body: null,
    });
    expect(brief.brief).toContain('# Brief: CRM pricing explained');

    const publish = await call(s, 'POST', `/api/v1/content/${id}/publish`, { key: w.a.key, body: { url: 'https://acme.example.com/crm' } });
    expect(publish).toMatchObject({ status: 409, body: { error: 'Brief is not approved' } });

    const approved = await call(s, 'POST', `/api/v1/content/${id}/brief/approve`, { key: w.a.key });
    expect(approved).toMatchObject({ status: 200, body: { content_id: id, stage: 'pending_article' } });
    await until200Stage(w.a.key, id, 'generated', 'succeeded');
    const done = (await item(w.a.key, id)).body;
    expect(done).toMatchObject({ stage: 'generated', status: 'generated', pipeline_status: 'succeeded', version_number: 2 });
    expect(done.body).toMatch(/^# CRM pricing explained/);
    expect(done.meta_description.length).toBeGreaterThan(10);

    const versions = await call(s, 'GET', `/api/v1/content/${id}/versions`, { key: w.a.key });
    expect(
      versions.body.versions.map((v: { version_number: number; change_type: string; label: string }) => [v.version_number, v.change_type, v.label]),
    ).toEqual([
      [2, 'generated', 'Article generated'],
      [1, 'brief', 'Brief'],
    ]);
    const v1 = await call(s, 'GET', `/api/v1/content/${id}/versions/${versions.body.versions[1].version_id}`, { key: w.a.key });
    expect(v1.body).toMatchObject({ version_number: 1, body: null, brief: brief.brief, change_type: 'brief' });
    const v2 = await call(s, 'GET', `/api/v1/content/${id}/versions/${versions.body.versions[0].version_id}`, { key: w.a.key });
    expect(v2.body).toMatchObject({ version_number: 2, body: done.body, brief: brief.brief, meta_description: done.meta_description });
  });

  it('given topic and prompts, then the writer is told them and the title defaults to the topic; unknown ones answer 404', async () => {
    const topic = await call(s, 'POST', '/api/v1/topics', { key: w.a.key, body: { website_id: w.a.a1, name: 'Invoicing' } });
    expect(topic.status, JSON.stringify(topic.body)).toBeLessThan(300);
    const topicId = topic.body.topic?.id ?? topic.body.id;
    const id = await generate(w.a.key, { website_id: w.a.a1, topic_id: topicId, auto_approve_brief: true, type: 'slice' });
    await until200Stage(w.a.key, id, 'generated', 'succeeded');
    const it = (await item(w.a.key, id)).body;
    expect(it).toMatchObject({ title: 'Invoicing', type: 'slice', topic_id: topicId, topic_name: 'Invoicing' });
    const missing = await call(s, 'POST', '/api/v1/content/generate', {
      key: w.a.key,
      body: { website_id: w.a.a1, topic_id: '00000000-0000-4000-8000-000000000000' },
    });
    expect(missing).toMatchObject({ status: 404, body: { error: 'Topic not found' } });
    const prompt = await call(s, 'POST', '/api/v1/content/generate', {
      key: w.a.key,
      body: { website_id: w.a.a1, prompt_ids: ['00000000-0000-4000-8000-000000000000'] },
    });
    expect(prompt).toMatchObject({ status: 404, body: { error: 'Prompt not found' } });
  });

  it('given bad input, then 400 naming the field and nothing written', async () => {
    const before = await s.head();
    for (const [body, field] of [
      [{ website_id: w.a.a1, type: 'poem' }, 'type'],
      [{ website_id: w.a.a1, type: 'optimize' }, 'url'],
      [{ website_id: w.a.a1, url: 'https://acme.example.com/x' }, 'url'],
      [{ website_id: w.a.a1, mode: 'publish' }, 'mode'],
      [{ website_id: w.a.a1, auto_approve_brief: 'yes' }, 'auto_approve_brief'],
      [{ website_id: w.a.a1, title: 'x'.repeat(301) }, 'title'],
      [{ website_id: w.a.a1, prompt_ids: Array.from({ length: 26 }, () => '00000000-0000-4000-8000-000000000000') }, 'prompt_ids'],
      [{ website_id: w.a.a1, colour: 'red' }, 'colour'],
    ] as const) {
      const r = await call(s, 'POST', '/api/v1/content/generate', { key: w.a.key, body });
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.error).toContain(field);
    }
    expect(await s.head()).toBe(before);
  });

  it('given a writer that refuses, then the item fails with the reason, and publishing it answers 409 Generation failed', async () => {
    const id = await generate(w.a.key, { website_id: w.a.a1, title: 'REFUSE this one' });
    const failed = await until200Stage(w.a.key, id, 'failed', 'failed');
    expect(failed).toEqual({ status: 'failed', stage: 'failed', error: 'The writer failed: the model refused the request' });
    const r = await call(s, 'POST', `/api/v1/content/${id}/publish`, { key: w.a.key, body: { url: 'acme.example.com/refused' } });
    expect(r).toMatchObject({ status: 409, body: { error: 'Generation failed' } });
  });
});

describe('the item around its generation', () => {
  it('given a generated article, then PATCH changes its title; deleted while its brief waits, its job ends (never left running)', async () => {
    const id = await article();
    const patched = await call(s, 'PATCH', `/api/v1/content/${id}`, { key: w.a.key, body: { title: 'Renamed article' } });
    expect(patched).toMatchObject({ status: 200, body: { title: 'Renamed article', stage: 'generated' } });

    const waiting = await generate(w.a.key, { website_id: w.a.a1, title: 'Deleted while waiting' });
    await until200Stage(w.a.key, waiting, 'generated_brief');
    expect((await call(s, 'DELETE', `/api/v1/content/${waiting}`, { key: w.a.key })).status).toBe(200);
    const job = await until('the job to end', async () => {
      const r = await s.rt.database.db('rm_jobs').where('id', waiting).first('status', 'error_kind');
      return r?.status === 'failed' ? r : undefined;
    });
    expect(job).toEqual({ status: 'failed', error_kind: 'deleted' });
    expect((await status(w.a.key, waiting)).status).toBe(404);
  });

  it('given a tracked page deleted, then no job is started on its stream', async () => {
    const tracked = await call(s, 'POST', '/api/v1/content/track', {
      key: w.a.key,
      body: { website_id: w.a.a1, urls: [{ url: `https://acme.example.com/t-${randomUUID()}` }] },
    });
    const id = tracked.body.created[0].content_id;
    expect((await call(s, 'DELETE', `/api/v1/content/${id}`, { key: w.a.key })).status).toBe(200);
    await new Promise((r) => setTimeout(r, 500));
    expect((await s.rt.store.readStream(`content-${id}`)).map((e) => e.type)).toEqual(['ContentTracked', 'ContentDeleted']);
  });
});

describe('optimize', () => {
  it('given an optimize of a live page, then pending and running while the review runs, pending and succeeded after; publishable with its live URL', async () => {
    const id = await generate(w.a.key, { website_id: w.a.a1, type: 'optimize', url: `${pageUrl}/pricing` });
    const first = await status(w.a.key, id);
    expect(first.body.stage).toBe('pending');
    await until200Stage(w.a.key, id, 'pending', 'succeeded');
    const it = (await item(w.a.key, id)).body;
    expect(it).toMatchObject({ type: 'optimize', url: `${pageUrl.replace('http://', '')}/pricing`, normalized_url: null, version_number: 2 });
    expect(it.body).toContain('Plans start at 9 dollars.');
    const versions = (await call(s, 'GET', `/api/v1/content/${id}/versions`, { key: w.a.key })).body.versions;
    expect(versions.map((v: { change_type: string }) => v.change_type)).toEqual(['optimized', 'imported']);
    const r = await call(s, 'POST', `/api/v1/content/${id}/publish`, { key: w.a.key, body: { url: 'https://acme.example.com/pricing' } });
    expect(r).toMatchObject({ status: 200, body: { stage: 'done', already_published: false, normalized_url: 'acme.example.com/pricing' } });
  });

  it('given a live page that is gone, then failed with the reason', async () => {
    const id = await generate(w.a.key, { website_id: w.a.a1, type: 'optimize', url: `${pageUrl}/gone` });
    expect(await until200Stage(w.a.key, id, 'failed', 'failed')).toMatchObject({ error: 'The live page could not be fetched: HTTP 404' });
  });
});

describe('publish', () => {
  it('given a finished article, then done with the time stamped and the URL the join key; again with another URL, only the URL changes', async () => {
    const id = await article();
    const r = await call(s, 'POST', `/api/v1/content/${id}/publish`, {
      key: w.a.key,
      body: { url: 'https://www.acme.example.com/blog/crm/?utm_source=x' },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toMatchObject({
      success: true,
      content_id: id,
      url: 'www.acme.example.com/blog/crm/?utm_source=x',
      normalized_url: 'acme.example.com/blog/crm',
      stage: 'done',
      already_published: false,
    });
    const first = r.body.mark_as_done_time;
    expect((await item(w.a.key, id)).body).toMatchObject({ stage: 'done', normalized_url: 'acme.example.com/blog/crm', mark_as_done_time: first });

    await new Promise((x) => setTimeout(x, 20));
    const again = await call(s, 'POST', `/api/v1/content/${id}/publish`, { key: w.a.key, body: { url: 'acme.example.com/blog/crm-2026' } });
    expect(again.body).toMatchObject({ already_published: true, mark_as_done_time: first, normalized_url: 'acme.example.com/blog/crm-2026' });
    expect((await item(w.a.key, id)).body).toMatchObject({ url: 'acme.example.com/blog/crm-2026', mark_as_done_time: first });
    const same = await call(s, 'POST', `/api/v1/content/${id}/publish`, { key: w.a.key, body: { url: 'acme.example.com/blog/crm-2026' } });
    expect(same.body).toMatchObject({ already_published: true, mark_as_done_time: first });
  });

  it('given a URL another item holds, then 409 naming that item and nothing changes', async () => {
    const one = await article();
    const two = await article();
    expect((await call(s, 'POST', `/api/v1/content/${one}/publish`, { key: w.a.key, body: { url: 'acme.example.com/taken' } })).status).toBe(200);
    const r = await call(s, 'POST', `/api/v1/content/${two}/publish`, { key: w.a.key, body: { url: 'https://acme.example.com/taken/' } });
    expect(r).toMatchObject({
      status: 409,
      body: { error: 'URL is already tracked by another content item', existing: { content_id: one, type: 'generated' } },
    });
    expect((await item(w.a.key, two)).body).toMatchObject({ stage: 'generated', url: null });
  });

  it('given two items published at one URL at once, then one holds it and the other is 409; two approvals at once record one', async () => {
    const [one, two] = await Promise.all([article(), article()]);
    const url = `acme.example.com/race-${randomUUID()}`;
    const both = await Promise.all([one, two].map((id) => call(s, 'POST', `/api/v1/content/${id}/publish`, { key: w.a.key, body: { url } })));
    expect(both.map((r) => r.status).sort()).toEqual([200, 409]);
    const listed = await s.rt.database.db('rm_content').where('normalized_url', url).pluck('content_id');
    expect(listed).toHaveLength(1);

    const waiting = await generate(w.a.key, { website_id: w.a.a1, title: 'Approved twice' });
    await until200Stage(w.a.key, waiting, 'generated_brief');
    const approvals = await Promise.all([1, 2].map(() => call(s, 'POST', `/api/v1/content/${waiting}/brief/approve`, { key: w.a.key })));
    expect(approvals.map((r) => r.status)).toEqual([200, 200]);
    expect((await s.rt.store.readStream(`content-${waiting}`)).filter((e) => e.type === 'ContentBriefApproved')).toHaveLength(1);
    await until200Stage(w.a.key, waiting, 'generated', 'succeeded');
  });

  it('given a bad URL, then 400 naming url', async () => {
    const id = await article();
    const r = await call(s, 'POST', `/api/v1/content/${id}/publish`, { key: w.a.key, body: { url: 'not a url' } });
    expect(r.status).toBe(400);
    expect(r.body.error).toMatch(/^url/);
  });
});

describe('publish: the URL is the citation join key', () => {
  it('given answers citing a page, then a draft counts none of them until it is published there, and all of them after', async () => {
    const site = await newSite(s, w.a.key, 'Joined', 'https://joined.example.com');
    const prompt = (await call(s, 'POST', '/api/v1/prompts', { key: w.a.key, body: { website_id: site, text: 'best joined tool?' } })).body.prompt.id;
    const yesterday = new Date(Date.now() - 86_400_000).toISOString();
    await importAnswers(s, w.a.key, site, [
      {
        prompt_id: prompt,
        model: 'chatgpt',
        run_at: yesterday,
        text: 'Read it.',
        citations: ['https://www.joined.example.com/guide?utm_source=x'],
      },
      { prompt_id: prompt, model: 'claude', run_at: yesterday, text: 'See https://joined.example.com/guide/ for more.', citations: [] },
      { prompt_id: prompt, model: 'gemini', run_at: yesterday, text: 'Nothing.', citations: ['https://elsewhere.example.org/'] },
    ]);
    const id = await article(w.a.key, site, 'The joined guide');
    const figures = async () => {
      const r = await call(s, 'POST', '/api/v1/content', { key: w.a.key, body: { website_id: site } });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      return r.body.content.find((x: { content_id: string }) => x.content_id === id);
    };
    expect(await figures()).toMatchObject({ stage: 'generated', normalized_url: null, citations: 0, total_responses: 3 });
    expect((await call(s, 'POST', `/api/v1/content/${id}/publish`, { key: w.a.key, body: { url: 'https://joined.example.com/guide' } })).status).toBe(
      200,
    );
    expect(await figures()).toMatchObject({
      stage: 'done',
      normalized_url: 'joined.example.com/guide',
      citations: 2,
      total_responses: 3,
      citation_percent: 66.67,
    });
  });
});

describe('erasure', () => {
  it('given a generated item with a unique marker in its versions and revision, when deleted and every projection rebuilt, then the marker is nowhere and its URL tracks again', async () => {
    const id = await article();
    const marker = `pipeline-erasure-marker-${randomUUID()}`;
    const heading = (await item(w.a.key, id)).body.body.split('\n')[0];
    expect(
      (await call(s, 'POST', `/api/v1/content/${id}/edit`, { key: w.a.key, body: { edits: [{ find: heading, replace: `# ${marker}` }] } })).status,
    ).toBe(200);
    expect((await call(s, 'POST', `/api/v1/content/${id}/revise`, { key: w.a.key, body: { instruction: `Say ${marker} again` } })).status).toBe(200);
    const url = `erase-${randomUUID()}.example.com/page`;
    expect((await call(s, 'POST', `/api/v1/content/${id}/publish`, { key: w.a.key, body: { url } })).status).toBe(200);
    const db = s.rt.database.db;
    expect((await grep(db, marker)).sort()).toEqual(['rm_content.body', 'rm_content_versions.body']);
    expect((await call(s, 'DELETE', `/api/v1/content/${id}`, { key: w.a.key })).status).toBe(200);
    expect((await status(w.a.key, id)).status).toBe(404);
    for (const runner of s.rt.runners.values()) await runner.rebuild();
    expect(await grep(db, marker)).toEqual([]);
    expect(await db('rm_content_versions').where('content_id', id).first()).toBeUndefined();
    const again = await call(s, 'POST', '/api/v1/content/track', { key: w.a.key, body: { website_id: w.a.a1, urls: [{ url }] } });
    expect(again.body).toMatchObject({ created_count: 1 });
  }, 90_000);

  it('given items whose titles and URLs carry unique markers (tracked, renamed, optimized, published), when deleted and every projection rebuilt, then no marker is in any table or the NATS store, and the feed says only that they were deleted', async () => {
    const site = await newSite(s, w.a.key);
    const marker = (field: string) => `${field}-${randomUUID()}`;
    const m = {
      trackedTitle: marker('tracked-title'),
      trackedUrl: marker('tracked-url'),
      changedTitle: marker('changed-title'),
      generatedTitle: marker('generated-title'),
      generatedUrl: marker('optimized-url'),
      publishedUrl: marker('published-url'),
    };
    // given: a tracked page, renamed, and an optimize of a live page, published
    const tracked = await call(s, 'POST', '/api/v1/content/track', {
      key: w.a.key,
      body: { website_id: site, urls: [{ url: `https://${m.trackedUrl}.example.com/page`, title: m.trackedTitle }] },
    });
    expect(tracked.status, JSON.stringify(tracked.body)).toBe(200);
    const trackedId = tracked.body.created[0].content_id as string;
    expect((await call(s, 'PATCH', `/api/v1/content/${trackedId}`, { key: w.a.key, body: { title: m.changedTitle } })).status).toBe(200);
    const optimized = await generate(w.a.key, { website_id: site, type: 'optimize', title: m.generatedTitle, url: `${pageUrl}/${m.generatedUrl}` });
    await until200Stage(w.a.key, optimized, 'pending', 'succeeded');
    const published = await call(s, 'POST', `/api/v1/content/${optimized}/publish`, {
      key: w.a.key,
      body: { url: `https://${m.publishedUrl}.example.com/guide` },
    });
    expect(published.status, JSON.stringify(published.body)).toBe(200);
    await caughtUp(s, ['content', 'activity']);
    const db = s.rt.database.db;
    // the item's read rows hold them in clear (the writer put the title in the draft too); the log and the bus only ciphertext
    const held: Record<string, string[]> = {};
    for (const [field, x] of Object.entries(m)) {
      held[field] = (await grep(db, x)).sort();
      for (const hit of held[field]) expect(hit, x).toMatch(/^rm_content(_versions)?\.(title|url|normalized_url|body|meta_description)$/);
      if (nats) expect(storeBytes(nats.storeDir).includes(x), `${x} in the NATS store`).toBe(false);
    }
    expect(held).toMatchObject({
      changedTitle: ['rm_content.title'],
      trackedUrl: ['rm_content.normalized_url', 'rm_content.url'],
      generatedTitle: expect.arrayContaining(['rm_content.title']),
      publishedUrl: ['rm_content.normalized_url', 'rm_content.url'],
    });
    expect((await item(w.a.key, trackedId)).body).toMatchObject({ title: m.changedTitle, url: `${m.trackedUrl}.example.com/page` });
    expect((await item(w.a.key, optimized)).body).toMatchObject({ title: m.generatedTitle, normalized_url: `${m.publishedUrl}.example.com/guide` });
    const taken = await call(s, 'POST', '/api/v1/content/track', {
      key: w.a.key,
      body: { website_id: site, urls: [{ url: `${m.publishedUrl}.example.com/guide` }] },
    });
    expect(taken.body).toMatchObject({ created_count: 0, skipped: [{ content_id: optimized }] });

    // when: both are deleted
    for (const id of [trackedId, optimized]) expect((await call(s, 'DELETE', `/api/v1/content/${id}`, { key: w.a.key })).status).toBe(200);
    await caughtUp(s, ['content', 'activity']);
    const nowhere = async () => {
      for (const x of Object.values(m)) {
        expect(await grep(db, x), x).toEqual([]);
        if (nats) expect(storeBytes(nats.storeDir).includes(x), `${x} in the NATS store`).toBe(false);
      }
    };
    // then: no marker anywhere, in the log or the bus, nor after every projection is rebuilt from the log
    await nowhere();
    for (const runner of s.rt.runners.values()) await runner.rebuild();
    await nowhere();
    expect(await db('rm_content').whereIn('content_id', [trackedId, optimized]).first()).toBeUndefined();
    const feed = await call(s, 'GET', '/api/v1/activity', {
      key: w.a.key,
      query: { website_id: site, entity_type: 'content', change_type: 'deleted' },
    });
    expect(feed.body.data.map((e: { entity_ids: string[] }) => e.entity_ids).sort()).toEqual([[optimized], [trackedId]].sort());
    // and the URLs are free: tracked again, each under a new id
    const again = await call(s, 'POST', '/api/v1/content/track', {
      key: w.a.key,
      body: { website_id: site, urls: [{ url: `${m.trackedUrl}.example.com/page` }, { url: `${m.publishedUrl}.example.com/guide` }] },
    });
    expect(again.body).toMatchObject({ created_count: 2, skipped_count: 0 });
  }, 120_000);
});

describe('edit', () => {
  it('given edits that each match once, then applied in order, one version; a stale expected_version_number is 409; a bad anchor 400 with nothing saved', async () => {
    const id = await article();
    const before = (await item(w.a.key, id)).body;
    const heading = before.body.split('\n')[0] as string;
    const r = await call(s, 'POST', `/api/v1/content/${id}/edit`, {
      key: w.a.key,
      body: {
        edits: [
          { find: heading, replace: '# A new title' },
          { find: '# A new title', replace: '# The final title' },
        ],
        expected_version_number: 2,
      },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const after = (await item(w.a.key, id)).body;
    expect(after.body.split('\n')[0]).toBe('# The final title');
    expect(r.body).toMatchObject({ success: true, version_number: 3, body_word_count: wordCount(after.body) });

    const stale = await call(s, 'POST', `/api/v1/content/${id}/edit`, {
      key: w.a.key,
      body: { edits: [{ find: '# The final title', replace: '# X' }], expected_version_number: 2 },
    });
    expect(stale).toMatchObject({ status: 409, body: { error: 'expected_version_number 2 is stale: the current version is 3' } });

    const head = await s.head();
    const missing = await call(s, 'POST', `/api/v1/content/${id}/edit`, {
      key: w.a.key,
      body: {
        edits: [
          { find: '# The final title', replace: '# Y' },
          { find: 'no such text anywhere', replace: 'z' },
        ],
      },
    });
    expect(missing).toMatchObject({ status: 400, body: { error: 'edits[1].find does not match the current body' } });
    expect(await s.head()).toBe(head);
    expect((await item(w.a.key, id)).body.body).toBe(after.body);
    const versions = (await call(s, 'GET', `/api/v1/content/${id}/versions`, { key: w.a.key })).body.versions;
    expect(versions[0]).toMatchObject({ version_number: 3, change_type: 'edit', label: 'Edited (2 replacements)' });
  });

  it('given two edits racing with the same expected version, then one wins and the other is 409', async () => {
    const id = await article();
    const heading = (await item(w.a.key, id)).body.body.split('\n')[0];
    const both = await Promise.all(
      ['# One', '# Two'].map((t) =>
        call(s, 'POST', `/api/v1/content/${id}/edit`, { key: w.a.key, body: { edits: [{ find: heading, replace: t }], expected_version_number: 2 } }),
      ),
    );
    expect(both.map((r) => r.status).sort()).toEqual([200, 409]);
    expect((await call(s, 'GET', `/api/v1/content/${id}/versions`, { key: w.a.key })).body.versions).toHaveLength(3);
  });

  it('given 21 edits or an empty find, then 400 naming the field', async () => {
    const id = await article();
    const many = Array.from({ length: 21 }, (_, i) => ({ find: `f${i}`, replace: '' }));
    expect((await call(s, 'POST', `/api/v1/content/${id}/edit`, { key: w.a.key, body: { edits: many } })).body.error).toMatch(/^edits/);
    expect((await call(s, 'POST', `/api/v1/content/${id}/edit`, { key: w.a.key, body: { edits: [{ find: '', replace: 'x' }] } })).body.error).toMatch(
      /^edits\.0\.find|^edits\[0\]\.find/,
    );
  });
});

describe('revise', () => {
  it('given an instruction, then the rewrite is saved as the next version with both word counts', async () => {
    const id = await article();
    const draft = (await item(w.a.key, id)).body.body as string;
    const r = await call(s, 'POST', `/api/v1/content/${id}/revise`, { key: w.a.key, body: { instruction: 'Mention the free plan.' } });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toMatchObject({ previous_body_word_count: wordCount(draft), body_word_count: wordCount(r.body.body), version_number: 3 });
    expect(r.body.body).toContain('mention the free plan');
    expect((await item(w.a.key, id)).body.body).toBe(r.body.body);
  });

  it('given a fragment on the first try, then the writer is asked again for the whole document and that is saved', async () => {
    const id = await article();
    const r = await call(s, 'POST', `/api/v1/content/${id}/revise`, { key: w.a.key, body: { instruction: 'Add a FRAGMENT-ONCE note' } });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.body_word_count).toBeGreaterThan(r.body.previous_body_word_count / 2);
    const versions = (await call(s, 'GET', `/api/v1/content/${id}/versions`, { key: w.a.key })).body.versions;
    expect(versions[0]).toMatchObject({ change_type: 'revision', label: 'Revised (whole document asked again)' });
  });

  it('given a fragment twice, then 500 with the reason and the draft unchanged', async () => {
    const id = await article();
    const draft = (await item(w.a.key, id)).body;
    const head = await s.head();
    const r = await call(s, 'POST', `/api/v1/content/${id}/revise`, { key: w.a.key, body: { instruction: 'Add a FRAGMENT-ALWAYS note' } });
    expect(r).toMatchObject({ status: 500, body: { error: 'Revision returned a fragment; the draft is unchanged' } });
    expect(await s.head()).toBe(head);
    expect((await item(w.a.key, id)).body).toMatchObject({ body: draft.body, version_number: 2 });
  });

  it('given an instruction to shorten, then a much shorter text is taken', async () => {
    const id = await article();
    const r = await call(s, 'POST', `/api/v1/content/${id}/revise`, { key: w.a.key, body: { instruction: 'Shorten it to the essentials' } });
    expect(r.status).toBe(200);
    expect(r.body.body_word_count).toBeLessThan(r.body.previous_body_word_count * 0.7);
  });

  it('given no draft yet, then 409 Content is not finished; an empty instruction 400', async () => {
    const id = await generate(w.a.key, { website_id: w.a.a1, title: 'Waiting brief' });
    await until200Stage(w.a.key, id, 'generated_brief');
    expect(await call(s, 'POST', `/api/v1/content/${id}/revise`, { key: w.a.key, body: { instruction: 'x' } })).toMatchObject({
      status: 409,
      body: { error: 'Content is not finished' },
    });
    const empty = await call(s, 'POST', `/api/v1/content/${id}/revise`, { key: w.a.key, body: { instruction: '  ' } });
    expect(empty.status).toBe(400);
    expect(empty.body.error).toMatch(/^instruction/);
  });
});

describe('credits and activity', () => {
  it('given a generation and a revision, then each paid step is charged once, and each change is in the activity feed', async () => {
    const id = await article();
    await call(s, 'POST', `/api/v1/content/${id}/revise`, { key: w.a.key, body: { instruction: 'Add an example.' } });
    const charged = (await s.rt.store.readStream(`content-${id}`)).filter((e) => e.type === 'CreditsCharged').map((e) => e.data);
    expect(charged).toMatchObject([
      { kind: 'content_generation', credits: 1, ref_id: id, website_id: w.a.a1 },
      { kind: 'content_generation', credits: 4, ref_id: id },
      { kind: 'content_revision', credits: 1, ref_id: id },
    ]);
    const changes = await until('the feed', async () => {
      const r = await call(s, 'GET', '/api/v1/activity', { key: w.a.key, query: { website_id: w.a.a1, entity_type: 'content', page_size: 100 } });
      const mine = (r.body.data ?? r.body.activity ?? r.body.entries ?? []).filter((e: { entity_ids: string[] | null }) =>
        e.entity_ids?.includes(id),
      );
      return mine.length >= 5 ? mine.map((e: { change_type: string }) => e.change_type) : undefined;
    });
    expect([...changes].sort()).toEqual(['brief_approved', 'brief_generated', 'generated', 'generation_requested', 'revised']);
  });
});

describe('tenancy', () => {
  let id = '';
  it('given an article of website a1, then another organization gets 404, a key scoped to a2 gets 403, on every item endpoint; nothing written', async () => {
    id = await article();
    const version = (await call(s, 'GET', `/api/v1/content/${id}/versions`, { key: w.a.key })).body.versions[0].version_id;
    const endpoints: [string, string, unknown?][] = [
      ['GET', `/api/v1/content/${id}/status`],
      ['GET', `/api/v1/content/${id}/versions`],
      ['GET', `/api/v1/content/${id}/versions/${version}`],
      ['POST', `/api/v1/content/${id}/brief/approve`, {}],
      ['POST', `/api/v1/content/${id}/publish`, { url: 'acme.example.com/t' }],
      ['POST', `/api/v1/content/${id}/edit`, { edits: [{ find: 'a', replace: 'b' }] }],
      ['POST', `/api/v1/content/${id}/revise`, { instruction: 'x' }],
    ];
    const head = await s.head();
    for (const [method, path, body] of endpoints) {
      expect(await call(s, method, path, { key: w.b.key, body }), `${method} ${path}`).toMatchObject({
        status: 404,
        body: { error: 'Content not found' },
      });
      expect(await call(s, method, path, { key: w.a.scoped, body }), `${method} ${path}`).toMatchObject({
        status: 403,
        body: { error: 'Unauthorized access to this website' },
      });
      expect(await call(s, method, path, { key: null, body }), `${method} ${path}`).toMatchObject({ status: 401 });
      // the website_id sent must be the item's
      const other = method === 'GET' ? { query: { website_id: w.a.a2 } } : { body: { ...(body as object), website_id: w.a.a2 } };
      expect(await call(s, method, path, { key: w.a.key, ...other }), `${method} ${path}`).toMatchObject({ status: 404 });
    }
    expect(await s.head()).toBe(head);
    expect((await call(s, 'GET', `/api/v1/content/00000000-0000-4000-8000-000000000000/status`, { key: w.a.key })).status).toBe(404);
    expect((await call(s, 'GET', `/api/v1/content/${id}/versions/00000000-0000-4000-8000-000000000000`, { key: w.a.key })).body).toEqual({
      error: 'Version not found',
    });
  });

  it('given a key scoped to a2, then it generates on a2', async () => {
    const r = await call(s, 'POST', '/api/v1/content/generate', { key: w.a.scoped, body: { website_id: w.a.a2, title: 'Scoped' } });
    expect(r.status).toBe(202);
    // its brief is written, then it waits: nothing more is appended for it
    await until200Stage(w.a.scoped, r.body.content_id, 'generated_brief');
  });

  it('given a paused website, then its items answer 403', async () => {
    const site = (await call(s, 'POST', '/api/v1/websites', { key: w.a.key, body: { name: 'Paused', url: 'https://paused.example.com' } })).body
      .website.id;
    const pid = await article(w.a.key, site, 'On a paused site');
    expect((await call(s, 'PATCH', `/api/v1/websites/${site}`, { key: w.a.key, body: { status: 'paused' } })).status).toBe(200);
    expect((await status(w.a.key, pid)).status).toBe(403);
    expect((await call(s, 'POST', `/api/v1/content/${pid}/publish`, { key: w.a.key, body: { url: 'paused.example.com/x' } })).status).toBe(403);
  });

  websiteTenancyChecks(() => w, 'POST', '/api/v1/content/generate', { title: 'T' });
});
