import { describe, expect, it } from 'vitest';
import { GroupsView } from '../../queries/team/groups';
import { MembersView } from '../../queries/team/members';
import { requestInvitation } from '../../src/workers/invitations';
import { call, type TestServer } from '../support/server';
import type { TestSmtp } from '../support/smtp';
import { useWorldWithSmtp, type World } from '../support/tenancy';

let s: TestServer;
let w: World;
let smtp: TestSmtp;
useWorldWithSmtp((ctx) => ({ s, w, smtp } = ctx), { PUBLIC_BASE_URL: 'https://app.aivis.test' });

const ADMIN = '00000000-0000-0000-0000-000000000002';
let people = 0;
const person = () => `person-${++people}-${Date.now()}@example.com`;
const invite = (key: string, body: unknown) => call(s, 'POST', '/api/v1/invites', { key, body });
const bulk = (key: string, body: unknown) => call(s, 'POST', '/api/v1/invites/bulk', { key, body });
const site = async (name: string) => {
  const r = await call(s, 'POST', '/api/v1/websites', {
    key: w.a.key,
    body: { name, url: `https://${name.toLowerCase().replace(/\W+/g, '-')}.example.com` },
  });
  expect(r.status).toBe(201);
  return r.body.website.id as string;
};
const group = async (body: Record<string, unknown>, key = w.a.key) => {
  const r = await call(s, 'POST', '/api/v1/groups', { key, body });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body.group.id as string;
};
/** the acceptance link's token in the message sent to `to` */
const tokenIn = async (to: string) => {
  const [m] = await smtp.waitFor(to, 1, 15_000);
  const link = /https:\/\/app\.aivis\.test\/invites\/accept\?token=([A-Za-z0-9_-]+)/.exec(m.mail.text ?? '');
  expect(link, m.mail.text).not.toBeNull();
  return { token: link![1], mail: m };
};

describe('invites: direct', () => {
  it('given a direct organization invite of a new email, then the user is created at once and the answer has user_id, never invite_id', async () => {
    const email = person();
    const r = await invite(w.a.key, { type: 'organization', invite_method: 'direct', email, first_name: 'Ada', last_name: 'Lovelace' });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toMatchObject({ success: true, message: 'User added to organization' });
    expect(typeof r.body.user_id).toBe('string');
    expect(r.body).not.toHaveProperty('invite_id');
    const sites = await call(s, 'GET', `/api/v1/users/${r.body.user_id}/websites`, { key: w.a.key });
    expect(sites.status).toBe(200);
    // a viewer of the organization reaches every website with the organization role
    expect(sites.body.websites).toEqual(
      expect.arrayContaining(
        [w.a.a1, w.a.a2].map((website_id) => expect.objectContaining({ website_id, access_type: 'organization', role: 'viewer' })),
      ),
    );
    const again = await invite(w.a.key, { type: 'organization', invite_method: 'direct', email: email.toUpperCase() });
    expect(again).toMatchObject({ status: 409, body: { error: 'User is already a member of this organization' } });
    expect(smtp.to(email)).toHaveLength(0);
  });

  it('given a direct website invite by a key scoped to that website, then the user reaches that website only, with the role given', async () => {
    const email = person();
    const r = await invite(w.a.scoped, { type: 'website', invite_method: 'direct', email, website_id: w.a.a2, role: 'admin' });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.message).toBe('User added to website');
    const sites = await call(s, 'GET', `/api/v1/users/${r.body.user_id}/websites`, { key: w.a.key });
    expect(sites.body.websites).toEqual([{ website_id: w.a.a2, name: 'Acme Two', url: expect.any(String), access_type: 'website', role: 'admin' }]);
    // the same person added to a1 by the global key: the existing user, no second account
    const r2 = await invite(w.a.key, { type: 'website', invite_method: 'direct', email, website_id: w.a.a1 });
    expect(r2.body.user_id).toBe(r.body.user_id);
    expect((await call(s, 'GET', `/api/v1/users/${r.body.user_id}/websites`, { key: w.a.key })).body.websites).toHaveLength(2);
    // the scoped key sees the websites of its scope only
    expect(
      (await call(s, 'GET', `/api/v1/users/${r.body.user_id}/websites`, { key: w.a.scoped })).body.websites.map(
        (x: { website_id: string }) => x.website_id,
      ),
    ).toEqual([w.a.a2]);
  });

  it("given the scoped key's rules, then organization and group invites 403 global key required, a website outside its scope or another organization's 403", async () => {
    const before = await s.head();
    const g = { status: 403, body: { error: 'Forbidden: global API key required' } };
    expect(await invite(w.a.scoped, { type: 'organization', invite_method: 'direct', email: person() })).toMatchObject(g);
    expect(
      await invite(w.a.scoped, { type: 'group', invite_method: 'direct', email: person(), group_id: '6f1c2d3e-4b5a-4c6d-8e9f-0a1b2c3d4e5f' }),
    ).toMatchObject(g);
    const outside = { status: 403, body: { error: 'Unauthorized access to this website' } };
    expect(await invite(w.a.scoped, { type: 'website', invite_method: 'direct', email: person(), website_id: w.a.a1 })).toMatchObject(outside);
    expect(await invite(w.a.key, { type: 'website', invite_method: 'direct', email: person(), website_id: w.b.b1 })).toMatchObject(outside);
    expect(await invite(w.b.key, { type: 'website', invite_method: 'email', email: person(), website_id: w.a.a1 })).toMatchObject(outside);
    expect(
      await invite(w.a.key, { type: 'website', invite_method: 'direct', email: person(), website_id: '6f1c2d3e-4b5a-4c6d-8e9f-0a1b2c3d4e5f' }),
    ).toMatchObject({
      status: 404,
      body: { error: 'Website not found' },
    });
    expect(await invite(w.a.revoked, { type: 'organization', invite_method: 'direct', email: person() })).toMatchObject({ status: 401 });
    expect(await s.head()).toBe(before);
  });

  it('given role and role_id, then 400; a role_id of another organization or unknown 404; a custom role_id is given', async () => {
    const theirs = await call(s, 'POST', '/api/v1/roles', { key: w.b.key, body: { name: 'B only', permissions: { content: 'edit' } } });
    expect(theirs.status).toBe(201);
    const before = await s.head();
    const both = await invite(w.a.key, { type: 'organization', invite_method: 'direct', email: person(), role: 'admin', role_id: ADMIN });
    expect(both).toMatchObject({ status: 400, body: { error: 'role_id: role and role_id are mutually exclusive' } });
    expect(
      await invite(w.a.key, { type: 'organization', invite_method: 'direct', email: person(), role_id: theirs.body.role.role_id }),
    ).toMatchObject({
      status: 404,
      body: { error: 'Role not found' },
    });
    expect(
      await invite(w.a.key, { type: 'organization', invite_method: 'email', email: person(), role_id: '6f1c2d3e-4b5a-4c6d-8e9f-0a1b2c3d4e5f' }),
    ).toMatchObject({ status: 404 });
    for (const [body, error] of [
      [{ invite_method: 'direct', email: person() }, 'type is required'],
      [{ type: 'website', invite_method: 'direct', email: person() }, 'website_id is required'],
      [{ type: 'group', invite_method: 'direct', email: person() }, 'group_id is required'],
      [{ type: 'organization', invite_method: 'direct', email: 'not an email' }, 'email: must be an email address'],
      [{ type: 'organization', invite_method: 'sms', email: person() }, "invite_method: must be 'direct' or 'email'"],
      [{ type: 'organization', invite_method: 'direct', email: person(), role: 'owner' }, "role: must be 'admin' or 'viewer'"],
      [
        { type: 'organization', invite_method: 'direct', email: person(), role_id: '00000000-0000-0000-0000-000000000001' },
        'role_id: the owner role cannot be given',
      ],
      [{ type: 'organization', invite_method: 'direct', email: person(), website_id: w.a.a1 }, 'website_id: only with type website'],
    ] as [unknown, string][]) {
      const r = await invite(w.a.key, body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.error).toBe(error);
    }
    expect(await s.head()).toBe(before);
    const mine = await call(s, 'POST', '/api/v1/roles', { key: w.a.key, body: { name: 'Invitee role', permissions: { analytics: 'manage' } } });
    const r = await invite(w.a.key, { type: 'organization', invite_method: 'direct', email: person(), role_id: mine.body.role.role_id });
    expect(r.status).toBe(200);
    const members = await call(s, 'GET', '/api/v1/organizations/members', { key: w.a.key });
    expect(members.body.members.find((m: { user_id: string }) => m.user_id === r.body.user_id)).toMatchObject({
      role_id: mine.body.role.role_id,
      role: 'invitee-role',
      role_name: 'Invitee role',
    });
    // a role in use cannot be deleted
    expect(await call(s, 'DELETE', `/api/v1/roles/${mine.body.role.role_id}`, { key: w.a.key })).toMatchObject({
      status: 409,
      body: { error: 'Role is in use' },
    });
  });

  it('given ten concurrent direct invites of one new email, then one account and one membership: one 200, nine 409', async () => {
    const email = person();
    const answers = await Promise.all(Array.from({ length: 10 }, () => invite(w.a.key, { type: 'organization', invite_method: 'direct', email })));
    expect(answers.filter((r) => r.status === 200)).toHaveLength(1);
    expect(answers.filter((r) => r.status === 409)).toHaveLength(9);
    const members = await call(s, 'GET', '/api/v1/organizations/members', { key: w.a.key });
    expect(members.body.members.filter((m: { email: string }) => m.email === email)).toHaveLength(1);
  });
});

describe('invites: paused websites and the interface description', () => {
  it('given a paused website, then inviting to it is 403 as for a deleted one, directly or in a bulk call', async () => {
    const paused = await site('Paused Shop');
    expect((await call(s, 'PATCH', `/api/v1/websites/${paused}`, { key: w.a.key, body: { status: 'paused' } })).status).toBe(200);
    const before = await s.head();
    expect(await invite(w.a.key, { type: 'website', invite_method: 'direct', email: person(), website_id: paused })).toMatchObject({
      status: 403,
      body: { error: 'Unauthorized access to this website' },
    });
    expect(await s.head()).toBe(before);
    const r = await bulk(w.a.key, { invite_method: 'email', email: person(), website_ids: [paused] });
    expect(r.body.results).toEqual([{ website_id: paused, success: false, error: 'Unauthorized access to this website' }]);
  });

  it('given the OpenAPI document, then it describes the administration endpoints, and acceptance needs no key', async () => {
    const doc = (await call(s, 'GET', '/api/v1/openapi.json', { key: w.a.key })).body;
    for (const path of [
      '/api/v1/roles',
      '/api/v1/invites',
      '/api/v1/invites/bulk',
      '/api/v1/groups',
      '/api/v1/groups/{group_id}/members/{user_id}',
      '/api/v1/organizations/members',
      '/api/v1/users/{user_id}/websites',
    ]) {
      expect(doc.paths[path], path).toBeDefined();
    }
    expect(doc.paths['/api/v1/invites/accept'].post.security).toEqual([]);
    expect(doc.paths['/api/v1/invites/accept'].post.tags).toContain('extension');
    expect(doc.paths['/api/v1/invites'].post.tags).not.toContain('extension');
  });
});

describe('invites: email, the outbox and acceptance', () => {
  it('given an email invite, then a pending invite (invite_id, never user_id), one email with the link, and acceptance makes the membership once', async () => {
    const email = person();
    const r = await invite(w.a.scoped, { type: 'website', invite_method: 'email', email, website_id: w.a.a2, first_name: 'Grace' });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toMatchObject({ success: true, message: 'Invitation sent' });
    expect(typeof r.body.invite_id).toBe('string');
    expect(r.body).not.toHaveProperty('user_id');
    const { token, mail } = await tokenIn(email);
    expect(mail.envelope.to).toEqual([email]);
    expect(mail.mail.subject).toBe('You are invited to Org A on aivis');
    expect(mail.mail.text).toContain('Acme Two');
    // the same invite again while it is pending
    expect(await invite(w.a.key, { type: 'website', invite_method: 'email', email, website_id: w.a.a2 })).toMatchObject({
      status: 409,
      body: { error: 'An invite is already pending for this email' },
    });
    expect(await call(s, 'POST', '/api/v1/invites/accept', { body: { token, password: 'short' } })).toMatchObject({
      status: 400,
      body: { error: 'password: must be at least 8 characters' },
    });
    const accepted = await call(s, 'POST', '/api/v1/invites/accept', { body: { token, password: 'correct horse battery' } });
    expect(accepted.status, JSON.stringify(accepted.body)).toBe(200);
    expect(accepted.body).toMatchObject({
      success: true,
      organization_id: w.a.organization_id,
      memberships: [{ type: 'website', target_id: w.a.a2 }],
    });
    const stored = await s.rt.database.db('rm_team_users').where('id', accepted.body.user_id).first('password_hash', 'email_verified', 'first_name');
    expect(stored).toMatchObject({ email_verified: true, first_name: 'Grace' });
    expect(stored.password_hash).toMatch(/^\$argon2id\$/);
    const sites = await call(s, 'GET', `/api/v1/users/${accepted.body.user_id}/websites`, { key: w.a.key });
    expect(sites.body.websites).toMatchObject([{ website_id: w.a.a2, access_type: 'website', role: 'viewer' }]);
    expect(await call(s, 'POST', '/api/v1/invites/accept', { body: { token } })).toMatchObject({
      status: 400,
      body: { error: 'Invite has already been used' },
    });
    expect(await call(s, 'POST', '/api/v1/invites/accept', { body: { token: 'nope' } })).toMatchObject({
      status: 400,
      body: { error: 'Invalid invite token' },
    });
    expect(await call(s, 'POST', '/api/v1/invites/accept', { body: {} })).toMatchObject({ status: 400, body: { error: 'token is required' } });
    // the invite's message delivered again (a worker that died after requesting the email): the outbox has it already
    const recorded = (await s.rt.store.readStream(`org-${w.a.organization_id}`)).find(
      (e) => e.type === 'InviteCreated' && (e.data as { invite_id: string }).invite_id === r.body.invite_id,
    )!;
    const deps = { store: s.rt.store, bus: s.rt.bus, logger: s.rt.logger, publicBaseUrl: 'https://app.aivis.test' };
    expect(await requestInvitation(deps, recorded)).toBe('already');
    // one email for the invite, however long we look
    await new Promise((r) => setTimeout(r, 300));
    expect(smtp.to(email)).toHaveLength(1);
  });

  it('given two concurrent acceptances of one token, then exactly one makes the membership', async () => {
    const email = person();
    expect((await invite(w.a.key, { type: 'organization', invite_method: 'email', email, role: 'admin' })).status).toBe(200);
    const { token } = await tokenIn(email);
    const answers = await Promise.all(
      [1, 2, 3].map(() => call(s, 'POST', '/api/v1/invites/accept', { body: { token, password: 'correct horse battery' } })),
    );
    expect(answers.map((a) => a.status).sort()).toEqual([200, 400, 400]);
    const members = await call(s, 'GET', '/api/v1/organizations/members', { key: w.a.key });
    expect(members.body.members.filter((m: { email: string }) => m.email === email)).toMatchObject([{ role: 'admin', role_id: ADMIN }]);
  });
});

describe('invites: bulk', () => {
  it('given a direct bulk invite to three websites, one already joined and one outside the key, then each target has its own result and the user is created once', async () => {
    const email = person();
    const [x, y] = [await site('Bulk X'), await site('Bulk Y')];
    expect((await invite(w.a.key, { type: 'website', invite_method: 'direct', email, website_id: y })).status).toBe(200);
    const r = await bulk(w.a.key, { invite_method: 'direct', email, website_ids: [x, y, w.b.b1], role: 'viewer' });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.success).toBe(true);
    expect(r.body.results).toEqual([
      { website_id: x, success: true, message: 'User added to website', user_id: expect.any(String) },
      { website_id: y, success: false, error: 'User is already a member of this website' },
      { website_id: w.b.b1, success: false, error: 'Unauthorized access to this website' },
    ]);
    const sites = await call(s, 'GET', `/api/v1/users/${r.body.results[0].user_id}/websites`, { key: w.a.key });
    expect(sites.body.websites.map((s: { website_id: string }) => s.website_id).sort()).toEqual([x, y].sort());
  });

  it('given an email bulk invite, then one consolidated email naming every website, and its token joins them all', async () => {
    const email = person();
    const [x, y] = [await site('Consolidated One'), await site('Consolidated Two')];
    const r = await bulk(w.a.key, { invite_method: 'email', email, website_ids: [x, y] });
    expect(r.body.results.map((o: { success: boolean; invite_id?: string; user_id?: string }) => [o.success, typeof o.invite_id, o.user_id])).toEqual(
      [
        [true, 'string', undefined],
        [true, 'string', undefined],
      ],
    );
    const { token, mail } = await tokenIn(email);
    expect(mail.mail.text).toContain('Consolidated One');
    expect(mail.mail.text).toContain('Consolidated Two');
    // a new account needs its password (CONTRACT): refused without one, the token still good
    expect(await call(s, 'POST', '/api/v1/invites/accept', { body: { token } })).toMatchObject({
      status: 400,
      body: { error: 'password is required' },
    });
    const accepted = await call(s, 'POST', '/api/v1/invites/accept', { body: { token, password: 'correct horse battery' } });
    expect(accepted.body.memberships).toHaveLength(2);
    await new Promise((r) => setTimeout(r, 300));
    expect(smtp.to(email)).toHaveLength(1);
  });

  it('given bulk input out of its limits, then 400 naming it; group bulk with a scoped key 403', async () => {
    const before = await s.head();
    const ids = (n: number) => Array.from({ length: n }, (_, i) => `6f1c2d3e-4b5a-4c6d-8e9f-${String(i).padStart(12, '0')}`);
    for (const [body, error] of [
      [{ invite_method: 'direct', email: person() }, 'body: exactly one of website_ids or group_ids is required'],
      [
        { invite_method: 'direct', email: person(), website_ids: [w.a.a1], group_ids: ids(1) },
        'body: exactly one of website_ids or group_ids is required',
      ],
      [{ invite_method: 'direct', email: person(), website_ids: [] }, 'website_ids: must list 1 to 50 websites'],
      [{ invite_method: 'direct', email: person(), website_ids: ids(51) }, 'website_ids: must list 1 to 50 websites'],
      [{ invite_method: 'direct', email: person(), group_ids: ids(51) }, 'group_ids: must list 1 to 50 groups'],
      [{ invite_method: 'direct', email: person(), website_ids: [w.a.a1, w.a.a1] }, 'website_ids: must not list an id twice'],
    ] as [unknown, string][]) {
      const r = await bulk(w.a.key, body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.error).toBe(error);
    }
    expect(await bulk(w.a.scoped, { invite_method: 'direct', email: person(), group_ids: ids(1) })).toMatchObject({
      status: 403,
      body: { error: 'Forbidden: global API key required' },
    });
    expect(await s.head()).toBe(before);
    // a scoped key's website bulk: its own website joins, the other is refused on its own
    const r = await bulk(w.a.scoped, { invite_method: 'direct', email: person(), website_ids: [w.a.a2, w.a.a1] });
    expect(r.body.results.map((o: { success: boolean; error?: string }) => [o.success, o.error])).toEqual([
      [true, undefined],
      [false, 'Unauthorized access to this website'],
    ]);
  });
});

describe('groups and their members', () => {
  it('given a group created with websites, then it is listed in camelCase with its websites; externalId only for partner keys', async () => {
    const x = await site('Grouped X');
    const id = await group({ name: 'Retail', website_ids: [x, w.a.a1], external_id: 'partner-retail' });
    const list = await call(s, 'GET', '/api/v1/groups', { key: w.a.key });
    GroupsView.parse(list.body);
    const g = list.body.groups.find((x: { id: string }) => x.id === id);
    expect(g).toMatchObject({
      name: 'Retail',
      orgId: w.a.organization_id,
      billingEnabled: false,
      externalId: 'partner-retail',
      websiteIds: [x, w.a.a1],
    });
    expect(g.websites[0]).toEqual({ id: x, websiteUrl: 'https://grouped-x.example.com', websiteName: 'Grouped X' });
    expect(typeof g.createdAt).toBe('string');
    const plain = await call(s, 'GET', `/api/v1/groups/${id}`, { key: w.a.plainGlobal });
    expect(plain.status).toBe(200);
    expect(plain.body.group).not.toHaveProperty('externalId');
    const byExternal = await call(s, 'GET', '/api/v1/groups', { key: w.a.key, query: { external_id: 'partner-retail' } });
    expect(byExternal.body.groups.map((x: { id: string }) => x.id)).toEqual([id]);
    expect(await call(s, 'GET', '/api/v1/groups', { key: w.a.plainGlobal, query: { external_id: 'partner-retail' } })).toMatchObject({ status: 403 });
    expect(await call(s, 'GET', '/api/v1/groups', { key: w.a.scoped })).toMatchObject({
      status: 403,
      body: { error: 'Forbidden: global API key required' },
    });
    expect(await call(s, 'GET', `/api/v1/groups/${id}`, { key: w.b.key })).toMatchObject({ status: 404, body: { error: 'Group not found' } });
    expect((await call(s, 'GET', '/api/v1/groups', { key: w.b.key })).body.groups.map((x: { id: string }) => x.id)).not.toContain(id);
  });

  it('given a patch, then websites are added and removed, and an external_id held by another group is 409 with existing', async () => {
    const [x, y] = [await site('Patch X'), await site('Patch Y')];
    const id = await group({ name: 'Patchable', website_ids: [x] });
    const other = await group({ name: 'Holder', external_id: 'held-id' });
    const r = await call(s, 'PATCH', `/api/v1/groups/${id}`, {
      key: w.a.key,
      body: { name: 'Patched', add_website_ids: [y], remove_website_ids: [x], billing_enabled: true },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.group).toMatchObject({ name: 'Patched', websiteIds: [y], billingEnabled: true });
    const before = await s.head();
    const taken = await call(s, 'PATCH', `/api/v1/groups/${id}`, { key: w.a.key, body: { external_id: 'held-id' } });
    expect(taken).toMatchObject({
      status: 409,
      body: { error: 'external_id is already mapped to another group', existing: { id: other, name: 'Holder' } },
    });
    // another organization's website: 403 as everywhere (CONTRACT, another organization's resource); an unknown id: 400
    expect(await call(s, 'PATCH', `/api/v1/groups/${id}`, { key: w.a.key, body: { add_website_ids: [w.b.b1] } })).toMatchObject({
      status: 403,
      body: { error: 'Unauthorized access to this website' },
    });
    const ghost = '6f1c2d3e-4b5a-4c6d-8e9f-0a1b2c3d4e5f';
    expect(await call(s, 'PATCH', `/api/v1/groups/${id}`, { key: w.a.key, body: { add_website_ids: [ghost] } })).toMatchObject({
      status: 400,
      body: { error: `add_website_ids: ${ghost} is not a website of this organization` },
    });
    expect(await s.head()).toBe(before);
  });

  it('given a group member with explicit memberships, when removed from the group, then the group membership and those website memberships go at once; again: false and 0', async () => {
    const [x, y, z] = [await site('Member X'), await site('Member Y'), await site('Member Z')];
    const id = await group({ name: 'Removal', website_ids: [x, y] });
    const other = await group({ name: 'Other access', website_ids: [y] });
    const email = person();
    const joined = await invite(w.a.key, { type: 'group', invite_method: 'direct', email, group_id: id });
    expect(joined.status, JSON.stringify(joined.body)).toBe(200);
    expect(joined.body.message).toBe('User added to group');
    const user = joined.body.user_id;
    for (const site of [x, z])
      expect((await invite(w.a.key, { type: 'website', invite_method: 'direct', email, website_id: site })).status).toBe(200);
    expect((await invite(w.a.key, { type: 'group', invite_method: 'direct', email, group_id: other })).status).toBe(200);
    const members = await call(s, 'GET', `/api/v1/groups/${id}/members`, { key: w.a.key, query: { access_type: 'group' } });
    MembersView.parse(members.body);
    expect(members.body.members.map((m: { user_id: string }) => m.user_id)).toEqual([user]);
    const all = await call(s, 'GET', `/api/v1/groups/${id}/members`, { key: w.a.key });
    expect(all.body.members.find((m: { user_id: string }) => m.user_id === w.a.owner_user_id)).toMatchObject({
      access_type: 'organization',
      role: 'owner',
    });

    const r = await call(s, 'DELETE', `/api/v1/groups/${id}/members/${user}`, { key: w.a.key });
    expect(r).toMatchObject({ status: 200, body: { success: true, group_membership_removed: true, website_memberships_removed: 1 } });
    // z is outside the group and y is still reached through the other group
    const sites = await call(s, 'GET', `/api/v1/users/${user}/websites`, { key: w.a.key });
    expect(sites.body.websites.map((s: { website_id: string; access_type: string }) => [s.website_id, s.access_type]).sort()).toEqual(
      [
        [y, 'group'],
        [z, 'website'],
      ].sort(),
    );
    const before = await s.head();
    const again = await call(s, 'DELETE', `/api/v1/groups/${id}/members/${user}`, { key: w.a.key });
    expect(again).toMatchObject({ status: 200, body: { success: true, group_membership_removed: false, website_memberships_removed: 0 } });
    expect(await s.head()).toBe(before);
  });

  it("given an organization member, then removing them from a group is 409; the key's own user is refused; scoped keys 403; another organization's group 404", async () => {
    const id = await group({ name: 'Guarded' });
    const email = person();
    const member = await invite(w.a.key, { type: 'organization', invite_method: 'direct', email });
    expect((await invite(w.a.key, { type: 'group', invite_method: 'direct', email, group_id: id })).status).toBe(200);
    const before = await s.head();
    const remove = (user: string, key: string) => call(s, 'DELETE', `/api/v1/groups/${id}/members/${user}`, { key });
    expect(await remove(member.body.user_id, w.a.key)).toMatchObject({
      status: 409,
      body: { error: 'Cannot remove an organization member from a group' },
    });
    expect(await remove(w.a.owner_user_id, w.a.key)).toMatchObject({ status: 403, body: { error: "The key's own user cannot be removed" } });
    expect(await remove(member.body.user_id, w.a.scoped)).toMatchObject({ status: 403, body: { error: 'Forbidden: global API key required' } });
    expect(await remove(member.body.user_id, w.b.key)).toMatchObject({ status: 404, body: { error: 'Group not found' } });
    expect(await s.head()).toBe(before);
  });
});
