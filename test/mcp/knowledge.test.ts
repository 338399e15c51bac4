import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CreatePillarAnswer, DeleteFactsAnswer, FactsPage, PatchFactAnswer, PillarsView, SearchAnswer } from '../../queries/knowledge/views';
import { newSite } from '../support/http';
import { jobEnded } from '../support/jobs';
import { offlineResearch, researched } from '../support/knowledge';
import { call, startServer, type TestServer } from '../support/server';
import { buildWorld, type World } from '../support/tenancy';
import { apiKey, connect, toolOk, toolRefused } from './support';

let s: TestServer;
let w: World;
let a: Client;
let scoped: Client;
let b: Client;
let off: Client;
beforeAll(async () => {
  s = await startServer({}, {}, undefined, offlineResearch());
  w = await buildWorld(s);
  const noKb = await s.org('No KB', { features: ['pitch'] });
  [a, scoped, b, off] = await Promise.all([
    connect(s, apiKey(w.a.key)),
    connect(s, apiKey(w.a.scoped)),
    connect(s, apiKey(w.b.key)),
    connect(s, apiKey(noKb.key)),
  ]);
});
afterAll(async () => {
  await Promise.all([a, scoped, b, off].map((c) => c?.close()));
  await s?.close();
});

const refused = (client: Client, name: string, args: Record<string, unknown>, status: number, error: string | RegExp) =>
  toolRefused(s, client, name, args, status, error);

describe('knowledge-base tools', () => {
  it('given the tools, then pillars and facts follow REST: get-or-create, list, search, update with before, review, delete', async () => {
    const site = await newSite(s, w.a.key);
    const created = CreatePillarAnswer.parse(await toolOk(a, 'create_pillar', { website_id: site, name: 'Support' }));
    expect(created).toMatchObject({ created: true, pillar: { name: 'Support', status: 'researching' } });
    await jobEnded(s.rt, created.pillar.id);
    expect(await toolOk(a, 'create_pillar', { website_id: site, name: 'SUPPORT' })).toMatchObject({
      created: false,
      pillar: { id: created.pillar.id },
    });
    expect(PillarsView.parse(await toolOk(a, 'list_pillars', { website_id: site })).pillars.map((p) => p.id)).toEqual([created.pillar.id]);

    const f = (
      await call(s, 'POST', '/api/v1/knowledge-base/facts', { key: w.a.key, body: { website_id: site, text: 'Support answers within one hour.' } })
    ).body.fact;
    const [pending] = await researched(s, w.a.organization_id, site, created.pillar.id, [
      { text: 'Support is open on weekends.', source_type: 'site', response_id: null },
    ]);
    const listed = FactsPage.parse(await toolOk(a, 'list_brand_facts', { website_id: site, review_status: 'pending' }));
    expect(listed.facts.map((x) => x.id)).toEqual([pending]);
    expect(SearchAnswer.parse(await toolOk(a, 'search_brand_facts', { website_id: site, query: 'support' })).facts.map((x) => x.id)).toEqual([f.id]);
    expect(await toolOk(a, 'review_brand_fact', { fact_id: pending, decision: 'approve' })).toMatchObject({
      fact: { id: pending, review_status: 'approved' },
    });
    expect(SearchAnswer.parse(await toolOk(a, 'search_brand_facts', { website_id: site, query: 'support' })).facts).toHaveLength(2);

    const upd = PatchFactAnswer.parse(await toolOk(a, 'update_brand_fact', { fact_id: f.id, text: 'Support answers within 30 minutes.' }));
    expect(upd.before.id).toBe(f.id);
    expect(upd.fact).toMatchObject({ text: 'Support answers within 30 minutes.', review_status: 'approved' });
    expect(upd.fact.id).not.toBe(f.id);
    await refused(a, 'update_brand_fact', { fact_id: f.id, confidence: 'low' }, 404, 'Fact not found');
    await refused(a, 'update_brand_fact', { fact_id: upd.fact.id }, 400, /^text: /);
    // REST's PATCH rules and messages: a fact captured from an answer keeps its text (409), its confidence changes in place
    const [captured] = await researched(s, w.a.organization_id, site, created.pillar.id, [{ text: 'Support was praised in an answer.' }]);
    await refused(
      a,
      'update_brand_fact',
      { fact_id: captured, text: 'Changed.' },
      409,
      'Facts captured from AI responses cannot have their text changed',
    );
    expect(await toolOk(a, 'update_brand_fact', { fact_id: captured, confidence: 'low' })).toMatchObject({
      fact: { id: captured, confidence: 'low', source_type: 'ai_response' },
      before: { id: captured, confidence: 'medium' },
    });

    const gone = DeleteFactsAnswer.parse(await toolOk(a, 'delete_brand_facts', { website_id: site, fact_ids: [upd.fact.id, f.id] }));
    expect(gone).toEqual({ success: true, deleted_ids: [upd.fact.id], not_found_ids: [f.id] });
  });

  it('given the gates, then the tools answer as REST: feature off 403, scoped key outside 403, another organization 403/404', async () => {
    const f = (await call(s, 'POST', '/api/v1/knowledge-base/facts', { key: w.a.key, body: { website_id: w.a.a1, text: 'Gated fact.' } })).body.fact;
    await refused(off, 'list_pillars', { website_id: w.a.a1 }, 403, 'Knowledge base is not enabled for this organization');
    await refused(off, 'create_pillar', { website_id: w.a.a1, name: 'X' }, 403, 'Knowledge base is not enabled for this organization');
    await refused(scoped, 'create_pillar', { website_id: w.a.a1, name: 'X' }, 403, 'Unauthorized access to this website');
    await refused(scoped, 'update_brand_fact', { fact_id: f.id, text: 'Changed' }, 403, 'Unauthorized access to this website');
    await refused(b, 'list_brand_facts', { website_id: w.a.a1 }, 403, 'Unauthorized access to this website');
    await refused(b, 'review_brand_fact', { fact_id: f.id, decision: 'reject' }, 404, 'Fact not found');
    await refused(a, 'delete_brand_facts', { website_id: w.a.a1, fact_ids: [] }, 400, /^fact_ids: /);
  });
});
