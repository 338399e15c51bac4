import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { describe, expect, it } from 'vitest';
import { MODEL_IDS } from '../../src/domain/models';
import { buildSite, importAnswers } from '../support/answers';
import { call, type TestServer, sharedServer } from '../support/server';
import { until } from '../support/until';
import type { World } from '../support/tenancy';
import { type AreaClients, toolOk, useAreaClients, withPlainOrganization } from './support';

let s: TestServer, w: World, a: Client, scoped: Client, b: Client, refused: AreaClients['refused'];
useAreaClients((ctx) => ({ s, w, a, scoped, b, refused } = ctx), sharedServer);

describe('entity-quality tools', () => {
  it('given answers naming an untracked name and contradicting a fact, then both tools answer what REST answers; other organizations and scopes are refused', async () => {
    const site = await buildSite(s, w.a.key, { name: 'Acme' });
    const f = await call(s, 'POST', '/api/v1/knowledge-base/facts', {
      key: w.a.key,
      body: { website_id: site.id, text: 'Acme Pro costs 49 dollars per month.' },
    });
    expect(f.status).toBe(201);
    await importAnswers(
      s,
      w.a.key,
      site.id,
      [1, 2, 3].map((d) => ({
        prompt_id: site.prompts[0].id,
        model: MODEL_IDS[0],
        run_at: `2026-11-0${d}T10:00:00Z`,
        text: `Try **Zeta**. Acme Pro costs ${90 + d} dollars per month.`,
      })),
    );
    const rest = (path: string, query: Record<string, string>) => call(s, 'GET', path, { key: w.a.key, query: { website_id: site.id, ...query } });
    await until('both read models', async () => {
      const [sg, cf] = await Promise.all([rest('/api/v1/competitors/suggestions', {}), rest('/api/v1/knowledge-base/conflicts', {})]);
      return sg.body.suggestions?.length === 1 && cf.body.conflicts?.length === 3;
    });
    expect(await toolOk(a, 'get_competitor_suggestions', { website_id: site.id })).toEqual((await rest('/api/v1/competitors/suggestions', {})).body);
    expect(await toolOk(a, 'get_competitor_suggestions', { website_id: site.id, min_answers: 4 })).toEqual({ suggestions: [] });
    expect(await toolOk(a, 'get_fact_conflicts', { website_id: site.id })).toEqual((await rest('/api/v1/knowledge-base/conflicts', {})).body);
    expect(await toolOk(a, 'get_fact_conflicts', { website_id: site.id, status: 'dismissed' })).toEqual({ conflicts: [] });
    for (const name of ['get_competitor_suggestions', 'get_fact_conflicts']) {
      await refused(b, name, { website_id: site.id }, 403, 'Unauthorized access to this website');
      await refused(scoped, name, { website_id: site.id }, 403, 'Unauthorized access to this website');
    }
    await refused(a, 'get_fact_conflicts', { website_id: site.id, status: 'closed' }, 400, /^status: /);
    await withPlainOrganization(s, 'No KB', async (plain) => {
      await refused(plain, 'get_fact_conflicts', { website_id: site.id }, 403, 'Knowledge base is not enabled for this organization');
    });
  });
});
