import type http from 'node:http';
import { createSafeFetcher } from '../../src/net/safe-fetch';
import { allowLoopback, startFixtureServer } from '../support/net';

/** safe-fetch as production builds it, plus the test-only loopback allowance. */
export const loopbackFetch = createSafeFetcher({ allowAddress: allowLoopback });

export interface Hit {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: http.IncomingHttpHeaders;
  raw: string;
  /** Parsed JSON body, or undefined. */
  body: any;
  /** ms since the server started */
  at: number;
}

export interface Reply {
  status?: number;
  headers?: Record<string, string>;
  /** A string is sent as is; anything else as JSON. */
  body?: unknown;
  delayMs?: number;
}

export type Script = Reply | ((hit: Hit, n: number) => Reply);

/**
 * A local provider on 127.0.0.1: records every request, answers from a script (replies taken in
 * order, the last one repeating), and tracks how many requests are in flight at once.
 */
export interface FakeProvider {
  url: string;
  hits: Hit[];
  maxInFlight: number;
  script(...replies: Script[]): void;
  reset(): void;
  close(): Promise<void>;
}

export async function startFakeProvider(): Promise<FakeProvider> {
  const started = performance.now();
  let replies: Script[] = [{ status: 500, body: { error: { message: 'no script' } } }];
  let n = 0;
  let inFlight = 0;
  const state = { hits: [] as Hit[], maxInFlight: 0 };

  const server = await startFixtureServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      let body: unknown;
      try {
        body = raw ? JSON.parse(raw) : undefined;
      } catch {
        body = undefined;
      }
      const u = new URL(req.url ?? '/', 'http://127.0.0.1');
      const hit: Hit = {
        method: req.method ?? '',
        path: u.pathname,
        query: u.searchParams,
        headers: req.headers,
        raw,
        body,
        at: performance.now() - started,
      };
      state.hits.push(hit);
      inFlight++;
      state.maxInFlight = Math.max(state.maxInFlight, inFlight);
      let done = false;
      const finish = () => {
        if (!done) {
          done = true;
          inFlight--;
        }
      };
      res.on('close', finish);
      const script = replies[Math.min(n, replies.length - 1)];
      const reply = typeof script === 'function' ? script(hit, n) : script;
      n++;
      const send = () => {
        if (res.destroyed) return finish();
        const payload = typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body ?? {});
        res.writeHead(reply.status ?? 200, { 'content-type': 'application/json', ...reply.headers });
        res.end(payload, finish);
      };
      if (reply.delayMs) setTimeout(send, reply.delayMs).unref();
      else send();
    });
  });

  return {
    url: server.url,
    get hits() {
      return state.hits;
    },
    get maxInFlight() {
      return state.maxInFlight;
    },
    script(...next: Script[]) {
      replies = next;
      n = 0;
    },
    reset() {
      state.hits.length = 0;
      state.maxInFlight = 0;
      n = 0;
    },
    close: () => server.close(),
  } as FakeProvider;
}
