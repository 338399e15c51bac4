import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { approveBrief } from '../../commands/content/approve-brief';
import { type ContentGenerationRequest, requestContentGeneration } from '../../commands/content/generate-content';
import { contentStream } from '../../commands/content/pipeline';
import { openedMessage } from '../../src/bus/relay';
import { isDomainError } from '../../src/domain/errors';
import { SYSTEM_ACTOR } from '../../src/domain/events';
import { newId } from '../../src/domain/ids';
import { EngineError } from '../../src/engines/port';
import { createEngines, type Engines } from '../../src/engines/registry';
import { createSafeFetcher } from '../../src/net/safe-fetch';
import type { Runtime } from '../../src/runtime';
import { contentJob } from '../../src/workers/content';
import { startJobWorker } from '../../src/workers/jobs';
import { JOB_KINDS } from '../../src/areas';
import { generationRequest } from '../commands/content-events';
import { freshDatabase } from '../support/db';
import { jobEnded, openJobRuntime, streamEvents } from '../support/jobs';
import { until } from '../support/until';

const ORG = newId();
const WEBSITE = newId();
const simulated = createEngines({ mode: 'simulated' });
const request = (over: Partial<ContentGenerationRequest> = {}) => generationRequest(WEBSITE, over);
const ctxOf = (rt: Runtime) => ({ store: rt.store, organizationId: ORG, websiteId: WEBSITE, actor: SYSTEM_ACTOR });
/** A generation whose brief is approved (by a call or at once), then its article: the stream, in order. */
const BRIEF_APPROVED_THEN_ARTICLE = [
  'ContentGenerationRequested',
  'JobStarted',
  'ContentBriefGenerated',
  'CreditsCharged',
  'ContentBriefApproved',
  'ContentArticleGenerated',
  'CreditsCharged',
  'JobSucceeded',
];
const types = async (rt: Runtime, id: string) => (await streamEvents(rt, contentStream(id))).map((e) => e.type);

describe('the content job', () => {
  let rt: Runtime;
  let page: Server;
  let pageUrl = '';
  beforeAll(async () => {
    page = createServer((req, res) => {
      if (req.url === '/missing') {
        res.writeHead(404).end('no');
        return;
      }
      res
        .writeHead(200, { 'content-type': 'text/html' })
        .end('<html><title>CRM</title><body><h1>Acme CRM</h1><p>Simple and cheap.</p></body></html>');
    });
    await new Promise<void>((r) => page.listen(0, '127.0.0.1', r));
    pageUrl = `http://127.0.0.1:${(page.address() as AddressInfo).port}`;
    const fetch = createSafeFetcher({ allowAddress: (ip) => ip === '127.0.0.1' });
    rt = await openJobRuntime(await freshDatabase(), { specs: [contentJob({ engines: simulated, model: 'claude', fetch })] });
  });
  afterAll(async () => {
    await rt?.close();
    await new Promise((r) => page?.close(r));
  });

  it('given a generation, then the brief is written and the job waits; given the approval, then the article is written and the job succeeds', async () => {
    const { result } = await requestContentGeneration(ctxOf(rt), request());
    expect(result).toMatchObject({ status: 'running', stage: 'pending_brief' });
    const id = result.content_id;
    await until('the brief', async () => (await types(rt, id)).includes('ContentBriefGenerated'));
    // waiting for approval: nothing more happens
    await new Promise((r) => setTimeout(r, 300));
    expect(await types(rt, id)).toEqual(['ContentGenerationRequested', 'JobStarted', 'ContentBriefGenerated', 'CreditsCharged']);
    await until('the job read model shows it running', async () => (await rt.database.db('rm_jobs').where('id', id).first())?.status === 'running');

    const approved = await approveBrief(ctxOf(rt), id);
    if (isDomainError(approved)) throw new Error(approved.message);
    expect(await jobEnded(rt, id)).toBe('succeeded');
    const events = await streamEvents(rt, contentStream(id));
    expect(events.map((e) => e.type)).toEqual(BRIEF_APPROVED_THEN_ARTICLE);
    const article = events.find((e) => e.type === 'ContentArticleGenerated')!.data;
    expect(article).toMatchObject({ version_number: 2, model: 'claude' });
    expect(String(article.body)).toMatch(/^# Best CRM for small teams/);
    expect(events.filter((e) => e.type === 'CreditsCharged').map((e) => [e.data.kind, e.data.credits])).toEqual([
      ['content_generation', 1],
      ['content_generation', 4],
    ]);
  });

  it('given auto_approve_brief, then the brief is approved at once and the article follows without a call', async () => {
    const { result } = await requestContentGeneration(ctxOf(rt), request({ auto_approve_brief: true, type: 'snipe' }));
    expect(await jobEnded(rt, result.content_id)).toBe('succeeded');
    expect(await types(rt, result.content_id)).toEqual(BRIEF_APPROVED_THEN_ARTICLE);
  });

  it('given an optimize generation, then the live page is fetched (safe fetcher) and reviewed, and the job succeeds', async () => {
    const url = `${pageUrl}/crm`;
    const { result } = await requestContentGeneration(ctxOf(rt), request({ type: 'optimize', url, normalized_url: url }));
    expect(result.stage).toBe('pending');
    expect(await jobEnded(rt, result.content_id)).toBe('succeeded');
    const events = await streamEvents(rt, contentStream(result.content_id));
    expect(events.map((e) => e.type)).toEqual([
      'ContentGenerationRequested',
      'JobStarted',
      'ContentPageFetched',
      'ContentReviewed',
      'CreditsCharged',
      'JobSucceeded',
    ]);
    expect(events[2].data).toMatchObject({ body: '# Acme CRM\n\nSimple and cheap.', http_status: 200, version_number: 1 });
    expect(String(events[3].data.body)).toContain('Simple and cheap.');
  });

  it('given a live page that answers 404, then the job fails with the reason', async () => {
    const url = `${pageUrl}/missing`;
    const { result } = await requestContentGeneration(ctxOf(rt), request({ type: 'optimize', url, normalized_url: url }));
    expect(await jobEnded(rt, result.content_id)).toBe('failed');
    expect(await rt.database.db('rm_jobs').where('id', result.content_id).first('error_kind', 'error')).toEqual({
      error_kind: 'fetch_failed',
      error: 'The live page could not be fetched: HTTP 404',
    });
  });

  it('given a live page whose host does not resolve, then the job fails with a reason that names neither the URL nor its host (both erasable)', async () => {
    const url = 'https://erasure-marker-q7.invalid/page';
    const { result } = await requestContentGeneration(ctxOf(rt), request({ type: 'optimize', url, normalized_url: url }));
    expect(await jobEnded(rt, result.content_id)).toBe('failed');
    const row = await rt.database.db('rm_jobs').where('id', result.content_id).first('error_kind', 'error');
    expect(row).toEqual({ error_kind: 'fetch_failed', error: 'The live page could not be fetched: its host did not resolve' });
    const failed = (await streamEvents(rt, contentStream(result.content_id))).find((e) => e.type === 'JobFailed');
    expect(JSON.stringify(failed?.data)).not.toContain('erasure-marker-q7');
  });

  it('given a step delivered again after it was recorded, then nothing is appended twice', async () => {
    const { result } = await requestContentGeneration(ctxOf(rt), request({ auto_approve_brief: true }));
    const id = result.content_id;
    expect(await jobEnded(rt, id)).toBe('succeeded');
    const before = await types(rt, id);
    const [e] = (await rt.store.readStream(contentStream(id))).filter((x) => x.type === 'ContentGenerationRequested');
    const msg = openedMessage(e);
    const { createMemoryBus } = await import('../../src/bus/memory');
    const bus = createMemoryBus();
    const other = await startJobWorker(contentJob({ engines: simulated, model: 'claude' }), {
      store: rt.store,
      db: rt.database.db,
      bus,
      logger: rt.logger,
      kinds: JOB_KINDS,
    });
    try {
      await other.advance(msg, { count: 2, maxDeliver: 4 });
    } finally {
      await other.stop();
      await bus.close();
    }
    expect(await types(rt, id)).toEqual(before);
  });
});

describe('the content job: failures and crashes', () => {
  it('given a writer that refuses, then the job fails with the reason and the item is failed', async () => {
    const refusing: Engines = {
      ...simulated,
      engineFor: () => ({
        ask: async () => {
          throw new EngineError('rejected', 'the model refused the request');
        },
      }),
    };
    const rt = await openJobRuntime(await freshDatabase(), { specs: [contentJob({ engines: refusing, model: 'claude' })] });
    try {
      const { result } = await requestContentGeneration(ctxOf(rt), request());
      expect(await jobEnded(rt, result.content_id)).toBe('failed');
      expect(await rt.database.db('rm_jobs').where('id', result.content_id).first('error_kind', 'error')).toEqual({
        error_kind: 'writer_failed',
        error: 'The writer failed: the model refused the request',
      });
    } finally {
      await rt.close();
    }
  });

  it('given an instance that died after writing the brief (its in-process bus with it), then the next instance resumes at the article and writes the brief once', async () => {
    const database = await freshDatabase();
    // the article's writer is down on this instance: its step throws and waits for a redelivery that dies with it
    const down: Engines = {
      ...simulated,
      engineFor: (m) => ({
        ask: async (req) => {
          if (req.prompt.startsWith('aivis writer: article')) throw new EngineError('server', 'the writer is down');
          return simulated.engineFor(m).ask(req);
        },
      }),
    };
    const first = await openJobRuntime(database, {
      specs: [{ ...contentJob({ engines: down, model: 'claude' }), backoffMs: [60_000] }],
      keepDatabase: true,
    });
    const { result } = await requestContentGeneration(ctxOf(first), request({ auto_approve_brief: true }));
    const id = result.content_id;
    await until('the brief', async () => (await types(first, id)).includes('ContentBriefApproved'));
    await new Promise((r) => setTimeout(r, 200));
    await first.close();

    const next = await openJobRuntime(database, { specs: [contentJob({ engines: simulated, model: 'claude' })], staleMs: 500, sweepEveryMs: 200 });
    try {
      expect(await jobEnded(next, id)).toBe('succeeded');
      const all = await types(next, id);
      expect(all.filter((t) => t === 'ContentBriefGenerated')).toHaveLength(1);
      expect(all.filter((t) => t === 'ContentArticleGenerated')).toHaveLength(1);
      expect(all.at(-1)).toBe('JobSucceeded');
    } finally {
      await next.close();
    }
  });
});
