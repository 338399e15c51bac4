import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { describe, expect, it } from 'vitest';
import { PUBLIC_SCANS_PER_MIN } from '../../src/app/ai-access';
import { ANON_REQUESTS_PER_MIN } from '../../src/mcp/server';
import type { TestServer } from '../support/server';
import {
  anonymousCaller,
  apiKey,
  awayFromMinuteEdge,
  bearer,
  callTool,
  connect,
  FIXTURE_DOMAIN,
  type FixtureSite,
  MCP_PUBLIC,
  ping,
  postTo,
  publicCall,
  useFixtureServer,
} from './support';

/**
 * `/api/mcp/public`: a standard MCP client without an account (the SDK's Client over Streamable HTTP) initializes,
 * lists and calls the public tools there, under the anonymous limits; `/api/mcp` keeps asking it to sign in.
 */

let site: FixtureSite;
let s: TestServer;
let key: string;
useFixtureServer('Public endpoint', (x) => ({ site, s, key } = x));

/** Starts this address's anonymous budgets afresh (requests, and the public tool's scans), away from a minute's edge. */
async function freshBudgets() {
  await awayFromMinuteEdge(15_000);
  await s.rt.database.db('aivis_rate_limits').where('key', 'like', 'mcp-anon:%').orWhere('key', 'like', 'ai-access:public:%').delete();
}

async function withPublicClient(headers: Record<string, string>, use: (client: Client) => Promise<void>) {
  const client = await connect(s, headers, MCP_PUBLIC);
  try {
    await use(client);
  } finally {
    await client.close();
  }
}

const initialize = (id: number) => ({
  jsonrpc: '2.0',
  id,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
});

describe('MCP public endpoint: a client without an account', () => {
  it('given the SDK client without credentials, then it initializes, lists only the public tool and checks a domain with it', async () => {
    await freshBudgets();
    await withPublicClient({}, async (client) => {
      expect(client.getInstructions()).toContain('/api/mcp');
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toEqual(['check_public_ai_access']);
      expect(tools[0]).toMatchObject({ annotations: { readOnlyHint: true }, inputSchema: { type: 'object', required: ['domain'] } });

      const r = await callTool(client, 'check_public_ai_access', { domain: `https://${FIXTURE_DOMAIN}/` });
      expect(r.isError, r.text).toBe(false);
      expect(r.structured.result).toMatchObject({ domain: FIXTURE_DOMAIN, status: 'accessible', hasSitemap: true });
      expect(site.requests).toContain(`${FIXTURE_DOMAIN}/robots.txt`);
      expect(await callTool(client, 'check_public_ai_access', { domain: 'localhost' })).toMatchObject({
        isError: true,
        text: 'domain must be a public domain, not localhost',
        structured: { status: 400 },
      });
      await expect(client.callTool({ name: 'list_websites', arguments: {} })).rejects.toThrow(/Tool list_websites not found/);
    });
  });

  it('given a key (either header, valid or not) sent to the public endpoint, then it is not read: still only the public tool', async () => {
    await freshBudgets();
    for (const headers of [apiKey(key), bearer(key), apiKey('aivis_not-a-key')]) {
      await withPublicClient(headers, async (client) => {
        expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['check_public_ai_access']);
        await expect(client.callTool({ name: 'list_websites', arguments: {} })).rejects.toThrow(/Tool list_websites not found/);
        await expect(client.callTool({ name: 'check_ai_access', arguments: { domain: FIXTURE_DOMAIN } })).rejects.toThrow(
          /Tool check_ai_access not found/,
        );
      });
    }
    // the same key at /api/mcp lists everything: the public endpoint is what held the tools back
    const signedIn = await connect(s, apiKey(key));
    try {
      expect((await signedIn.listTools()).tools.map((t) => t.name)).toContain('list_websites');
    } finally {
      await signedIn.close();
    }
  });

  it('given GET or DELETE, then 405 (a stateless server) and no sign-in challenge', async () => {
    await freshBudgets();
    for (const method of ['GET', 'DELETE']) {
      const res = await fetch(new URL(MCP_PUBLIC, s.url), { method, headers: { accept: 'text/event-stream' } });
      expect(res.status).toBe(405);
      expect(res.headers.get('allow')).toBe('POST');
      expect(res.headers.get('www-authenticate')).toBeNull();
    }
  });
});

describe('MCP public endpoint: the anonymous limits', () => {
  it(`given ${ANON_REQUESTS_PER_MIN} requests in a minute from one address, then the next is 429 with Retry-After, a key included`, async () => {
    await freshBudgets();
    const bodies = [initialize, (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/list' }), publicCall];
    for (let i = 0; i < ANON_REQUESTS_PER_MIN; i += 10) {
      const batch = await Promise.all(Array.from({ length: 10 }, (_, j) => postTo(s, MCP_PUBLIC, bodies[(i + j) % 3](i + j))));
      expect(batch.map((r) => r.status)).toEqual(Array(10).fill(200));
    }
    for (const headers of [{}, apiKey(key)]) {
      const r = await postTo(s, MCP_PUBLIC, ping(61), headers);
      expect(r.status).toBe(429);
      expect(r.body).toEqual({ error: 'Too many requests' });
      const retry = Number(r.headers.get('retry-after'));
      expect(retry).toBeGreaterThanOrEqual(1);
      expect(retry).toBeLessThanOrEqual(60);
    }
    await expect(connect(s, {}, MCP_PUBLIC)).rejects.toMatchObject({ code: 429 });
    await freshBudgets();
  });

  it(`given ${PUBLIC_SCANS_PER_MIN} scans in a minute from one address across /api/mcp/public and /api/mcp, then the next is refused on both`, async () => {
    await freshBudgets();
    const viaMcp = anonymousCaller(s);
    await withPublicClient({}, async (client) => {
      for (let i = 0; i < PUBLIC_SCANS_PER_MIN; i++) {
        const r = await callTool(i % 2 ? viaMcp : client, 'check_public_ai_access', { domain: FIXTURE_DOMAIN });
        expect(r.isError, `scan ${i + 1}: ${r.text}`).toBe(false);
      }
      const before = site.requests.length;
      for (const caller of [client, viaMcp]) {
        const over = await callTool(caller, 'check_public_ai_access', { domain: FIXTURE_DOMAIN });
        expect(over).toMatchObject({ isError: true, text: 'Rate limit exceeded', structured: { status: 429 } });
        expect(over.structured.retry_after).toBeGreaterThanOrEqual(1);
        expect(over.structured.retry_after).toBeLessThanOrEqual(60);
      }
      expect(site.requests.length).toBe(before);
    });
    await freshBudgets();
  });

  it('given a JSON-RPC batch, then 400 with a JSON-RPC error, a key included', async () => {
    await freshBudgets();
    for (const headers of [{}, apiKey(key)]) {
      const r = await postTo(s, MCP_PUBLIC, [initialize(1), ping(2)], headers);
      expect(r.status).toBe(400);
      expect(r.body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Batch requests are not supported' } });
    }
  });

  it('given a body over 512 KiB, then 413 by Content-Length or by the size of a chunked body, a key included; 400 KiB goes on', async () => {
    await freshBudgets();
    const big = { ...ping(), params: { pad: 'x'.repeat(520 * 1024) } };
    for (const headers of [{}, apiKey(key)]) {
      expect(await postTo(s, MCP_PUBLIC, big, headers)).toMatchObject({ status: 413, body: { error: 'body is too large' } });
    }
    const chunked = new ReadableStream({
      start(c) {
        c.enqueue(new TextEncoder().encode(JSON.stringify(big)));
        c.close();
      },
    });
    const r = await postTo(s, MCP_PUBLIC, '', {}, { body: chunked, duplex: 'half' } as RequestInit);
    expect(r).toMatchObject({ status: 413, body: { error: 'body is too large' } });
    expect((await postTo(s, MCP_PUBLIC, publicCall(1, { pad: 'x'.repeat(400 * 1024) }))).status).toBe(200);
  });
});
