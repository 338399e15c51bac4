import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bootstrapEmbedded } from '../../src/bootstrap';
import type { Runtime } from '../../src/runtime';
import { call, type ServerRuntimeOptions, startServer, type TestServer } from './server';
import { until } from './until';

/** A first embedded start: the server, the demo key it printed, the demo website; `close` also removes its data. */
export interface DemoStart {
  s: TestServer;
  key: string;
  demo: string;
  close(): Promise<void>;
}

/**
 * Starts a server on a fresh data directory (simulated engines) and runs the embedded first start on it, its printed
 * output captured to read the demo key. `runtime` may wrap the runtime the first start writes through; `server` picks
 * the server's runtime (e.g. `embedded: true`, PGlite as `npm start` has it, whatever DATABASE_URL says).
 */
export async function startDemo(
  dirPrefix: string,
  runtime: (rt: Runtime) => Runtime = (rt) => rt,
  server: ServerRuntimeOptions = {},
): Promise<DemoStart> {
  const dataDir = mkdtempSync(join(tmpdir(), dirPrefix));
  let s: TestServer | undefined;
  const close = async () => {
    await s?.close();
    rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    s = await startServer({ DATA_DIR: dataDir, ENGINE_MODE: 'simulated' }, {}, undefined, server);
    const out = process.stdout.write;
    let printed = '';
    process.stdout.write = ((chunk: string) => {
      printed += chunk;
      return true;
    }) as typeof process.stdout.write;
    try {
      await bootstrapEmbedded(runtime(s.rt), s.url);
    } finally {
      process.stdout.write = out;
    }
    const key = /demo key \(global, partner\): (aivis_[0-9A-Za-z]{40})/.exec(printed)![1];
    // the first start waits 5 s for its read models and goes on: at load 24 the key was not known yet (401)
    const demo = await until(
      'the demo website listed',
      async () => {
        const r = await call(s!, 'GET', '/api/v1/websites', { key });
        return r.status === 200 ? (r.body.websites[0]?.id as string | undefined) : undefined;
      },
      120_000,
      500,
    );
    return { s, key, demo, close };
  } catch (e) {
    await close();
    throw e;
  }
}

/** Waits until the demo website has at least 30 finished runs (its simulated history). */
export async function untilDemoHistory({ s, key, demo }: DemoStart, timeoutMs: number, everyMs: number): Promise<void> {
  await until(
    'the demo history',
    async () => {
      const r = await call(s, 'GET', '/api/v1/response-streaming/runs', { key, query: { website_id: demo, page_size: 40 } });
      return r.body.data.filter((x: { status: string }) => x.status !== 'running').length >= 30;
    },
    timeoutMs,
    everyMs,
  );
}
