import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { describe, expect, it } from 'vitest';
import { PitchAdmittedView, PitchListView, PitchReportView } from '../../queries/pitches/views';
import { PROSPECT, PROSPECT_NAME, type PitchSites, startPitchSites } from '../support/pitch-site';
import { call, startServer, type TestServer } from '../support/server';
import { useStarted } from '../support/started';
import type { World } from '../support/tenancy';
import { until } from '../support/until';
import { callTool, toolOk, useAreaClients } from './support';

let s: TestServer, w: World, a: Client, scoped: Client, b: Client;
let sites: PitchSites;
// the sites start before the server and close after it
useStarted(startPitchSites, (x) => (sites = x));
useAreaClients(
  (ctx) => ({ s, w, a, scoped, b } = ctx),
  () => startServer({}, { outbound: sites.outbound }),
);

describe('pitch report tools', () => {
  it('given create_pitch, then it follows REST: a report is admitted once per idempotency_key, get_pitch polls it to completed, list_pitches lists it', async () => {
    const admitted = PitchAdmittedView.parse(await toolOk(a, 'create_pitch', { website_url: PROSPECT, idempotency_key: 'mcp-1' }));
    expect(admitted.status).toBe('processing');
    const again = PitchAdmittedView.parse(await toolOk(a, 'create_pitch', { website_url: `https://${PROSPECT}/`, idempotency_key: 'mcp-1' }));
    expect(again.pitch_id).toBe(admitted.pitch_id);
    const conflict = await callTool(a, 'create_pitch', { website_url: PROSPECT, country: 'Spain', idempotency_key: 'mcp-1' });
    expect(conflict.isError).toBe(true);
    expect(conflict.structured.status).toBe(409);
    expect(conflict.text).toBe('Idempotency key reused with a different request');
    const done = await until('the report', async () => {
      const r = PitchReportView.parse(await toolOk(a, 'get_pitch', { pitch_id: admitted.pitch_id }));
      return r.pitch.status === 'completed' && r;
    });
    expect(done.pitch.company_name).toBe(PROSPECT_NAME);
    expect(done.prompts).toHaveLength(20);
    const rest = await call(s, 'GET', `/api/v1/pitches/${admitted.pitch_id}`, { key: w.a.key });
    expect(rest.body).toEqual(done);
    const list = PitchListView.parse(await toolOk(a, 'list_pitches', {}));
    expect(list.pitches.map((p) => p.id)).toEqual([admitted.pitch_id]);
    expect(list.pitches[0].report_url).toBe(admitted.report_url);
  });

  it('given a scoped key or another organization, then 403 Forbidden: global API key required, 404 Pitch not found, 400 Invalid pitch ID format', async () => {
    const admitted = await toolOk(a, 'create_pitch', { website_url: PROSPECT, idempotency_key: 'mcp-2' });
    for (const [name, args] of [
      ['create_pitch', { website_url: PROSPECT, idempotency_key: 'mcp-3' }],
      ['get_pitch', { pitch_id: admitted.pitch_id }],
      ['list_pitches', {}],
    ] as const) {
      const r = await callTool(scoped, name, args);
      expect(r.isError, name).toBe(true);
      expect(r.structured.status).toBe(403);
      expect(r.text).toBe('Forbidden: global API key required');
    }
    const other = await callTool(b, 'get_pitch', { pitch_id: admitted.pitch_id });
    expect([other.structured.status, other.text]).toEqual([404, 'Pitch not found']);
    const bad = await callTool(a, 'get_pitch', { pitch_id: 'nope' });
    expect([bad.structured.status, bad.text]).toEqual([400, 'Invalid pitch ID format']);
    expect((await toolOk(b, 'list_pitches', {})).pitches).toEqual([]);
  });
});
