/**
 * Scaffolding for tests that make real outbound requests: a guard on every client connection attempt in
 * the process, a local fixture HTTP server on 127.0.0.1, and a resolver that answers from a fixed table
 * (so no test ever asks a real DNS server).
 */
import diagnostics from 'node:diagnostics_channel';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import type { SafeFetcherOptions } from '../../src/net/safe-fetch';

/** The test-only allowance for safe-fetch: the fixture servers on 127.0.0.1, and nothing else non-public. */
export const allowLoopback = (ip: string): boolean => ip === '127.0.0.1';

/**
 * Calls `record` with every address any client socket in this process tries to connect to, from now
 * until the returned function is called.
 */
export function watchConnections(record: (ip: string) => void): () => void {
  const onSocket = (msg: unknown) => (msg as { socket: Socket }).socket.on('connectionAttempt', record);
  diagnostics.subscribe('net.client.socket', onSocket);
  return () => diagnostics.unsubscribe('net.client.socket', onSocket);
}

const LOOPBACK = new Set(['127.0.0.1', '::1']);

/**
 * Registers hooks that record every outgoing connection attempt in this process (the code under test,
 * the test's own client, the database driver) and fail the test that made one to a non-loopback address.
 * `attempts` holds the current test's attempts (cleared after each test), for tests to assert on.
 */
export function guardConnections(): { attempts: string[] } {
  const attempts: string[] = [];
  let stop: (() => void) | undefined;
  beforeAll(() => {
    stop = watchConnections((ip) => attempts.push(ip));
  });
  afterAll(() => {
    stop?.();
    expect(attempts.filter((ip) => !LOOPBACK.has(ip))).toEqual([]);
  });
  afterEach(() => {
    expect(attempts.filter((ip) => !LOOPBACK.has(ip))).toEqual([]);
    attempts.length = 0;
  });
  return { attempts };
}

export interface FixtureServer {
  port: number;
  /** http://127.0.0.1:<port> */
  url: string;
  /** destroys every open connection, then closes the server */
  close(): Promise<void>;
}

/** An HTTP server on 127.0.0.1 on a free port, answering with `handler`; it tracks its sockets so close() never waits on a keep-alive. */
export async function startFixtureServer(handler: http.RequestListener): Promise<FixtureServer> {
  const sockets = new Set<Socket>();
  const server = http.createServer(handler);
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

export type Resolver = NonNullable<SafeFetcherOptions['resolver']>;

/** A resolver that answers from `table` only: any other name fails as getaddrinfo does (ENOTFOUND). */
export function fakeResolver(table: Record<string, string[]>): Resolver {
  return async (hostname) => {
    const found = table[hostname];
    if (!found) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return found;
  };
}
