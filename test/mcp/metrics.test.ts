import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { describe, expect, it } from 'vitest';
import { acmeAgainstGlobex, buildSite, importAnswers, type Site } from '../support/answers';
import { call, type TestServer, sharedServer } from '../support/server';
import type { World } from '../support/tenancy';
import { callTool, toolOk, useMcpWorld } from './support';

let s: TestServer;
let w: World;
let a: Client;
let b: Client;
let site: Site;
useMcpWorld(
  async (ctx) => {
    ({
      s,
      w,
      clients: [a, b],
    } = ctx);
    site = await buildSite(s, w.a.key, acmeAgainstGlobex('mcp'));
    const item = (run_at: string, text: string) => ({ prompt_id: site.prompts[0].id, model: 'chatgpt', run_at, text });
    await importAnswers(s, w.a.key, site.id, [
      item('2026-03-05T10:00:00Z', 'Acme and Globex.'),
      item('2026-03-06T10:00:00Z', 'Globex.'),
      item('2026-03-07T10:00:00Z', 'None.'),
    ]);
  },
  undefined,
  sharedServer,
);

describe('metrics over MCP', () => {
  it('given the same filters, then each family tool answers as REST does, spelled-out dates included', async () => {
    for (const [tool, family] of [
      ['get_mention_rate', 'mention-rate'],
      ['get_share_of_voice', 'share-of-voice'],
      ['get_citation_rate', 'citation-rate'],
      ['get_average_position', 'position'],
    ]) {
      const viaTool = await toolOk(a, tool, { website_id: site.id, filters: { start_date: 'March 5, 2026', end_date: '2026-03-06' } });
      const rest = await call(s, 'POST', `/api/v1/metrics/${family}/cumulative`, {
        key: w.a.key,
        body: { website_id: site.id, filters: { start_date: '2026-03-05', end_date: '2026-03-06' } },
      });
      expect(viaTool).toEqual(rest.body);
      const daily = await toolOk(a, tool, { website_id: site.id, series: 'daily' });
      const restDaily = await call(s, 'POST', `/api/v1/metrics/${family}/time-series`, { key: w.a.key, body: { website_id: site.id } });
      expect(daily).toEqual(restDaily.body);
    }
    expect(
      (await toolOk(a, 'get_mention_rate', { website_id: site.id, filters: { start_date: 'March 5, 2026', end_date: 'March 6, 2026' } })).data.Acme
        .mention_rate,
    ).toBe(50);
  });

  it('given the reporting tool, then the connector rows; refusals carry REST messages', async () => {
    const rows = await toolOk(a, 'get_reporting_rows', { website_id: site.id });
    expect(rows.rows).toHaveLength(6);
    const relative = await callTool(a, 'get_mention_rate', { website_id: site.id, filters: { start_date: 'last week' } });
    expect(relative).toMatchObject({ isError: true, structured: { status: 400 } });
    expect(relative.text).toMatch(/^filters\.start_date: /);
    expect(await callTool(b, 'get_share_of_voice', { website_id: site.id })).toMatchObject({
      isError: true,
      text: 'Unauthorized access to this website',
      structured: { status: 403 },
    });
  });
});
