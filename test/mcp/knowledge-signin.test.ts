import { describe, expect, it } from 'vitest';
import { PERMISSION_DENIED } from '../../src/domain/principal';
import { jobEnded } from '../support/jobs';
import { offlineResearch } from '../support/knowledge';
import { ADMIN_EMAIL, PASSWORD, signIn, startOAuthServer, useSignInWorld, VIEWER_EMAIL } from '../support/oauth';
import { call, caughtUp, type TestServer } from '../support/server';
import type { World } from '../support/tenancy';
import { post } from './support';

// Issue 18, item 6: the knowledge base needs a website admin. Every API key is one within its scope (test/http/
// knowledge.test.ts); a person signed in on the tool server (OAuth) is one only with brand_knowledge at manage: a
// viewer of the website is refused every knowledge tool, an admin is not.
let s: TestServer;
let w: World;
let adminId: string;

useSignInWorld(
  (ctx) => ({ s, w, adminId } = ctx),
  () => startOAuthServer(undefined, {}, offlineResearch()),
);

/** Signs the user in through the pages and exchanges the code: the access token. */
async function signedIn(email: string): Promise<string> {
  return (await signIn(s, email, PASSWORD)).access_token as string;
}

async function tool(accessToken: string, name: string, args: Record<string, unknown>) {
  const r = await post(
    s,
    { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } },
    { authorization: `Bearer ${accessToken}` },
  );
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.result as { isError?: boolean; structuredContent: any };
}

describe('knowledge-base tools for people signed in', () => {
  it('given a viewer of the website signed in, then every knowledge tool is refused 403 (insufficient permissions) and nothing is written', async () => {
    const f = (
      await call(s, 'POST', '/api/v1/knowledge-base/facts', { key: w.a.key, body: { website_id: w.a.a1, text: 'Acme has a viewer-proof fact.' } })
    ).body.fact;
    const t = await signedIn(VIEWER_EMAIL);
    // the viewer does reach the website: a read another category allows works
    expect((await tool(t, 'list_prompts', { website_id: w.a.a1 })).isError).toBeFalsy();
    const head = await s.head();
    for (const [name, args] of [
      ['create_pillar', { website_id: w.a.a1, name: 'Viewer pillar' }],
      ['list_pillars', { website_id: w.a.a1 }],
      ['list_brand_facts', { website_id: w.a.a1 }],
      ['search_brand_facts', { website_id: w.a.a1, query: 'fact' }],
      ['update_brand_fact', { fact_id: f.id, confidence: 'low' }],
      ['review_brand_fact', { fact_id: f.id, decision: 'reject' }],
      ['delete_brand_facts', { website_id: w.a.a1, fact_ids: [f.id] }],
    ] as const) {
      const r = await tool(t, name, args);
      expect(r, name).toMatchObject({ isError: true, structuredContent: { error: PERMISSION_DENIED, status: 403 } });
    }
    expect(await s.head()).toBe(head);
  });

  it('given an admin signed in, then the knowledge tools work and the activity feed names the admin', async () => {
    const t = await signedIn(ADMIN_EMAIL);
    const created = await tool(t, 'create_pillar', { website_id: w.a.a1, name: 'Admin pillar' });
    expect(created.isError, JSON.stringify(created)).toBeFalsy();
    expect(created.structuredContent).toMatchObject({ created: true, pillar: { name: 'Admin pillar', status: 'researching' } });
    await jobEnded(s.rt, created.structuredContent.pillar.id);
    await caughtUp(s, ['activity']);
    const feed = await call(s, 'GET', '/api/v1/activity', { key: w.a.key, query: { website_id: w.a.a1, entity_type: 'pillar', order: 'asc' } });
    expect(feed.body.data[0]).toMatchObject({
      change_type: 'created',
      entity_ids: [created.structuredContent.pillar.id],
      via_api_key: false,
      actor: { user: { id: adminId, email: ADMIN_EMAIL } },
    });
  });
});
