import { type Dispatcher, request } from 'undici';
import { afterAll, beforeAll } from 'vitest';
import { createOrganization } from '../../commands/organizations/create-organization';
import { loadConfig } from '../../src/config';
import { isDomainError } from '../../src/domain/errors';
import { type AppOptions, buildApp } from '../../src/http/app';
import { comparePositions, type Position, positionToString } from '../../src/eventstore/port';
import type { ReadModelName } from '../../src/areas';
import { createLogger, silentLogger } from '../../src/logger';
import { openRuntime, type Runtime, type RuntimeOptions, WRITE_WAITS } from '../../src/runtime';
import { freshDatabase } from './db';
import { perWorker } from './per-worker';
import { checkDocumentedShape } from './documented';
import { openPostgres } from '../../src/db';
import { openTestPglite } from './pglite';
import type { Engines } from '../../src/engines/registry';
import type { SafeFetch } from '../../src/net/safe-fetch';
import { OBSERVATION_WORKER } from '../../src/workers/observations';
import { RESPONSE_WORKER } from '../../src/workers/responses';
import { EMAIL_WORKER } from '../../src/workers/email';
import { INVITATION_WORKER } from '../../src/workers/invitations';

export interface TestServer {
  url: string;
  databaseUrl: string | null;
  /**
   * Its runtime. Its `writeWaits` are the server's own copy of WRITE_WAITS, read at each wait: a test of a read model
   * held back past them may shorten them, and puts them back after (a shared server goes on to the worker's next file).
   */
  rt: Runtime;
  close(): Promise<void>;
  /** a new organization with its global partner key */
  org(
    name?: string,
    opts?: Parameters<typeof createOrganization>[1] extends infer I ? Partial<I> : never,
  ): Promise<{ organization_id: string; owner_user_id: string; key: string }>;
  /**
   * A mark of what requests wrote: it moves when an event of a user or key is appended anywhere, or any event of one of
   * `organizations` (for a request whose writes would be the system's, such as accepting an invite). The system's own
   * passes (AI value, schedules, run and job workers, other files' organizations on a shared server) leave it. A refused
   * request must not move it. With `organizations`, it first waits until the workers have nothing in hand (settled).
   */
  head(organizations?: readonly string[]): Promise<string>;
  /** Waits (up to 5 s) until the workers have nothing in hand: a run's answers and end, worker messages, the relay. */
  settled(): Promise<void>;
}

export interface Call {
  key?: string | null;
  body?: unknown;
  query?: Record<string, string | number | boolean | undefined>;
  headers?: Record<string, string>;
}

export interface Answer<T = any> {
  status: number;
  body: T;
  headers: Headers;
}

/** A real server on 127.0.0.1 over a fresh database (real Postgres when DATABASE_URL is set, else PGlite). */
export interface ServerRuntimeOptions {
  /** a real NATS server for the bus (default: the in-process bus) */
  natsUrl?: string;
  /** that bus's settings over infra/nats.json's (e.g. a short ack wait, so that work an instance died holding is redelivered soon) */
  nats?: RuntimeOptions['nats'];
  engines?: Engines;
  now?: () => Date;
  /** the job kinds run and their sweeper's timing (default: every kind; e.g. one whose outbound fetch reaches a local fixture server) */
  jobs?: RuntimeOptions['jobs'];
  /** the job workers' outbound client (a live page on 127.0.0.1) */
  fetch?: SafeFetch;
  /** the webhook dispatcher's client and limits (e.g. few attempts at a time, so that a second instance claims some) */
  webhooks?: RuntimeOptions['webhooks'];
  /** embedded read models and event store (in-memory PGlite) even when DATABASE_URL is set: what `npm start` runs */
  embedded?: boolean;
}

export async function startServer(
  env: Record<string, string> = {},
  appOptions: AppOptions = {},
  join?: TestServer,
  runtime: ServerRuntimeOptions = {},
): Promise<TestServer> {
  // join: a second instance over the same database (real Postgres only)
  const database = join
    ? await openPostgres(join.databaseUrl!)
    : runtime.embedded
      ? { ...(await openTestPglite()), url: null }
      : await freshDatabase(10, { serverSchema: true });
  const config = loadConfig({ DATA_DIR: '/tmp/aivis-unused', LOG_LEVEL: 'silent', SCHEDULER: 'off', ...env });
  // TEST_LOG=error (or any pino level) shows the server's log while debugging a test
  const logger = process.env.TEST_LOG ? createLogger(process.env.TEST_LOG) : silentLogger();
  const rt = await openRuntime({ ...config, embedded: database.kind === 'pglite', natsUrl: runtime.natsUrl ?? null }, logger, {
    database,
    withoutBus: !runtime.natsUrl,
    nats: runtime.nats,
    engines: runtime.engines,
    now: runtime.now,
    outbound: appOptions.outbound,
    jobs: runtime.fetch ? { ...runtime.jobs, fetch: runtime.fetch } : runtime.jobs,
    webhooks: runtime.webhooks,
    writeWaits: { ...WRITE_WAITS },
  });
  await rt.startProjections();
  await rt.startWorkers();
  const { app, close } = await buildApp(rt, appOptions);
  // PORT: a test that needs its public URL known before the start (OAuth's issuer) picks the port itself
  await app.listen({ host: '127.0.0.1', port: env.PORT ? Number(env.PORT) : 0 });
  const addr = app.server.address();
  const url = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
  return {
    url,
    rt,
    databaseUrl: join ? join.databaseUrl : ((database as { url?: string | null }).url ?? null),
    async close() {
      await close();
      await rt.close();
    },
    async org(name = 'Org', opts = {}) {
      const r = await createOrganization(rt.store, {
        name,
        plan: 'enterprise',
        features: ['pitch', 'knowledge_base', 'ai_search_value', 'seo_recommendations', 'shopping'],
        pitch_allowance: 10,
        ...opts,
      });
      if (isDomainError(r)) throw new Error(r.message);
      // the key must be known before a test uses it (an unknown key is 401, and remembered as unknown for 5 s): the
      // runtime's default wait (5 s, then it answers anyway) ran out at load 20 and the first request was refused
      if (!(await rt.waitForReadModels(r.position, 'all', 60_000)))
        throw new Error(`the read models did not catch up with organization ${name} in 60 s`);
      return { organization_id: r.result.organization_id, owner_user_id: r.result.owner_user_id, key: r.result.api_key };
    },
    async head(organizations = []) {
      // users' and keys' events are appended by requests only, before they answer: nothing to wait for
      if (organizations.length) await settled(rt);
      return writtenMark(rt, organizations);
    },
    settled: () => settled(rt),
  };
}

/**
 * Waits until the named read models have passed every event appended so far: for what a write does not wait for, such
 * as the re-derivation of a website's history after a competitor change (its reads are flagged stale meanwhile).
 */
export async function caughtUp(s: TestServer, names: readonly ReadModelName[], timeoutMs = 10_000): Promise<void> {
  if (!(await s.rt.waitForReadModels(await s.rt.store.lastPosition(), names, timeoutMs)))
    throw new Error(`${names.join(', ')} did not catch up in ${timeoutMs} ms`);
}

export async function call<T = any>(s: { url: string }, method: string, path: string, c: Call = {}): Promise<Answer<T>> {
  const u = new URL(path, s.url);
  for (const [k, v] of Object.entries(c.query ?? {})) if (v !== undefined) u.searchParams.set(k, String(v));
  const headers: Record<string, string> = { ...c.headers };
  if (c.key) headers['x-api-key'] = c.key;
  let body: string | undefined;
  if (c.body !== undefined) {
    headers['content-type'] ??= 'application/json';
    body = typeof c.body === 'string' ? c.body : JSON.stringify(c.body);
  }
  // undici's request, not fetch: the same HTTP for a fifth of the client's CPU (fetch's WHATWG streams and headers
  // cost about 0.7 ms of CPU a call, and the suite makes tens of thousands of calls); no redirect is followed
  const res = await request(u, { method: method as Dispatcher.HttpMethod, headers: { accept: '*/*', ...headers }, body });
  const text = await res.body.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    /* not JSON */
  }
  // a documented shape cannot drift from what is sent: every 2xx body is checked against its route's response schema
  checkDocumentedShape(method, u.pathname, res.statusCode, parsed);
  return { status: res.statusCode, body: parsed as T, headers: headersOf(res.headers) };
}

/** A response's headers as fetch gives them (a header sent several times: its values joined by ", "). */
function headersOf(raw: Record<string, string | string[] | undefined>): Headers {
  const h = new Headers();
  for (const [k, v] of Object.entries(raw)) {
    if (v === undefined) continue;
    if (Array.isArray(v)) for (const one of v) h.append(k, one);
    else h.set(k, v);
  }
  return h;
}

/**
 * Waits (up to 5 s) until this instance's workers have nothing in hand: the relay has passed every appended event,
 * no worker message is pending and no finished run still waits for its end to be recorded. A run's answers,
 * observations and end keep arriving after the run's own request returned: what a test that reads them, a mark naming
 * their organization (head) or a shared server handed to the next file waits for.
 */
async function settled(rt: Runtime): Promise<void> {
  const deadline = Date.now() + 5000;
  for (;;) {
    const last = await rt.store.lastPosition();
    await rt.relay.waitFor(last, Math.max(0, deadline - Date.now()));
    await rt.runners.get('runs')?.waitFor(last, Math.max(0, deadline - Date.now()));
    for (const f of rt.followers.values()) await f.waitFor(last, Math.max(0, deadline - Date.now()));
    const backlog = (await Promise.all([RESPONSE_WORKER, OBSERVATION_WORKER, EMAIL_WORKER, INVITATION_WORKER].map((d) => rt.bus.backlog(d)))).reduce(
      (a, b) => a + b,
      0,
    );
    const ends = await rt.database
      .db('rm_run_slots as s')
      .join('rm_runs as r', 'r.id', 's.run_id')
      .whereNull('s.ended_at')
      .whereNotNull('r.finished_at')
      .first('s.run_id');
    const now = await rt.store.lastPosition();
    if ((backlog === 0 && !ends && comparePositions(now, last) === 0) || Date.now() > deadline) return;
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** What writtenMark has read of a runtime's log: how far, the last event of a user or key, each organization's last event. */
interface WrittenLog {
  cursor: Position | null;
  byRequest: string;
  byOrganization: Map<string, string>;
  reading: Promise<unknown>;
}
const writtenLogs = new WeakMap<Runtime, WrittenLog>();

/**
 * head()'s mark: reads the log, as a catch-up reader does (below the read horizon: a late commit is not skipped), from
 * what it read before up to the last event committed when it was asked (a request's events commit before it answers).
 */
async function writtenMark(rt: Runtime, organizations: readonly string[]): Promise<string> {
  let log = writtenLogs.get(rt);
  if (!log) writtenLogs.set(rt, (log = { cursor: null, byRequest: 'none', byOrganization: new Map(), reading: Promise.resolve() }));
  const read = async (l: WrittenLog) => {
    const target = await rt.store.lastPosition();
    if (!l.cursor) {
      // the first mark starts at the log's end: what came before is no request of this check's
      l.cursor = target;
      l.byRequest = `from ${positionToString(target)}`;
      return;
    }
    const deadline = Date.now() + 5000;
    while (comparePositions(l.cursor, target) < 0) {
      const events = await rt.store.readAll(l.cursor, 1000);
      if (events.length === 0) {
        // held below the horizon by a transaction still running: it commits shortly
        if (Date.now() > deadline) throw new Error('head(): the log did not reach its last committed event in 5 s');
        await new Promise((r) => setTimeout(r, 5));
        continue;
      }
      for (const e of events) {
        const at = positionToString(e.position);
        if (e.metadata.actor?.kind !== 'system') l.byRequest = at;
        if (e.metadata.organization_id) l.byOrganization.set(e.metadata.organization_id, at);
        l.cursor = e.position;
      }
    }
  };
  const turn = log.reading.then(() => read(log));
  log.reading = turn.catch(() => undefined);
  await turn;
  return [log.byRequest, ...organizations.map((o) => `${o} ${log.byOrganization.get(o) ?? 'none'}`)].join(' ');
}

/**
 * This file's (or describe's) server: registers the hooks that start it before the tests (`ready` receives it and
 * may prepare more) and close it after them. `start` replaces the plain `startServer()` (env, outbound fetch, ...).
 */
export function useServer(ready: (s: TestServer) => unknown, start: () => Promise<TestServer> = () => startServer()): void {
  let s: TestServer | undefined;
  beforeAll(async () => {
    s = await start();
    await ready(s);
  });
  afterAll(async () => s?.close());
}

/**
 * This test process's plain server (`startServer()`), started by the first file that asks and handed to the worker's
 * next ones (vitest runs a worker's files one after another in one process: isolate false); its `close` waits until
 * the server has nothing in hand, and the server itself closes when no file has taken it over within 3 s (perWorker).
 * Pass it as `start` to `useServer`/`useWorld` only in a file whose tests read nothing but what its own organizations
 * wrote and leave the server as they found it: no count over the whole database or event log, no settings,
 * replaced engines or clock, no restart. A start and close cost about 0.85 s of CPU a file.
 */
export const sharedServer: () => Promise<TestServer> = perWorker(() => startServer(), { release: (s) => settled(s.rt) });

/** Two instances over one database and an organization made on `a`, with its API key. */
export interface TwoInstances {
  a: TestServer;
  b: TestServer;
  key: string;
}

/**
 * Two instances over one database (`b` joins `a`'s; needs a real Postgres server) and organization `org`: started before
 * the tests (then `ready`, for what else the block sets up), `b` closed before `a` after them.
 */
export function useTwoInstances(org: string, ready?: (ctx: TwoInstances) => unknown): TwoInstances {
  const ctx = {} as TwoInstances;
  beforeAll(async () => {
    ctx.a = await startServer();
    ctx.b = await startServer({}, {}, ctx.a);
    ctx.key = (await ctx.a.org(org)).key;
    await ready?.(ctx);
  });
  afterAll(async () => {
    await ctx.b?.close();
    await ctx.a?.close();
  });
  return ctx;
}
