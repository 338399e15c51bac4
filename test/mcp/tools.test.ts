import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { describe, expect, it } from 'vitest';
import { utcDay } from '../../src/domain/dates';
import { type TestServer, sharedServer } from '../support/server';
import type { World } from '../support/tenancy';
import { ANON_REQUESTS_PER_MIN } from '../../src/mcp/server';
import { anonymousCaller, apiKey, awayFromMinuteEdge, bearer, callTool, connect, MCP, ping, post, publicCall, useMcpWorld } from './support';

let s: TestServer;
let w: World;
let global: Client;
useMcpWorld(
  (ctx) =>
    ({
      s,
      w,
      clients: [global],
    } = ctx),
  (w) => [apiKey(w.a.key)],
  sharedServer,
);

const ids = (r: { structured: { websites: { id: string }[] } }) => r.structured.websites.map((x) => x.id).sort();

describe('MCP tool server: authentication', () => {
  it('given a key as x-api-key or as Authorization: Bearer, then both list the websites of the organization', async () => {
    const viaBearer = await connect(s, bearer(w.a.key));
    try {
      const a = await callTool(global, 'list_websites');
      const b = await callTool(viaBearer, 'list_websites');
      expect(a.isError, a.text).toBe(false);
      expect(ids(a)).toEqual([w.a.a1, w.a.a2].sort());
      expect(ids(b)).toEqual(ids(a));
      expect(JSON.parse(a.text)).toEqual(a.structured);
    } finally {
      await viaBearer.close();
    }
  });

  it('given an authenticated client, then every tool is listed with a JSON Schema of its input', async () => {
    const { tools } = await global.listTools();
    const names = tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(['check_ai_access', 'check_public_ai_access', 'get_activity', 'get_website', 'list_websites']));
    expect(new Set(names).size).toBe(names.length);
    for (const t of tools) expect(t.inputSchema.type, t.name).toBe('object');
    const getWebsite = tools.find((t) => t.name === 'get_website')!;
    expect(getWebsite.inputSchema).toMatchObject({ type: 'object', properties: { website_id: { type: 'string' } }, required: ['website_id'] });
  });

  it('given an invalid, malformed or revoked key (either header), then 401 Unauthorized, never anonymous', async () => {
    for (const headers of [
      apiKey(w.a.revoked),
      bearer(w.a.revoked),
      apiKey('aivis_not-a-key'),
      bearer('nope'),
      { authorization: 'Basic dXNlcjpwYXNz' },
    ]) {
      const r = await post(s, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, headers);
      expect(r.status, JSON.stringify(headers)).toBe(401);
      expect(r.body).toEqual({ error: 'Unauthorized' });
    }
    await expect(connect(s, bearer(w.a.revoked))).rejects.toMatchObject({ code: 401 });
  });

  it('given no key, then the public tool works without a handshake; the handshake, listing or a private tool answers 401 asking the client to sign in', async () => {
    // the call reaches the tool, which judges the domain (a reserved name: its own 400, no scan spent)
    const r = await callTool(anonymousCaller(s), 'check_public_ai_access', { domain: 'nonexistent.invalid' });
    expect(r).toMatchObject({
      isError: true,
      text: 'domain must be a public domain (.invalid is reserved for special use)',
      structured: { status: 400 },
    });
    // an SDK client without credentials starts with the handshake, and is asked to sign in there
    await expect(connect(s)).rejects.toMatchObject({ code: 401 });
    for (const body of [
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
      },
      ping(),
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', id: 1, method: 'tools/list' },
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_websites', arguments: {} } },
    ]) {
      const r = await post(s, body);
      expect(r.status).toBe(401);
      expect(r.body).toEqual({ error: 'Unauthorized' });
      expect(r.headers.get('www-authenticate')).toMatch(
        /^Bearer resource_metadata="http:\/\/[^"]+\/\.well-known\/oauth-protected-resource\/api\/mcp"$/,
      );
    }
  });

  it('given an authenticated request, then it carries the organization budget headers like REST', async () => {
    const r = await post(s, ping(), apiKey(w.b.key));
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ jsonrpc: '2.0', id: 1, result: {} });
    expect(r.headers.get('x-rate-limit-limit')).toBe('600');
    expect(Number(r.headers.get('x-rate-limit-remaining'))).toBeLessThan(600);
  });
});

describe('MCP tool server: transport rules', () => {
  it('given a JSON-RPC batch, then 400 with a JSON-RPC error, with or without a key', async () => {
    for (const headers of [{}, apiKey(w.a.key)]) {
      const r = await post(s, [ping(1), ping(2)], headers);
      expect(r.status).toBe(400);
      expect(r.body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Batch requests are not supported' } });
    }
  });

  it('given an anonymous body over 512 KiB, then 413, by Content-Length or by the parsed size of a chunked body', async () => {
    const big = { ...ping(), params: { pad: 'x'.repeat(520 * 1024) } };
    const r = await post(s, big);
    expect(r).toMatchObject({ status: 413, body: { error: 'body is too large' } });

    const text = JSON.stringify(big);
    const chunked = new ReadableStream({
      start(c) {
        c.enqueue(new TextEncoder().encode(text));
        c.close();
      },
    });
    const r2 = await post(s, '', {}, { body: chunked, duplex: 'half' } as RequestInit);
    expect(r2).toMatchObject({ status: 413, body: { error: 'body is too large' } });

    const small = await post(s, publicCall(1, { pad: 'x'.repeat(400 * 1024) }));
    expect(small.status).toBe(200);
    // the 512 KiB limit is the anonymous one: a key's request goes on
    const withKey = await post(s, big, apiKey(w.a.key));
    expect(withKey.status).toBe(200);
  });

  it('given 60 anonymous requests in a minute from one address, then the 61st is 429 with Retry-After; a key is not affected', async () => {
    await awayFromMinuteEdge(5_000);
    // start from a fresh window of this address's budget (earlier tests spent some of it)
    await s.rt.database.db('aivis_rate_limits').where('key', 'like', 'mcp-anon:%').delete();
    for (let i = 0; i < ANON_REQUESTS_PER_MIN; i += 10) {
      const batch = await Promise.all(Array.from({ length: 10 }, (_, j) => post(s, publicCall(i + j))));
      expect(batch.map((r) => r.status)).toEqual(Array(10).fill(200));
    }
    const r = await post(s, publicCall(61));
    expect(r.status).toBe(429);
    expect(r.body).toEqual({ error: 'Too many requests' });
    const retry = Number(r.headers.get('retry-after'));
    expect(retry).toBeGreaterThanOrEqual(1);
    expect(retry).toBeLessThanOrEqual(60);
    expect((await post(s, ping(62), apiKey(w.a.key))).status).toBe(200);
    await s.rt.database.db('aivis_rate_limits').where('key', 'like', 'mcp-anon:%').delete();
  });

  it('given GET or DELETE, then 405 (stateless server: no stream, no session); without credentials 401 with the challenge', async () => {
    for (const method of ['GET', 'DELETE']) {
      const res = await fetch(new URL(MCP, s.url), { method, headers: { accept: 'text/event-stream', ...apiKey(w.a.key) } });
      expect(res.status).toBe(405);
      expect(res.headers.get('allow')).toBe('POST');
      expect(((await res.json()) as { error: unknown }).error).toMatchObject({ code: -32000 });
      // without credentials the sign-in challenge comes first
      const anon = await fetch(new URL(MCP, s.url), { method, headers: { accept: 'text/event-stream' } });
      expect(anon.status).toBe(401);
      expect(anon.headers.get('www-authenticate')).toMatch(/^Bearer resource_metadata="[^"]+\/\.well-known\/oauth-protected-resource\/api\/mcp"$/);
    }
  });
});

describe('MCP tool server: websites and scope', () => {
  it("given another organization's website, then get_website fails with REST's message", async () => {
    const r = await callTool(global, 'get_website', { website_id: w.b.b1 });
    expect(r).toMatchObject({ isError: true, text: 'Unauthorized access to this website', structured: { status: 403 } });
    const mine = await callTool(global, 'get_website', { website_id: w.a.a1 });
    expect(mine.isError, mine.text).toBe(false);
    expect(mine.structured.website).toMatchObject({ id: w.a.a1, name: 'Acme', status: 'active' });
  });

  it('given a key scoped to a2, then it lists a2 only and cannot read a1', async () => {
    const scoped = await connect(s, bearer(w.a.scoped));
    try {
      expect(ids(await callTool(scoped, 'list_websites'))).toEqual([w.a.a2]);
      expect(await callTool(scoped, 'get_website', { website_id: w.a.a1 })).toMatchObject({
        isError: true,
        text: 'Unauthorized access to this website',
      });
      expect((await callTool(scoped, 'get_website', { website_id: w.a.a2 })).isError).toBe(false);
    } finally {
      await scoped.close();
    }
  });

  it('given bad input, then a tool error naming the field as REST does', async () => {
    expect(await callTool(global, 'get_website', {})).toMatchObject({ isError: true, text: 'website_id is required', structured: { status: 400 } });
    expect(await callTool(global, 'get_website', { website_id: 'x' })).toMatchObject({ isError: true, text: 'website_id: must be a UUID' });
    expect(await callTool(global, 'list_websites', { extra: 1 })).toMatchObject({ isError: true, text: 'extra is not allowed' });
    expect(await callTool(global, 'get_website', { website_id: '00000000-0000-4000-8000-000000000000' })).toMatchObject({
      isError: true,
      text: 'Website not found',
      structured: { status: 404 },
    });
  });
});

describe('MCP tool server: get_activity', () => {
  it.each([
    [{ since: '2026-03-05' }],
    [{ since: 'March 5, 2026' }],
    [{ since: '2026-03-05T10:00:00' }],
    [{ since: '5 March 2026', until: 'March 5, 2026' }],
  ])('given %j, then it is accepted', async (args) => {
    const r = await callTool(global, 'get_activity', args);
    expect(r.isError, r.text).toBe(false);
    expect(r.structured).toMatchObject({ page_num: 0, page_size: 40 });
  });

  it.each([
    [{ since: 'yesterday' }, 'since: relative date "yesterday" is not accepted'],
    [{ since: '03/04/2026' }, 'since: ambiguous date "03/04/2026"'],
    [{ until: '2026-03' }, 'until: incomplete date "2026-03"'],
    [{ since: '2026-03-05', until: '2026-03-04' }, 'until (2026-03-04T23:59:59.999Z) is before since (2026-03-05T00:00:00.000Z)'],
    [{ since: 5 }, 'since: must be a string'],
  ])('given %j, then a validation error naming the problem', async (args, message) => {
    const r = await callTool(global, 'get_activity', args);
    expect(r.isError).toBe(true);
    expect(r.text.startsWith(message), r.text).toBe(true);
    expect(r.structured.status).toBe(400);
  });

  it("given a date-only since of today, then today's changes are in; given an until of yesterday, then none are", async () => {
    const now = new Date();
    const all = await callTool(global, 'get_activity', {});
    expect(all.structured.data.length).toBeGreaterThan(0);
    const today = await callTool(global, 'get_activity', { since: utcDay(now), until: utcDay(now) });
    expect(today.structured.data.length).toBe(all.structured.data.length);
    const yesterday = new Date(now.getTime() - 86_400_000);
    const spelled = yesterday.toLocaleDateString('en-US', { month: 'long', day: 'numeric', year: 'numeric', timeZone: 'UTC' });
    const before = await callTool(global, 'get_activity', { until: spelled });
    expect(before.isError, before.text).toBe(false);
    expect(before.structured.data).toEqual([]);
  });

  it('given a non-partner key, then partner keys only, as REST', async () => {
    const plain = await connect(s, apiKey(w.a.plainGlobal));
    try {
      expect(await callTool(plain, 'get_activity', {})).toMatchObject({
        isError: true,
        text: 'Forbidden: partner API key required',
        structured: { status: 403 },
      });
    } finally {
      await plain.close();
    }
  });

  it("given another organization's website_id, then Unauthorized access to this website", async () => {
    expect(await callTool(global, 'get_activity', { website_id: w.b.b1 })).toMatchObject({
      isError: true,
      text: 'Unauthorized access to this website',
    });
  });
});
