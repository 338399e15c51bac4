import { describe, expect, it } from 'vitest';
import { MembersView, UserWebsitesView } from '../../queries/team/members';
import { call, type TestServer, sharedServer } from '../support/server';
import { useWorld, type World } from '../support/tenancy';
import { until } from '../support/until';
import type { AppDeps } from '../../src/app/context';
import { createInvite } from '../../src/app/team';
import { userPrincipal } from '../../src/domain/principal';
import { userAccess } from '../../queries/team/members';

let s: TestServer;
let w: World;
useWorld((ctx) => ({ s, w } = ctx), sharedServer);

let people = 0;
const person = () => `member-${++people}-${Date.now()}@example.com`;
const add = async (body: Record<string, unknown>, key = w.a.key) => {
  const r = await call(s, 'POST', '/api/v1/invites', { key, body: { invite_method: 'direct', email: person(), ...body } });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.user_id as string;
};
const members = async (key = w.a.key) => {
  const r = await call(s, 'GET', '/api/v1/organizations/members', { key });
  expect(r.status).toBe(200);
  return MembersView.parse(r.body).members;
};

describe('organization members', () => {
  it('given members, then they are listed with their role; the other organization never sees them', async () => {
    const admin = await add({ type: 'organization', role: 'admin', first_name: 'Alan' });
    const list = await members();
    expect(list.find((m) => m.user_id === w.a.owner_user_id)).toMatchObject({ role: 'owner', role_name: 'Owner', access_type: 'organization' });
    expect(list.find((m) => m.user_id === admin)).toMatchObject({ role: 'admin', first_name: 'Alan' });
    expect((await members(w.b.key)).map((m) => m.user_id)).not.toContain(admin);
  });

  it('given an admin made viewer, then websites_affected counts the websites whose access changed; the same role again changes nothing', async () => {
    const user = await add({ type: 'organization', role: 'admin' });
    const admins = await add({ type: 'organization', role: 'admin' });
    expect(admins).toBeTruthy();
    const sites = (await call(s, 'GET', '/api/v1/websites', { key: w.a.key })).body.websites.length;
    const r = await call(s, 'PATCH', `/api/v1/organizations/members/${user}`, { key: w.a.key, body: { role: 'viewer' } });
    expect(r).toMatchObject({ status: 200, body: { success: true, websites_affected: sites } });
    expect((await members()).find((m) => m.user_id === user)).toMatchObject({ role: 'viewer' });
    const before = await s.head();
    expect(await call(s, 'PATCH', `/api/v1/organizations/members/${user}`, { key: w.a.key, body: { role: 'viewer' } })).toMatchObject({
      status: 200,
      body: { websites_affected: 0 },
    });
    expect(await s.head()).toBe(before);
  });

  it("given the owner, the key's own user, an unknown user or bad input, then refused and nothing written", async () => {
    const before = await s.head();
    const owner = { status: 403, body: { error: 'The organization owner cannot be changed or removed' } };
    expect(await call(s, 'PATCH', `/api/v1/organizations/members/${w.a.owner_user_id}`, { key: w.a.key, body: { role: 'viewer' } })).toMatchObject(
      owner,
    );
    expect(await call(s, 'DELETE', `/api/v1/organizations/members/${w.a.owner_user_id}`, { key: w.a.key })).toMatchObject(owner);
    const unknown = { status: 404, body: { error: 'Member not found' } };
    expect(await call(s, 'DELETE', '/api/v1/organizations/members/6f1c2d3e-4b5a-4c6d-8e9f-0a1b2c3d4e5f', { key: w.a.key })).toMatchObject(unknown);
    const user = await add({ type: 'organization' });
    const mid = await s.head();
    expect(await call(s, 'DELETE', `/api/v1/organizations/members/${user}`, { key: w.b.key })).toMatchObject(unknown);
    expect(await call(s, 'PATCH', `/api/v1/organizations/members/${user}`, { key: w.a.scoped, body: { role: 'admin' } })).toMatchObject({
      status: 403,
      body: { error: 'Forbidden: global API key required' },
    });
    expect(await call(s, 'DELETE', `/api/v1/organizations/members/${user}`, { key: w.a.scoped })).toMatchObject({ status: 403 });
    expect(await call(s, 'PATCH', `/api/v1/organizations/members/${user}`, { key: w.a.key, body: {} })).toMatchObject({
      status: 400,
      body: { error: 'body: exactly one of role or role_id is required' },
    });
    expect(await call(s, 'PATCH', `/api/v1/organizations/members/${user}`, { key: w.a.key, body: { role: 'owner' } })).toMatchObject({ status: 400 });
    expect(await s.head()).toBe(mid);
    expect(before).not.toBe(mid);
  });

  it('given the last admin, then demoting or removing them is 409; with two admins removed at once, exactly one goes', async () => {
    const org = await s.org('Admins Org');
    const invite = async (role: string) => {
      const r = await call(s, 'POST', '/api/v1/invites', {
        key: org.key,
        body: { type: 'organization', invite_method: 'direct', email: person(), role },
      });
      return r.body.user_id as string;
    };
    const [x, y] = [await invite('admin'), await invite('admin')];
    const answers = await Promise.all([x, y].map((u) => call(s, 'DELETE', `/api/v1/organizations/members/${u}`, { key: org.key })));
    expect(answers.map((a) => a.status).sort()).toEqual([200, 409]);
    expect(answers.find((a) => a.status === 409)!.body.error).toBe('Cannot remove the last admin');
    const left = answers[0].status === 409 ? x : y;
    expect(await call(s, 'PATCH', `/api/v1/organizations/members/${left}`, { key: org.key, body: { role: 'viewer' } })).toMatchObject({
      status: 409,
      body: { error: 'Cannot remove the last admin' },
    });
    const list = (await call(s, 'GET', '/api/v1/organizations/members', { key: org.key })).body.members;
    expect(list.filter((m: { role: string }) => m.role === 'admin').map((m: { user_id: string }) => m.user_id)).toEqual([left]);
  });

  it('given a member removed from the organization, then their groups and website memberships go too, and websites_affected counts what they reached (every website)', async () => {
    // a website neither their group nor their membership has
    expect(
      (await call(s, 'POST', '/api/v1/websites', { key: w.a.key, body: { name: 'Leavers Three', url: 'https://leavers.example.com' } })).status,
    ).toBe(201);
    const sites = (await call(s, 'GET', '/api/v1/websites', { key: w.a.key })).body.websites.length;
    const email = person();
    const g = (await call(s, 'POST', '/api/v1/groups', { key: w.a.key, body: { name: 'Leavers', website_ids: [w.a.a1] } })).body.group.id;
    const user = (await call(s, 'POST', '/api/v1/invites', { key: w.a.key, body: { type: 'organization', invite_method: 'direct', email } })).body
      .user_id;
    await call(s, 'POST', '/api/v1/invites', { key: w.a.key, body: { type: 'group', invite_method: 'direct', email, group_id: g } });
    await call(s, 'POST', '/api/v1/invites', { key: w.a.key, body: { type: 'website', invite_method: 'direct', email, website_id: w.a.a2 } });
    expect((await call(s, 'GET', `/api/v1/users/${user}/websites`, { key: w.a.key })).body.websites).toHaveLength(sites);
    const r = await call(s, 'DELETE', `/api/v1/organizations/members/${user}`, { key: w.a.key });
    expect(r).toMatchObject({ status: 200, body: { success: true, message: 'Member removed from organization', websites_affected: sites } });
    const after = await call(s, 'GET', `/api/v1/users/${user}/websites`, { key: w.a.key });
    expect(UserWebsitesView.parse(after.body).websites).toEqual([]);
    expect((await members()).map((m) => m.user_id)).not.toContain(user);
  });

  it('given a scoped key, then it lists every organization member, since each reaches its websites; the other organization never sees them', async () => {
    const viewer = await add({ type: 'organization' });
    const list = (await members(w.a.scoped)).map((m) => m.user_id);
    expect(list).toEqual((await members()).map((m) => m.user_id));
    expect(list).toContain(viewer);
    expect((await members(w.b.key)).map((m) => m.user_id)).not.toContain(viewer);
  });

  it('given an organization viewer, then they reach every active website as organization viewers (a paused one is not listed), and every listing shows them once that way', async () => {
    const org = await s.org('Reach Org');
    const site = async (name: string) =>
      (await call(s, 'POST', '/api/v1/websites', { key: org.key, body: { name, url: `https://${name.toLowerCase()}.example.com` } })).body.website
        .id as string;
    const [one, two, paused] = [await site('One'), await site('Two'), await site('Paused')];
    expect((await call(s, 'PATCH', `/api/v1/websites/${paused}`, { key: org.key, body: { status: 'paused' } })).status).toBe(200);
    const email = person();
    const viewer = await add({ type: 'organization', email }, org.key);
    // also an explicit admin of one and in a group of two: the organization role is how they reach both
    await add({ type: 'website', website_id: one, role: 'admin', email }, org.key);
    const g = (await call(s, 'POST', '/api/v1/groups', { key: org.key, body: { name: 'Two', website_ids: [two] } })).body.group.id;
    await add({ type: 'group', group_id: g, email }, org.key);
    const sites = await call(s, 'GET', `/api/v1/users/${viewer}/websites`, { key: org.key });
    expect(UserWebsitesView.parse(sites.body).websites).toEqual([
      { website_id: one, name: 'One', url: expect.any(String), access_type: 'organization', role: 'viewer' },
      { website_id: two, name: 'Two', url: expect.any(String), access_type: 'organization', role: 'viewer' },
    ]);
    for (const path of [`/api/v1/websites/${one}/members`, `/api/v1/websites/${two}/members`, `/api/v1/groups/${g}/members`]) {
      const listed = MembersView.parse((await call(s, 'GET', path, { key: org.key })).body).members.filter((m) => m.user_id === viewer);
      expect(listed, path).toMatchObject([{ access_type: 'organization', role: 'viewer' }]);
    }
    const asGroup = await call(s, 'GET', `/api/v1/groups/${g}/members`, { key: org.key, query: { access_type: 'group' } });
    expect(MembersView.parse(asGroup.body).members.map((m) => m.user_id)).not.toContain(viewer);
  });
});

describe('website members', () => {
  it('given a website, then its members show how they reach it; an explicit membership can change role and be removed', async () => {
    const g = (await call(s, 'POST', '/api/v1/groups', { key: w.a.key, body: { name: 'A2 group', website_ids: [w.a.a2] } })).body.group.id;
    const viaGroup = await add({ type: 'group', group_id: g });
    const direct = await add({ type: 'website', website_id: w.a.a2 }, w.a.scoped);
    const list = await call(s, 'GET', `/api/v1/websites/${w.a.a2}/members`, { key: w.a.scoped });
    expect(list.status).toBe(200);
    const byUser = new Map(MembersView.parse(list.body).members.map((m) => [m.user_id, m]));
    expect(byUser.get(w.a.owner_user_id)).toMatchObject({ access_type: 'organization', role: 'owner' });
    expect(byUser.get(viaGroup)).toMatchObject({ access_type: 'group', role: 'viewer' });
    expect(byUser.get(direct)).toMatchObject({ access_type: 'website', role: 'viewer' });

    const patched = await call(s, 'PATCH', `/api/v1/websites/${w.a.a2}/members/${direct}`, { key: w.a.scoped, body: { role: 'admin' } });
    expect(patched).toMatchObject({ status: 200, body: { success: true } });
    expect((await call(s, 'GET', `/api/v1/users/${direct}/websites`, { key: w.a.key })).body.websites).toMatchObject([
      { website_id: w.a.a2, role: 'admin' },
    ]);
    // a group member has no explicit membership to change
    expect(await call(s, 'PATCH', `/api/v1/websites/${w.a.a2}/members/${viaGroup}`, { key: w.a.scoped, body: { role: 'admin' } })).toMatchObject({
      status: 404,
      body: { error: 'Member not found' },
    });
    expect(await call(s, 'DELETE', `/api/v1/websites/${w.a.a1}/members/${direct}`, { key: w.a.scoped })).toMatchObject({
      status: 403,
      body: { error: 'Unauthorized access to this website' },
    });
    expect(await call(s, 'GET', `/api/v1/websites/${w.a.a2}/members`, { key: w.b.key })).toMatchObject({
      status: 403,
      body: { error: 'Unauthorized access to this website' },
    });
    const removed = await call(s, 'DELETE', `/api/v1/websites/${w.a.a2}/members/${direct}`, { key: w.a.scoped });
    expect(removed).toMatchObject({ status: 200, body: { success: true, message: 'Member removed from website' } });
    expect((await call(s, 'GET', `/api/v1/users/${direct}/websites`, { key: w.a.key })).body.websites).toEqual([]);
  });

  it('given member changes, then the activity feed records them on their website, with no person for a key', async () => {
    const user = await add({ type: 'website', website_id: w.a.a2 }, w.a.scoped);
    await call(s, 'DELETE', `/api/v1/websites/${w.a.a2}/members/${user}`, { key: w.a.scoped });
    const entries = await until('the website member entries', async () => {
      const f = await call(s, 'GET', '/api/v1/activity', { key: w.a.key, query: { entity_type: 'website_member', website_id: w.a.a2 } });
      const mine = f.body.data.filter((e: { entity_ids: string[] }) => e.entity_ids?.includes(user));
      return mine.length === 2 ? mine : undefined;
    });
    expect(entries.map((e: { change_type: string }) => e.change_type).sort()).toEqual(['created', 'deleted']);
    for (const e of entries) expect(e).toMatchObject({ website_id: w.a.a2, via_api_key: true, actor: { user: null } });
  });

  it('given a signed-in user who is admin of one website, then they invite to it but not elsewhere, and the feed names them as the actor', async () => {
    const email = person();
    const u = await add({ type: 'website', website_id: w.a.a2, role: 'admin', email }, w.a.scoped);
    const access = await userAccess(s.rt.database.db, w.a.organization_id, u);
    const caller = { deps: { rt: s.rt } as unknown as AppDeps, principal: userPrincipal(access!) };
    expect(caller.principal.websiteIds).toEqual([w.a.a2]);
    const invited = await createInvite(caller, { type: 'website', invite_method: 'direct', email: person(), website_id: w.a.a2 });
    expect(invited).toMatchObject({ success: true, message: 'User added to website' });
    await expect(createInvite(caller, { type: 'website', invite_method: 'direct', email: person(), website_id: w.a.a1 })).rejects.toThrow(
      'Unauthorized access to this website',
    );
    await expect(createInvite(caller, { type: 'organization', invite_method: 'direct', email: person() })).rejects.toThrow(
      'Forbidden: insufficient permissions',
    );
    // the feed needs a partner key: the global one, and one scoped to a2 (the person reaches a2: shown to it too)
    const scopedPartner = (
      await call(s, 'POST', '/api/v1/api-keys', { key: w.a.key, body: { name: 'a2 partner', website_ids: [w.a.a2], partner: true } })
    ).body.key;
    for (const key of [w.a.key, scopedPartner]) {
      const entry = await until("the signed-in user's entry", async () => {
        const f = await call(s, 'GET', '/api/v1/activity', { key, query: { entity_type: 'website_member', website_id: w.a.a2 } });
        return f.body.data.find((e: { entity_ids: string[] }) => e.entity_ids?.includes(invited.user_id!));
      });
      expect(entry, key).toMatchObject({ via_api_key: false, actor: { user: { id: u, email } } });
    }
  });
});
