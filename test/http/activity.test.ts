import { describe, expect, it } from 'vitest';
import { createWebsite } from '../../commands/websites/create-website';
import { call, caughtUp, type TestServer, sharedServer } from '../support/server';
import { useWorld, websiteTenancyChecks, type World } from '../support/tenancy';

let s: TestServer;
let w: World;
useWorld((ctx) => ({ s, w } = ctx), sharedServer);

/** The feed once it has every change so far: writes do not wait for the activity read model. */
const feed = async (key: string, query: Record<string, string | number> = {}) => {
  await caughtUp(s, ['activity']);
  return call(s, 'GET', '/api/v1/activity', { key, query });
};

describe('activity feed', () => {
  it('given changes made with an API key, then entries carry the website, kind of change, ids, via_api_key and a null user', async () => {
    const site = (await call(s, 'POST', '/api/v1/websites', { key: w.a.key, body: { name: 'Audited', url: 'https://audited.example.com' } })).body
      .website.id;
    await call(s, 'PATCH', `/api/v1/websites/${site}`, { key: w.a.key, body: { status: 'paused' } });
    const r = await feed(w.a.key, { website_id: site });
    expect(r.status).toBe(200);
    expect(r.body.data.map((e: { change_type: string }) => e.change_type)).toEqual(['paused', 'created']);
    expect(r.body.data[1]).toMatchObject({ website_id: site, entity_type: 'website', entity_ids: [site], via_api_key: true, actor: { user: null } });
    expect(r.body).toMatchObject({ page_num: 0, page_size: 40, has_more: false });
  });

  it('given order=asc and paging, then the oldest come first and has_more tells if there is more', async () => {
    const asc = await feed(w.a.key, { order: 'asc', page_size: 2 });
    expect(asc.body.data).toHaveLength(2);
    expect(asc.body.has_more).toBe(true);
    const t0 = Date.parse(asc.body.data[0].created_at);
    const t1 = Date.parse(asc.body.data[1].created_at);
    expect(t0).toBeLessThanOrEqual(t1);
    const next = await feed(w.a.key, { order: 'asc', page_size: 2, page_num: 1 });
    expect(next.body.data[0].id).not.toBe(asc.body.data[1].id);
  });

  it('given entity_type, change_type, since and until, then only matching entries come back', async () => {
    const keys = await feed(w.a.key, { entity_type: 'api_key', change_type: 'revoked' });
    expect(keys.body.data.length).toBeGreaterThanOrEqual(1);
    for (const e of keys.body.data) expect(e).toMatchObject({ entity_type: 'api_key', change_type: 'revoked' });
    const future = await feed(w.a.key, { since: new Date(Date.now() + 3_600_000).toISOString() });
    expect(future.body.data).toEqual([]);
    const past = await feed(w.a.key, { until: '2000-01-01T00:00:00Z' });
    expect(past.body.data).toEqual([]);
  });

  it("given a scoped partner key, then it sees only its websites' entries", async () => {
    const scopedPartner = (
      await call(s, 'POST', '/api/v1/api-keys', { key: w.a.key, body: { name: 'scoped partner', website_ids: [w.a.a2], partner: true } })
    ).body.key;
    const r = await feed(scopedPartner);
    expect(r.status).toBe(200);
    expect(r.body.data.length).toBeGreaterThan(0);
    for (const e of r.body.data) expect(e.website_id).toBe(w.a.a2);
  });

  it("given another organization's key, then none of this organization's entries are visible", async () => {
    const r = await feed(w.b.key);
    for (const e of r.body.data) expect([w.a.a1, w.a.a2]).not.toContain(e.website_id);
  });

  it('given a change made by a person in the app, then actor.user carries their id and email', async () => {
    const r = await createWebsite(
      { store: s.rt.store, organizationId: w.a.organization_id, actor: { kind: 'user', user_id: w.a.owner_user_id, api_key_id: null } },
      { name: 'By hand', url: 'https://byhand.example.com' },
    );
    if ('kind' in r) throw new Error(r.message);
    expect(await s.rt.waitForReadModels(r.position, 'all', 60_000)).toBe(true);
    const entry = (await feed(w.a.key, { entity_type: 'website', change_type: 'created' })).body.data.find(
      (e: { entity_ids: string[] }) => e.entity_ids[0] === r.result.id,
    );
    expect(entry).toMatchObject({ via_api_key: false, actor: { user: { id: w.a.owner_user_id, email: expect.stringContaining('@') } } });
  });

  it('given a non-partner key, then 403', async () => {
    expect(await feed(w.a.plainGlobal)).toMatchObject({ status: 403, body: { error: 'Forbidden: partner API key required' } });
  });

  it('given bad filters, then 400 naming the field', async () => {
    expect((await feed(w.a.key, { order: 'sideways' })).body.error).toMatch(/^order/);
    expect((await feed(w.a.key, { page_size: 101 })).body.error).toMatch(/^page_size/);
    expect((await feed(w.a.key, { page_num: -1 })).body.error).toMatch(/^page_num/);
    expect((await feed(w.a.key, { since: 'yesterday' })).body.error).toMatch(/^since/);
    expect((await feed(w.a.key, { website_id: 'nope' })).body.error).toMatch(/^website_id/);
    expect((await feed(w.a.key, { colour: 'red' })).status).toBe(400);
  });

  websiteTenancyChecks(() => w, 'GET', '/api/v1/activity');
});
