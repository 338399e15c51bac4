import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { describe, expect, it } from 'vitest';
import { MODEL_IDS } from '../../src/domain/models';
import { buildSite } from '../support/answers';
import { call, type TestServer, sharedServer } from '../support/server';
import type { World } from '../support/tenancy';
import { until } from '../support/until';
import { callTool, toolOk, useMcpWorld } from './support';

let s: TestServer;
let w: World;
let a: Client;
let b: Client;
useMcpWorld(
  (ctx) =>
    ({
      s,
      w,
      clients: [a, b],
    } = ctx),
  undefined,
  sharedServer,
);

describe('answers over MCP', () => {
  it('given a run started by a tool, then its answers, date range and status read the same as over REST', async () => {
    const site = await buildSite(s, w.a.key, { prompts: [{ text: 'Which CRM?' }] });
    const started = await toolOk(a, 'start_response_run', { website_id: site.id });
    expect(started).toMatchObject({ status: 'running', total: MODEL_IDS.length, schedule: 'default' });
    const run = await until('run finished', async () => {
      const r = await toolOk(a, 'get_response_run', { website_id: site.id, run_id: started.run_id });
      return r.status !== 'running' && r;
    });
    expect(run).toMatchObject({ status: 'completed', recorded: MODEL_IDS.length });
    const listed = await toolOk(a, 'list_responses', {
      website_id: site.id,
      filters: { models: [MODEL_IDS[0]], end_date: 'December 31, 2099' },
      page_size: 5,
    });
    const rest = await call(s, 'GET', '/api/v1/responses', { key: w.a.key, query: { website_id: site.id, models: MODEL_IDS[0], page_size: 5 } });
    expect(listed).toEqual(rest.body);
    expect(listed.responses).toHaveLength(1);
    const range = await toolOk(a, 'get_date_range', { website_id: site.id, schedule_id: 'default' });
    expect(range.start_date).toBe(new Date().toISOString().slice(0, 10));
  });

  it('given an import through the tool, then it answers like REST and refuses like REST', async () => {
    const site = await buildSite(s, w.a.key);
    const item = { external_id: 'm1', prompt_id: site.prompts[0].id, model: MODEL_IDS[0], run_at: '2026-03-01T10:00:00Z', text: 'Acme.' };
    expect(await toolOk(a, 'import_responses', { website_id: site.id, responses: [item] })).toMatchObject({ imported: 1, skipped: 0 });
    expect(await toolOk(a, 'import_responses', { website_id: site.id, responses: [item] })).toMatchObject({ imported: 0, skipped: 1 });
    const bad = await callTool(a, 'import_responses', { website_id: site.id, responses: [{ ...item, external_id: 'm2', model: 'nope' }] });
    expect(bad.isError).toBe(true);
    expect(bad.text).toMatch(/^responses\[0\]\.model: unknown model "nope"/);
    const spelled = await callTool(a, 'list_responses', { website_id: site.id, filters: { start_date: 'last week' } });
    expect(spelled).toMatchObject({ isError: true, structured: { status: 400 } });
    const other = await callTool(b, 'list_responses', { website_id: site.id });
    expect(other).toMatchObject({ isError: true, text: 'Unauthorized access to this website', structured: { status: 403 } });
    const otherStart = await callTool(b, 'start_response_run', { website_id: site.id });
    expect(otherStart).toMatchObject({ isError: true, structured: { status: 403 } });
  });
});
