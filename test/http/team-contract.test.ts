import { describe, expect, it, vi } from 'vitest';
import { INVITE_TTL_MS } from '../../commands/team/invites';
import { call, type TestServer } from '../support/server';
import type { TestSmtp } from '../support/smtp';
import { useWorldWithSmtp, type World } from '../support/tenancy';
import { until } from '../support/until';

/**
 * The organization administration contract, rule by rule, where the other team files leave a rule untested: the
 * other organization and a scoped key on every endpoint, malformed ids naming their field, token expiry over HTTP,
 * the bulk limit's edge, and another organization's ids in invites and groups.
 */
let s: TestServer;
let w: World;
let smtp: TestSmtp;
useWorldWithSmtp((ctx) => ({ s, w, smtp } = ctx), { PUBLIC_BASE_URL: 'https://app.aivis.test' });

let people = 0;
const person = () => `contract-${++people}-${Date.now()}@example.com`;
const UNKNOWN = '6f1c2d3e-4b5a-4c6d-8e9f-0a1b2c3d4e5f';
const GLOBAL = { status: 403, body: { error: 'Forbidden: global API key required' } };
const WEBSITE = { status: 403, body: { error: 'Unauthorized access to this website' } };

/** a request refused with `expected`, the event log unmoved */
async function refused(
  method: string,
  path: string,
  key: string | null,
  expected: { status: number; body: { error: string } },
  body?: unknown,
  query?: Record<string, string>,
) {
  const before = await s.head();
  const r = await call(s, method, path, { key, body, query });
  expect(r, `${method} ${path}`).toMatchObject(expected);
  expect(await s.head(), `${method} ${path} wrote`).toBe(before);
}

/** An invite sent with this key. */
const invite = (key: string, body: Record<string, unknown>) => call(s, 'POST', '/api/v1/invites', { key, body });
/** The token of the invite email the person received. */
const tokenMailedTo = async (email: string) => {
  const [m] = await smtp.waitFor(email, 1, 15_000);
  return /token=([A-Za-z0-9_-]+)/.exec(m.mail.text ?? '')![1];
};
const groupOf = async (key: string, body: Record<string, unknown>) => {
  const r = await call(s, 'POST', '/api/v1/groups', { key, body });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body.group.id as string;
};

describe('groups: a scoped key and the other organization on every group endpoint', () => {
  it('given a scoped key, then creating, reading, patching a group and listing its members are 403 global key required, nothing written', async () => {
    const g = await groupOf(w.a.key, { name: 'Scoped refusals', website_ids: [w.a.a2] });
    await refused('POST', '/api/v1/groups', w.a.scoped, GLOBAL, { name: 'By a scoped key', website_ids: [w.a.a2] });
    await refused('GET', `/api/v1/groups/${g}`, w.a.scoped, GLOBAL);
    await refused('PATCH', `/api/v1/groups/${g}`, w.a.scoped, GLOBAL, { name: 'Renamed' });
    await refused('GET', `/api/v1/groups/${g}/members`, w.a.scoped, GLOBAL);
    await refused('POST', '/api/v1/invites/bulk', w.a.scoped, GLOBAL, { invite_method: 'email', email: person(), group_ids: [g] });
  });

  it("given another organization's group, then get, patch, members and invites to it are 404 Group not found, nothing written", async () => {
    const theirs = await groupOf(w.b.key, { name: 'B group', website_ids: [w.b.b1] });
    const nf = { status: 404, body: { error: 'Group not found' } };
    await refused('GET', `/api/v1/groups/${theirs}`, w.a.key, nf);
    await refused('PATCH', `/api/v1/groups/${theirs}`, w.a.key, nf, { name: 'Taken over' });
    await refused('GET', `/api/v1/groups/${theirs}/members`, w.a.key, nf);
    await refused('POST', '/api/v1/invites', w.a.key, nf, { type: 'group', invite_method: 'direct', email: person(), group_id: theirs });
    const before = await s.head();
    const r = await call(s, 'POST', '/api/v1/invites/bulk', {
      key: w.a.key,
      body: { invite_method: 'direct', email: person(), group_ids: [theirs] },
    });
    expect(r.body).toEqual({ success: true, results: [{ group_id: theirs, success: false, error: 'Group not found' }] });
    expect(await s.head()).toBe(before);
    expect((await call(s, 'GET', `/api/v1/groups/${theirs}`, { key: w.b.key })).body.group.name).toBe('B group');
  });

  it("given another organization's website in a new group or a patch, then 403 Unauthorized access to this website, nothing written", async () => {
    const g = await groupOf(w.a.key, { name: 'Own websites only' });
    await refused('POST', '/api/v1/groups', w.a.key, WEBSITE, { name: 'Mixed', website_ids: [w.a.a1, w.b.b1] });
    await refused('PATCH', `/api/v1/groups/${g}`, w.a.key, WEBSITE, { add_website_ids: [w.b.b1] });
    // an id no organization has is bad input naming the field
    await refused(
      'POST',
      '/api/v1/groups',
      w.a.key,
      { status: 400, body: { error: `website_ids: ${UNKNOWN} is not a website of this organization` } },
      { name: 'Ghost', website_ids: [UNKNOWN] },
    );
  });

  it('given a global key that is not a partner key, then external_id is refused on create and patch and never shown', async () => {
    const partnerOnly = { status: 403, body: { error: 'Forbidden: partner API key required' } };
    await refused('POST', '/api/v1/groups', w.a.plainGlobal, partnerOnly, { name: 'External', external_id: 'ext-1' });
    const g = await groupOf(w.a.plainGlobal, { name: 'Plain' });
    await refused('PATCH', `/api/v1/groups/${g}`, w.a.plainGlobal, partnerOnly, { external_id: 'ext-2' });
    const created = await call(s, 'POST', '/api/v1/groups', { key: w.a.plainGlobal, body: { name: 'Plain two' } });
    expect(created.body.group).not.toHaveProperty('externalId');
    const listed = await call(s, 'GET', '/api/v1/groups', { key: w.a.plainGlobal });
    for (const x of listed.body.groups) expect(x).not.toHaveProperty('externalId');
    // the partner key sees it, null when unset
    expect((await call(s, 'GET', `/api/v1/groups/${g}`, { key: w.a.key })).body.group.externalId).toBeNull();
  });
});

describe('members and user websites: the other organization and a scoped key', () => {
  it("given another organization's member, then changing their role is 404 Member not found; a role_id of another organization 404 Role not found", async () => {
    const mine = await invite(w.a.key, { type: 'organization', invite_method: 'direct', email: person() });
    const user = mine.body.user_id as string;
    await refused('PATCH', `/api/v1/organizations/members/${user}`, w.b.key, { status: 404, body: { error: 'Member not found' } }, { role: 'admin' });
    const theirs = await call(s, 'POST', '/api/v1/roles', {
      key: w.b.key,
      body: { name: 'B editor', permissions: { content: 'edit', team: 'edit' } },
    });
    expect(theirs.status).toBe(201);
    await refused(
      'PATCH',
      `/api/v1/organizations/members/${user}`,
      w.a.key,
      { status: 404, body: { error: 'Role not found' } },
      { role_id: theirs.body.role.role_id },
    );
    await refused(
      'POST',
      '/api/v1/invites/bulk',
      w.a.key,
      { status: 404, body: { error: 'Role not found' } },
      { invite_method: 'direct', email: person(), website_ids: [w.a.a1], role_id: theirs.body.role.role_id },
    );
  });

  it("given another organization's website, then its members cannot be listed, changed or removed (403)", async () => {
    const theirs = await invite(w.b.key, { type: 'website', invite_method: 'direct', email: person(), website_id: w.b.b1 });
    const user = theirs.body.user_id as string;
    await refused('GET', `/api/v1/websites/${w.b.b1}/members`, w.a.key, WEBSITE);
    await refused('PATCH', `/api/v1/websites/${w.b.b1}/members/${user}`, w.a.key, WEBSITE, { role: 'admin' });
    await refused('DELETE', `/api/v1/websites/${w.b.b1}/members/${user}`, w.a.key, WEBSITE);
    await refused('PATCH', `/api/v1/websites/${w.a.a1}/members/${user}`, w.a.scoped, WEBSITE, { role: 'admin' });
    await refused('GET', `/api/v1/websites/${w.a.a1}/members`, w.a.scoped, WEBSITE);
  });

  it("given GET /users/{id}/websites, then an unknown user is 404, the other organization's user an empty list (the two organizations not told apart), and a scoped key sees an empty list for a user outside its websites", async () => {
    const outside = await invite(w.a.key, { type: 'website', invite_method: 'direct', email: person(), website_id: w.a.a1 });
    await refused('GET', `/api/v1/users/${UNKNOWN}/websites`, w.a.key, { status: 404, body: { error: 'User not found' } });
    for (const user of [outside.body.user_id, w.a.owner_user_id]) {
      expect(await call(s, 'GET', `/api/v1/users/${user}/websites`, { key: w.b.key })).toMatchObject({ status: 200, body: { websites: [] } });
    }
    const seen = await call(s, 'GET', `/api/v1/users/${outside.body.user_id}/websites`, { key: w.a.scoped });
    expect(seen).toMatchObject({ status: 200, body: { websites: [] } });
    expect((await call(s, 'GET', `/api/v1/users/${outside.body.user_id}/websites`, { key: w.a.key })).body.websites).toMatchObject([
      { website_id: w.a.a1 },
    ]);
  });
});

describe('keys on every team endpoint', () => {
  it('given no key, a malformed key or a revoked key, then every team endpoint but acceptance is 401 Unauthorized and nothing is written', async () => {
    const g = await groupOf(w.a.key, { name: 'Key checks' });
    const u = w.a.owner_user_id;
    const endpoints: [string, string, unknown?][] = [
      ['GET', '/api/v1/roles'],
      ['POST', '/api/v1/roles', { name: 'No key', permissions: { content: 'edit' } }],
      ['DELETE', `/api/v1/roles/${UNKNOWN}`],
      ['POST', '/api/v1/invites', { type: 'organization', invite_method: 'direct', email: person() }],
      ['POST', '/api/v1/invites/bulk', { invite_method: 'direct', email: person(), website_ids: [w.a.a1] }],
      ['GET', '/api/v1/groups'],
      ['POST', '/api/v1/groups', { name: 'No key' }],
      ['GET', `/api/v1/groups/${g}`],
      ['PATCH', `/api/v1/groups/${g}`, { name: 'No key' }],
      ['GET', `/api/v1/groups/${g}/members`],
      ['DELETE', `/api/v1/groups/${g}/members/${UNKNOWN}`],
      ['GET', '/api/v1/organizations/members'],
      ['PATCH', `/api/v1/organizations/members/${UNKNOWN}`, { role: 'viewer' }],
      ['DELETE', `/api/v1/organizations/members/${UNKNOWN}`],
      ['GET', `/api/v1/websites/${w.a.a1}/members`],
      ['PATCH', `/api/v1/websites/${w.a.a1}/members/${UNKNOWN}`, { role: 'viewer' }],
      ['DELETE', `/api/v1/websites/${w.a.a1}/members/${UNKNOWN}`],
      ['GET', `/api/v1/users/${u}/websites`],
    ];
    for (const [method, path, body] of endpoints) {
      for (const key of [null, 'aivis_not-a-key', w.a.revoked])
        await refused(method, path, key, { status: 401, body: { error: 'Unauthorized' } }, body);
    }
  });
});

describe('malformed ids and bodies on every team endpoint', () => {
  it('given an id that is not a UUID in any path, then 400 naming the parameter and nothing written', async () => {
    const g = await groupOf(w.a.key, { name: 'Path checks' });
    const cases: [string, string, string, unknown?][] = [
      ['DELETE', '/api/v1/roles/xyz', 'role_id: must be a GUID'],
      ['GET', '/api/v1/groups/xyz', 'group_id: must be a UUID'],
      ['PATCH', '/api/v1/groups/xyz', 'group_id: must be a UUID', { name: 'x' }],
      ['GET', '/api/v1/groups/xyz/members', 'group_id: must be a UUID'],
      ['DELETE', `/api/v1/groups/xyz/members/${UNKNOWN}`, 'group_id: must be a UUID'],
      ['DELETE', `/api/v1/groups/${g}/members/xyz`, 'user_id: must be a UUID'],
      ['PATCH', '/api/v1/organizations/members/xyz', 'user_id: must be a UUID', { role: 'viewer' }],
      ['DELETE', '/api/v1/organizations/members/xyz', 'user_id: must be a UUID'],
      ['GET', '/api/v1/websites/xyz/members', 'website_id: must be a UUID'],
      ['PATCH', `/api/v1/websites/${w.a.a1}/members/xyz`, 'user_id: must be a UUID', { role: 'viewer' }],
      ['DELETE', `/api/v1/websites/xyz/members/${UNKNOWN}`, 'website_id: must be a UUID'],
      ['GET', '/api/v1/users/xyz/websites', 'user_id: must be a UUID'],
    ];
    for (const [method, path, error, body] of cases) await refused(method, path, w.a.key, { status: 400, body: { error } }, body);
  });

  it('given a query parameter a team listing does not take, then 400 naming it rather than silently ignoring it', async () => {
    const g = await groupOf(w.a.key, { name: 'Query checks' });
    const owner = w.a.owner_user_id;
    for (const path of [
      '/api/v1/roles',
      `/api/v1/groups/${g}`,
      '/api/v1/organizations/members',
      `/api/v1/websites/${w.a.a1}/members`,
      `/api/v1/users/${owner}/websites`,
      '/api/v1/groups',
      `/api/v1/groups/${g}/members`,
    ]) {
      expect(await call(s, 'GET', path, { key: w.a.key, query: { page_num: 1 } }), path).toMatchObject({
        status: 400,
        body: { error: 'page_num is not allowed' },
      });
    }
  });

  it("given a group's members filtered by an access type a group member cannot have, then 400 naming it; organization lists the organization's members", async () => {
    const g = await groupOf(w.a.key, { name: 'Access types' });
    expect(await call(s, 'GET', `/api/v1/groups/${g}/members`, { key: w.a.key, query: { access_type: 'website' } })).toMatchObject({
      status: 400,
      body: { error: "access_type: must be 'organization' or 'group'" },
    });
    const viewer = await invite(w.a.key, { type: 'organization', invite_method: 'direct', email: person() });
    const org = (await call(s, 'GET', '/api/v1/organizations/members', { key: w.a.key })).body.members;
    const listed = (await call(s, 'GET', `/api/v1/groups/${g}/members`, { key: w.a.key, query: { access_type: 'organization' } })).body.members;
    expect(listed.map((m: { user_id: string }) => m.user_id)).toEqual(org.map((m: { user_id: string }) => m.user_id));
    expect(listed).toEqual(
      expect.arrayContaining([expect.objectContaining({ user_id: viewer.body.user_id, access_type: 'organization', role: 'viewer' })]),
    );
  });

  it('given ill-typed bodies, then 400 naming the field, never a 500, nothing written', async () => {
    const g = await groupOf(w.a.key, { name: 'Body checks' });
    const cases: [string, string, unknown, string][] = [
      ['POST', '/api/v1/roles', { name: 42 }, 'name: must be a string'],
      ['POST', '/api/v1/roles', { name: 'Typed', permissions: 'all' }, 'permissions: Invalid input: expected object, received string'],
      ['POST', '/api/v1/invites', { type: 'organization', invite_method: 'direct', email: ['a@example.com'] }, 'email: must be a string'],
      ['POST', '/api/v1/invites', { type: 'group', invite_method: 'direct', email: person(), group_id: 'xyz' }, 'group_id: must be a UUID'],
      [
        'POST',
        '/api/v1/invites',
        { type: 'website', invite_method: 'direct', email: person(), website_id: w.a.a1, first_name: 7 },
        'first_name: must be a string',
      ],
      ['POST', '/api/v1/invites', { type: 'organization', invite_method: 'direct', email: person(), group_id: g }, 'group_id: only with type group'],
      ['POST', '/api/v1/invites/bulk', { invite_method: 'direct', email: person(), website_ids: ['xyz'] }, 'website_ids[0]: must be a UUID'],
      [
        'POST',
        '/api/v1/invites/bulk',
        { invite_method: 'direct', email: person(), website_ids: [w.a.a1], role: 'admin', role_id: '00000000-0000-0000-0000-000000000003' },
        'role_id: role and role_id are mutually exclusive',
      ],
      ['POST', '/api/v1/invites/accept', { token: 5 }, 'token: must be a string'],
      ['POST', '/api/v1/groups', { name: 'Typed', website_ids: w.a.a1 }, 'website_ids: Invalid input: expected array, received string'],
      ['POST', '/api/v1/groups', { name: 'Typed', billing_enabled: 'yes' }, 'billing_enabled: must be a boolean'],
      [
        'PATCH',
        `/api/v1/groups/${g}`,
        { add_website_ids: [w.a.a1], remove_website_ids: [w.a.a1] },
        `remove_website_ids: ${w.a.a1} is also in add_website_ids`,
      ],
      [
        'PATCH',
        `/api/v1/organizations/members/${UNKNOWN}`,
        { role: 'admin', role_id: '00000000-0000-0000-0000-000000000002' },
        'body: exactly one of role or role_id is required',
      ],
    ];
    for (const [method, path, body, error] of cases) {
      const before = await s.head();
      const r = await call(s, method, path, { key: w.a.key, body });
      expect(r.status, `${method} ${path} ${JSON.stringify(body)}: ${JSON.stringify(r.body)}`).toBe(400);
      expect(r.body.error, JSON.stringify(body)).toBe(error);
      expect(await s.head()).toBe(before);
    }
  });
});

describe('bulk invites at the limit', () => {
  it('given exactly 50 websites, then 200 with one result per target in order, each on its own (51 is 400, covered in team-invites)', async () => {
    const ids = [w.a.a1, w.b.b1, ...Array.from({ length: 48 }, (_, i) => `6f1c2d3e-4b5a-4c6d-8e9f-${String(i).padStart(12, '0')}`)];
    const r = await call(s, 'POST', '/api/v1/invites/bulk', { key: w.a.key, body: { invite_method: 'direct', email: person(), website_ids: ids } });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.results).toHaveLength(50);
    expect(r.body.results.map((o: { website_id: string }) => o.website_id)).toEqual(ids);
    expect(r.body.results[0]).toMatchObject({ success: true, message: 'User added to website' });
    expect(r.body.results[1]).toEqual({ website_id: w.b.b1, success: false, error: 'Unauthorized access to this website' });
    for (const o of r.body.results.slice(2)) expect(o).toMatchObject({ success: false, error: 'Website not found' });
  });
});

describe('invite acceptance over HTTP', () => {
  it('given an email invite whose 14 days have passed, when its link is followed, then 400 Invite has expired and no membership', async () => {
    const email = person();
    const r = await invite(w.a.key, { type: 'website', invite_method: 'email', email, website_id: w.a.a1 });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const token = await tokenMailedTo(email);
    const before = await s.head();
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + INVITE_TTL_MS + 60_000 });
    let late: Awaited<ReturnType<typeof call>>;
    try {
      late = await call(s, 'POST', '/api/v1/invites/accept', { body: { token, password: 'correct horse battery' } });
    } finally {
      vi.useRealTimers();
    }
    expect(late).toMatchObject({ status: 400, body: { error: 'Invite has expired' } });
    expect(await s.head()).toBe(before);
    const members = await call(s, 'GET', `/api/v1/websites/${w.a.a1}/members`, { key: w.a.key });
    expect(members.body.members.map((x: { email: string }) => x.email)).not.toContain(email);
    // back within its 14 days, the same token still works: the late call changed nothing
    expect((await call(s, 'POST', '/api/v1/invites/accept', { body: { token, password: 'correct horse battery' } })).status).toBe(200);
  });
});

describe('roles in use', () => {
  it('given a custom role held only by a pending email invite or by a website member, then deleting it is 409 Role is in use until nothing holds it', async () => {
    const pendingRole = await call(s, 'POST', '/api/v1/roles', {
      key: w.a.key,
      body: { name: 'Pending holder', permissions: { integrations: 'manage', api: 'edit' } },
    });
    expect(pendingRole.status, JSON.stringify(pendingRole.body)).toBe(201);
    const email = person();
    expect((await invite(w.a.key, { type: 'organization', invite_method: 'email', email, role_id: pendingRole.body.role.role_id })).status).toBe(200);
    await refused('DELETE', `/api/v1/roles/${pendingRole.body.role.role_id}`, w.a.key, { status: 409, body: { error: 'Role is in use' } });

    const siteRole = await call(s, 'POST', '/api/v1/roles', {
      key: w.a.key,
      body: { name: 'Site holder', permissions: { billing: 'manage', api: 'edit' } },
    });
    const held = await invite(w.a.key, {
      type: 'website',
      invite_method: 'direct',
      email: person(),
      website_id: w.a.a1,
      role_id: siteRole.body.role.role_id,
    });
    expect(held.status).toBe(200);
    await refused('DELETE', `/api/v1/roles/${siteRole.body.role.role_id}`, w.a.key, { status: 409, body: { error: 'Role is in use' } });
    expect((await call(s, 'DELETE', `/api/v1/websites/${w.a.a1}/members/${held.body.user_id}`, { key: w.a.key })).status).toBe(200);
    expect(await call(s, 'DELETE', `/api/v1/roles/${siteRole.body.role.role_id}`, { key: w.a.key })).toMatchObject({
      status: 200,
      body: { success: true },
    });
  });
});

describe('acceptance and existing accounts', () => {
  it('given a person who already has an account here, when they accept an email invite without a password, then they join with their own account', async () => {
    const email = person();
    const direct = await invite(w.a.key, { type: 'website', invite_method: 'direct', email, website_id: w.a.a1 });
    expect(direct.status).toBe(200);
    expect((await invite(w.a.key, { type: 'website', invite_method: 'email', email, website_id: w.a.a2 })).status).toBe(200);
    const token = await tokenMailedTo(email);
    const accepted = await call(s, 'POST', '/api/v1/invites/accept', { body: { token } });
    expect(accepted).toMatchObject({
      status: 200,
      body: { success: true, user_id: direct.body.user_id, memberships: [{ type: 'website', target_id: w.a.a2 }] },
    });
    const sites = await call(s, 'GET', `/api/v1/users/${direct.body.user_id}/websites`, { key: w.a.key });
    expect(sites.body.websites.map((x: { website_id: string }) => x.website_id).sort()).toEqual([w.a.a1, w.a.a2].sort());
  });
});

describe('the activity feed of group and invite changes', () => {
  it('given a group created, a person invited by email and directly to it and removed from it, then each change is in the feed, by a key (actor.user null)', async () => {
    const g = await groupOf(w.a.key, { name: 'Audited group', website_ids: [w.a.a1] });
    const invitedByEmail = await invite(w.a.key, { type: 'website', invite_method: 'email', email: person(), website_id: w.a.a1 });
    const joined = await invite(w.a.key, { type: 'group', invite_method: 'direct', email: person(), group_id: g });
    expect(joined.status).toBe(200);
    // a direct invite creates the account at once, its email not yet verified
    expect(await s.rt.database.db('rm_team_users').where('id', joined.body.user_id).first('email_verified')).toEqual({ email_verified: false });
    expect((await call(s, 'DELETE', `/api/v1/groups/${g}/members/${joined.body.user_id}`, { key: w.a.key })).status).toBe(200);
    const wanted: [string, string, string, string | null][] = [
      ['group', 'created', g, null],
      ['invite', 'created', invitedByEmail.body.invite_id, w.a.a1],
      ['user', 'created', joined.body.user_id, null],
      ['group_member', 'created', joined.body.user_id, null],
      ['group_member', 'deleted', joined.body.user_id, null],
    ];
    const feed = await until('the group and invite entries', async () => {
      const f = await call(s, 'GET', '/api/v1/activity', { key: w.a.key, query: { page_size: 100 } });
      const found = wanted.map(([type, change, id]) =>
        f.body.data.find(
          (e: { entity_type: string; change_type: string; entity_ids: string[] | null }) =>
            e.entity_type === type && e.change_type === change && e.entity_ids?.includes(id),
        ),
      );
      return found.every(Boolean) ? found : undefined;
    });
    for (const [i, e] of feed.entries())
      expect(e, wanted[i].join(' ')).toMatchObject({ website_id: wanted[i][3], via_api_key: true, actor: { user: null } });
    // the other organization's feed has none of them
    const other = await call(s, 'GET', '/api/v1/activity', { key: w.b.key, query: { page_size: 100 } });
    expect(other.body.data.filter((e: { entity_ids: string[] | null }) => e.entity_ids?.includes(g))).toEqual([]);
  });
});
