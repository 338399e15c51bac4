import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, describe, expect, it } from 'vitest';
import { buildSite, importAnswers, type Site } from '../support/answers';
import { type TestServer, sharedServer } from '../support/server';
import { useWorld, type World } from '../support/tenancy';
import { apiKey, callTool, connect, toolOk } from './support';

let s: TestServer;
let w: World;
let site: Site;
let mcp: Client;

useWorld(async (ctx) => {
  ({ s, w } = ctx);
  site = await buildSite(s, w.a.key, { name: 'Acme', url: 'https://acme-mr.example.com', prompts: [{ text: 'p1' }] });
  await importAnswers(s, w.a.key, site.id, [
    { prompt_id: site.prompts[0].id, model: 'chatgpt', run_at: '2026-05-02T08:00:00Z', text: 'Acme alone.' },
    { prompt_id: site.prompts[0].id, model: 'chatgpt', run_at: '2026-05-03T08:00:00Z', text: 'Nobody here.' },
  ]);
  mcp = await connect(s, apiKey(w.a.key));
}, sharedServer);
afterAll(async () => mcp?.close());

describe('create_report and list_reports', () => {
  it('given a period, when create_report is called, then the report and its link come back, and list_reports lists it', async () => {
    const created = await toolOk(mcp, 'create_report', { website_id: site.id, start_date: '2026-05-01', end_date: '2026-05-07' });
    expect(created.report.snapshot.rates).toEqual([
      { name: 'Acme', is_self: true, mention_rate: 50, ci95: expect.any(Array), mentions: 1, responses: 2 },
    ]);
    expect(created.report.report_url).toContain('/reports/');
    const listed = await toolOk(mcp, 'list_reports', { website_id: site.id });
    expect(listed.reports.map((r: { id: string }) => r.id)).toEqual([created.report.id]);
  });

  it('given inverted dates, then a tool error naming end_date and nothing written', async () => {
    const before = await s.head();
    const r = await callTool(mcp, 'create_report', { website_id: site.id, start_date: '2026-05-07', end_date: '2026-05-01' });
    expect(r.isError).toBe(true);
    expect(r.text).toContain('end_date');
    expect(await s.head()).toBe(before);
  });
});
