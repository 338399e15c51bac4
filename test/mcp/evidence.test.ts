import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { describe, expect, it } from 'vitest';
import { buildSite, importAnswers } from '../support/answers';
import { call, type TestServer, sharedServer } from '../support/server';
import type { World } from '../support/tenancy';
import { type AreaClients, toolOk, useAreaClients } from './support';

let s: TestServer, w: World, a: Client, scoped: Client, b: Client, refused: AreaClients['refused'];
useAreaClients((ctx) => ({ s, w, a, scoped, b, refused } = ctx), sharedServer);

describe('answer evidence tools', () => {
  it('given answers with evidence, then get_sources and get_search_queries answer what REST answers', async () => {
    const site = await buildSite(s, w.a.key, { name: 'Acme', url: 'https://acme-mcp.example.com', prompts: [{ text: 'Best CRM?' }] });
    const p = site.prompts[0].id;
    await importAnswers(s, w.a.key, site.id, [
      { prompt_id: p, model: 'chatgpt', run_at: '2026-11-10T10:00:00Z', text: 'x', citations: ['https://g2.com/a'], search_queries: ['Best CRM'] },
      {
        prompt_id: p,
        model: 'claude',
        run_at: '2026-11-11T10:00:00Z',
        text: 'y',
        retrieved: ['https://acme-mcp.example.com/'],
        search_queries: ['best crm'],
      },
    ]);
    for (const group_by of ['domain', 'url'] as const) {
      const rest = await call(s, 'GET', '/api/v1/sources', { key: w.a.key, query: { website_id: site.id, group_by } });
      expect(await toolOk(a, 'get_sources', { website_id: site.id, group_by })).toEqual(rest.body);
    }
    expect((await toolOk(a, 'get_sources', { website_id: site.id, models: ['claude'], start_date: 'November 11, 2026' })).data).toEqual([
      { domain: 'acme-mcp.example.com', retrieved: 1, cited: 0, cited_when_retrieved: 0, is_self: true, entity_id: site.id },
    ]);
    const queries = await toolOk(a, 'get_search_queries', { website_id: site.id });
    expect(queries).toEqual((await call(s, 'GET', '/api/v1/search-queries', { key: w.a.key, query: { website_id: site.id } })).body);
    expect(queries.data).toEqual([
      { query: 'Best CRM', answers: 2, models: ['chatgpt', 'claude'], first_seen: '2026-11-10T10:00:00.000Z', last_seen: '2026-11-11T10:00:00.000Z' },
    ]);
  });

  it("given another organization's or another website's client, then 403 as on REST", async () => {
    await refused(b, 'get_sources', { website_id: w.a.a1 }, 403, 'Unauthorized access to this website');
    await refused(scoped, 'get_search_queries', { website_id: w.a.a1 }, 403, 'Unauthorized access to this website');
  });

  it('given a bad group_by, then 400 naming it', async () => {
    await refused(a, 'get_sources', { website_id: w.a.a1, group_by: 'host' }, 400, /^group_by/);
  });
});
