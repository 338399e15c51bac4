import { afterAll, afterEach, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Outbound } from '../../src/http/route';
import { createSafeFetcher } from '../../src/net/safe-fetch';
import { startServer, type TestServer, useServer } from '../support/server';
import { useStarted } from '../support/started';
import { useWorld, type World } from '../support/tenancy';
import { allowLoopback, fakeResolver, startFixtureServer, watchConnections } from '../support/net';

export const MCP = '/api/mcp';
/** The endpoint of the public tools, for clients without an account */
export const MCP_PUBLIC = '/api/mcp/public';

/** An SDK client connected over real HTTP (to `path`); headers carry the key (x-api-key or Authorization), or nothing. */
export async function connect(s: { url: string }, headers: Record<string, string> = {}, path = MCP): Promise<Client> {
  const client = new Client({ name: 'aivis-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(path, s.url), { requestInit: { headers } }));
  return client;
}

/**
 * A caller without credentials, for the public tools: it sends each call as one JSON-RPC request without a handshake
 * (the server is stateless, and answers an anonymous `initialize` with 401 and the sign-in challenge). Only what
 * `callTool` uses; a refused request (401, 429 before the tool) throws with the answer's status and error.
 */
export function anonymousCaller(s: { url: string }): Client {
  let id = 0;
  const caller = {
    async callTool(params: { name: string; arguments?: Record<string, unknown> }) {
      const r = await post(s, { jsonrpc: '2.0', id: ++id, method: 'tools/call', params });
      if (r.status !== 200 || !r.body?.result) throw Object.assign(new Error(`HTTP ${r.status}: ${JSON.stringify(r.body)}`), { code: r.status });
      return r.body.result;
    },
    async close() {},
  };
  return caller as unknown as Client;
}

/** One client per set of headers, connected at once; `closeAll` closes them. */
export const connectAll = (s: { url: string }, ...headers: Record<string, string>[]) => Promise.all(headers.map((h) => connect(s, h)));
export const closeAll = async (...clients: (Client | undefined)[]) => {
  await Promise.all(clients.map((c) => c?.close()));
};

/**
 * useWorld with MCP clients: one per entry of `headers` (org A's key and org B's by default), connected once the
 * World is built and closed after the tests, before the server. `ready` receives them with the server and World.
 */
export function useMcpWorld(
  ready: (ctx: { s: TestServer; w: World; clients: Client[] }) => unknown,
  headers: (w: World) => Record<string, string>[] = (w) => [apiKey(w.a.key), apiKey(w.b.key)],
  start?: () => Promise<TestServer>,
): void {
  let clients: Client[] = [];
  useWorld(async ({ s, w }) => {
    clients = await connectAll(s, ...headers(w));
    await ready({ s, w, clients });
  }, start);
  afterAll(() => closeAll(...clients));
}

export const apiKey = (key: string) => ({ 'x-api-key': key });

/** What the tool-area tests share: the server, the World, org A's client, A's client scoped to a1, org B's client. */
export interface AreaClients {
  s: TestServer;
  w: World;
  a: Client;
  scoped: Client;
  b: Client;
  /** A tool error with REST's message and status, and nothing written (toolRefused on this server). */
  refused: (client: Client, name: string, args: Record<string, unknown>, status: number, error: string | RegExp) => Promise<void>;
}

/** useMcpWorld with the three clients a tool area's test compares against REST (org A, A scoped, org B); `start` as useWorld's. */
export function useAreaClients(ready: (ctx: AreaClients) => unknown, start?: () => Promise<TestServer>): void {
  useMcpWorld(
    ({ s, w, clients: [a, scoped, b] }) =>
      ready({ s, w, a, scoped, b, refused: (client, name, args, status, error) => toolRefused(s, client, name, args, status, error) }),
    (w) => [apiKey(w.a.key), apiKey(w.a.scoped), apiKey(w.b.key)],
    start,
  );
}

/** Runs `use` with a client of a new organization `name` that has only the pitch feature (none of the gated areas), closed after. */
export async function withPlainOrganization(s: TestServer, name: string, use: (client: Client) => Promise<void>): Promise<void> {
  const plain = await s.org(name, { features: ['pitch'] });
  const client = await connect(s, apiKey(plain.key));
  try {
    await use(client);
  } finally {
    await client.close();
  }
}
export const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

/**
 * The two refusals of a feature-gated read tool, as tests: the other organization's client gets 403 Unauthorized
 * access to this website, and an organization without the feature gets 403 with the feature's message. `ctx` is read
 * when the tests run (after the suite's setup).
 */
export function itRefusesOthersAndUnfeatured(
  ctx: () => { s: TestServer; other: Client; site: string },
  tool: string,
  gate: { about: string; organization: string; message: string },
): void {
  it("given the other organization's client, then 403 Unauthorized access to this website and no figure", async () => {
    const { other, site } = ctx();
    const r = await callTool(other, tool, { website_id: site });
    expect(r).toMatchObject({ isError: true, text: 'Unauthorized access to this website', structured: { status: 403 } });
  });

  it(`given an organization without ${gate.about}, then 403 with the feature message`, async () => {
    const { s, site } = ctx();
    await withPlainOrganization(s, gate.organization, async (client) => {
      const r = await callTool(client, tool, { website_id: site });
      expect(r).toMatchObject({ isError: true, text: gate.message, structured: { status: 403 } });
    });
  });
}

export async function callTool(client: Client, name: string, args: Record<string, unknown> = {}) {
  const r = (await client.callTool({ name, arguments: args })) as CallToolResult;
  const text = r.content[0]?.type === 'text' ? r.content[0].text : '';
  return { isError: r.isError === true, text, structured: r.structuredContent as any };
}

/** Calls a tool that must succeed (the assertion names the tool and its message) and returns its structured result. */
export async function toolOk(client: Client, name: string, args: Record<string, unknown>) {
  const r = await callTool(client, name, args);
  expect(r.isError, `${name}: ${r.text}`).toBe(false);
  return r.structured;
}

/** Calls a tool that must be refused with `status` and `error` (the text, or a pattern it matches), writing nothing. */
export async function toolRefused(
  s: TestServer,
  client: Client,
  name: string,
  args: Record<string, unknown>,
  status: number,
  error: string | RegExp,
) {
  const before = await s.head();
  const r = await callTool(client, name, args);
  expect(r.isError, `${name}: ${r.text}`).toBe(true);
  expect(r.structured.status).toBe(status);
  if (typeof error === 'string') expect(r.text).toBe(error);
  else expect(r.text).toMatch(error);
  expect(await s.head()).toBe(before);
}

/** A raw POST to the tool server (what an SDK client would refuse to send). */
export const post = (s: { url: string }, body: unknown, headers: Record<string, string> = {}, init: RequestInit = {}) =>
  postTo(s, MCP, body, headers, init);

/** A raw POST to the tool server at `path`. */
export async function postTo(s: { url: string }, path: string, body: unknown, headers: Record<string, string> = {}, init: RequestInit = {}) {
  const res = await fetch(new URL(path, s.url), {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
    ...init,
  });
  const text = await res.text();
  let json: any = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    json = text;
  }
  return { status: res.status, headers: res.headers, body: json };
}

export const ping = (id: number | string = 1) => ({ jsonrpc: '2.0', id, method: 'ping' });

/** An anonymous call of the public tool that spends none of its scans (the domain is refused before any). */
export const publicCall = (id: number | string, params: Record<string, unknown> = {}) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name: 'check_public_ai_access', arguments: { domain: 'localhost' }, ...params },
});

/** Fixed-window limits: start a burst well inside a window so it cannot straddle two. */
export async function awayFromMinuteEdge(marginMs: number): Promise<void> {
  const left = 60_000 - (Date.now() % 60_000);
  if (left < marginMs) await new Promise((r) => setTimeout(r, left + 50));
}

/**
 * One local site standing in for the outside world of the AI access check: `FIXTURE_DOMAIN` resolves to
 * 127.0.0.1 and serves an open robots.txt; every other name does not resolve. Any socket to a non-loopback
 * address is recorded so a test can fail on it.
 */
export const FIXTURE_DOMAIN = 'open.example.com';

export interface FixtureSite {
  outbound: Outbound;
  requests: string[];
  /** addresses other than 127.0.0.1 that any socket tried */
  strayAttempts: string[];
  close(): Promise<void>;
}

export async function fixtureSite(): Promise<FixtureSite> {
  const requests: string[] = [];
  const strayAttempts: string[] = [];
  const stopWatching = watchConnections((ip) => {
    if (ip !== '127.0.0.1') strayAttempts.push(ip);
  });
  const server = await startFixtureServer((req, res) => {
    const host = (req.headers.host ?? '').replace(/:\d+$/, '');
    requests.push(`${host}${req.url}`);
    if (host !== FIXTURE_DOMAIN) return void res.writeHead(421).end();
    if (req.url === '/robots.txt')
      return void res
        .writeHead(200, { 'content-type': 'text/plain' })
        .end(`User-agent: *\nAllow: /\n\nSitemap: https://${FIXTURE_DOMAIN}/sitemap.xml\n`);
    if (req.url === '/') return void res.writeHead(200, { 'content-type': 'text/html', server: 'nginx' }).end('<h1>open</h1>');
    res.writeHead(404).end();
  });
  const resolver = fakeResolver({ [FIXTURE_DOMAIN]: ['127.0.0.1'] });
  return {
    outbound: { fetch: createSafeFetcher({ allowAddress: allowLoopback, resolver }), baseUrl: (d) => `http://${d}:${server.port}` },
    requests,
    strayAttempts,
    async close() {
      stopWatching();
      await server.close();
    },
  };
}

/** The fixture site, a server that fetches through it, and an organization made there with its key. */
export interface FixtureServer {
  site: FixtureSite;
  s: TestServer;
  key: string;
  organizationId: string;
}

/**
 * The fixture site and a server whose outbound fetches go to it, with organization `org`: started before the tests
 * (the site first, closed last; then `ready`), and after each test, no socket tried an address other than the site's.
 */
export function useFixtureServer(org: string, ready: (x: FixtureServer) => unknown): void {
  let site: FixtureSite;
  useStarted(fixtureSite, (x) => (site = x));
  useServer(
    async (s) => {
      const { key, organization_id } = await s.org(org);
      await ready({ site, s, key, organizationId: organization_id });
    },
    () => startServer({}, { outbound: site.outbound }),
  );
  afterEach(() => {
    expect(site.strayAttempts).toEqual([]);
  });
}
