import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createOrganization } from '../commands/organizations/create-organization';
import { createWebsite } from '../commands/websites/create-website';
import { loadConfig } from '../src/config';
import { SYSTEM_ACTOR } from '../src/domain/events';
import { isDomainError } from '../src/domain/errors';
import { type App, buildApp } from '../src/http/app';
import type { RateLimiter } from '../src/limits/rate';
import { silentLogger } from '../src/logger';
import type { Outbound } from '../src/net/safe-fetch';
import { openRuntime, type Runtime } from '../src/runtime';
import { openPostgres } from '../src/db';
import { freshDatabase, info, keptDatabase } from './lib';

/** Far above what the load reaches: the per-organization limit would otherwise answer 429 after 600 requests. */
export const BENCH_RATE_LIMIT_PER_MIN = 1_000_000_000;

/** A rate limiter that admits every request: mounted beside the real one, it shows what the limiter costs. */
export const NO_RATE_LIMIT = {
  async hit(_key: string, limit: number) {
    return { allowed: true, limit, remaining: limit, resetAt: 0, retryAfterSeconds: 0 };
  },
} as unknown as RateLimiter;

export interface BenchServer {
  url: string;
  rt: Runtime;
  app: App;
  key: string;
  organizationId: string;
  databaseUrl: string;
  close(): Promise<void>;
}

/** The app listening on 127.0.0.1 (a free port); close() closes it, then its runtime. */
async function listen(app: App, runtime: Runtime): Promise<Pick<BenchServer, 'url' | 'rt' | 'app' | 'close'>> {
  await app.app.listen({ host: '127.0.0.1', port: 0 });
  const addr = app.app.server.address();
  return {
    url: `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`,
    rt: runtime,
    app,
    async close() {
      await app.close();
      await runtime.close();
    },
  };
}

/**
 * The real app (buildApp over a runtime on a fresh bench database, projections running, no bus) on 127.0.0.1, with
 * one organization and `websites` websites. `beforeListen` may add routes to the fastify instance.
 */
export async function startBenchServer(
  websites: number,
  beforeListen?: (a: App) => void | Promise<void>,
  options: {
    natsUrl?: string;
    workers?: boolean;
    join?: Pick<BenchServer, 'databaseUrl' | 'key' | 'organizationId'>;
    env?: Record<string, string>;
    outbound?: Outbound;
    /** a database of this name, created afresh and kept after close (BENCH_DATASET_DB) */
    keep?: string;
  } = {},
): Promise<BenchServer> {
  const config = loadConfig({ LOG_LEVEL: 'silent', RATE_LIMIT_PER_MIN: String(BENCH_RATE_LIMIT_PER_MIN), SCHEDULER: 'off', ...options.env });
  const database = options.join
    ? await openPostgres(options.join.databaseUrl, config.dbPoolMax)
    : options.keep
      ? await keptDatabase(options.keep, true, config.dbPoolMax)
      : await freshDatabase(config.dbPoolMax);
  const databaseUrl = options.join ? options.join.databaseUrl : (database as unknown as { url: string }).url;
  let rt: Runtime | null = null;
  try {
    rt = await openRuntime({ ...config, embedded: false, databaseUrl, natsUrl: options.natsUrl ?? null }, silentLogger(), {
      database,
      withoutBus: !options.natsUrl,
      outbound: options.outbound,
    });
    await rt.startProjections();
    if (options.workers) await rt.startWorkers();
    if (options.join) {
      const app = await buildApp(rt);
      return { ...(await listen(app, rt)), key: options.join.key, organizationId: options.join.organizationId, databaseUrl };
    }
    const org = await createOrganization(rt.store, {
      name: 'Bench Org',
      plan: 'enterprise',
      features: ['pitch', 'knowledge_base', 'shopping', 'ai_search_value'],
      pitch_allowance: 10,
    });
    if (isDomainError(org)) throw new Error(org.message);
    const ctx = { store: rt.store, organizationId: org.result.organization_id, actor: SYSTEM_ACTOR };
    let last = org.position;
    for (let i = 0; i < websites; i++) {
      const w = await createWebsite(ctx, { name: `Shop ${i + 1}`, url: `https://www.shop${i + 1}.example.com/` });
      if (isDomainError(w)) throw new Error(w.message);
      last = w.position;
    }
    // on a loaded machine the read models can take longer than 30 s: a bench on a key they do not hold yet fails obscurely
    if (!(await rt.waitForReadModels(last, 'all', 180_000))) throw new Error('the read models did not catch up with the bench organization in 180 s');
    const app = await buildApp(rt);
    await beforeListen?.(app);
    const listening = await listen(app, rt);
    info(
      `server: buildApp on ${(database as { name?: string }).name}, 1 organization with ${websites} websites, DB_POOL_MAX ${config.dbPoolMax}, RATE_LIMIT_PER_MIN ${BENCH_RATE_LIMIT_PER_MIN} (raised so the load is not answered 429)`,
    );
    return { ...listening, key: org.result.api_key, organizationId: org.result.organization_id, databaseUrl };
  } catch (err) {
    if (rt) await rt.close().catch(() => undefined);
    else await database.close().catch(() => undefined);
    throw err;
  }
}

export interface LoadResult {
  rps: number;
  total: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  p50: number;
  p95: number;
  p99: number;
  statuses: Record<string, number>;
}

/** autocannon in a child process (so the load generator neither shares the server's event loop nor its RSS). */
export function load(opts: { url: string; connections: number; duration: number; headers?: Record<string, string> }): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    const script = fileURLToPath(new URL('./autocannon-worker.mjs', import.meta.url));
    const child = fork(script, [JSON.stringify({ ...opts, pipelining: 1 })], { execArgv: [], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    let answered = false;
    child.once('message', (m: LoadResult & { error?: string }) => {
      answered = true;
      if (m.error) reject(new Error(m.error));
      else resolve(m);
    });
    child.once('error', reject);
    child.once('exit', (code) => {
      if (!answered) reject(new Error(`autocannon exited with ${code} before reporting`));
    });
  });
}
