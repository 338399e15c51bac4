import { describe, expect, it } from 'vitest';
import { RolesView, RoleView } from '../../queries/team/roles';
import { call, type TestServer, sharedServer } from '../support/server';
import { useWorld, type World } from '../support/tenancy';
import { until } from '../support/until';

let s: TestServer;
let w: World;
useWorld((ctx) => ({ s, w } = ctx), sharedServer);

const OWNER = '00000000-0000-0000-0000-000000000001';
const ADMIN = '00000000-0000-0000-0000-000000000002';
const VIEWER = '00000000-0000-0000-0000-000000000003';
let n = 10;
/** a matrix no other role has: one category raised to `edit`, another to `manage`, by a counter */
const CATEGORIES = ['content', 'prompts', 'competitors', 'analytics', 'integrations', 'brand_knowledge', 'team', 'billing', 'api', 'organization'];
const uniqueMatrix = () => {
  const i = n++;
  return { [CATEGORIES[i % 10]]: 'edit', [CATEGORIES[(Math.floor(i / 10) + 1 + (i % 10)) % 10]]: 'manage' };
};

const createRole = (key: string, body: unknown) => call(s, 'POST', '/api/v1/roles', { key, body });

describe('roles', () => {
  it('given a new organization, when roles are listed, then the three system roles come with their sentinel ids', async () => {
    const r = await call(s, 'GET', '/api/v1/roles', { key: w.a.key });
    expect(r.status).toBe(200);
    RolesView.parse(r.body);
    const system = r.body.roles.filter((x: RoleView) => x.is_system);
    expect(system.map((x: RoleView) => [x.role_id, x.slug])).toEqual([
      [OWNER, 'owner'],
      [ADMIN, 'admin'],
      [VIEWER, 'viewer'],
    ]);
    expect(system[2].permissions.billing).toBe('view');
    expect(system[1].permissions.team).toBe('manage');
  });

  it('given a custom role with some categories, when created, then omitted categories are view and it is listed', async () => {
    const r = await createRole(w.a.key, { name: 'Content Editor', permissions: { content: 'edit', prompts: 'manage' } });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    expect(r.body.success).toBe(true);
    const role = RoleView.parse(r.body.role);
    expect(role).toMatchObject({ name: 'Content Editor', slug: 'content-editor', is_system: false });
    // in the spec's order of the ten categories, as the system roles show them
    expect(Object.keys(role.permissions)).toEqual(CATEGORIES);
    expect(role.permissions).toEqual({
      content: 'edit',
      prompts: 'manage',
      competitors: 'view',
      analytics: 'view',
      integrations: 'view',
      brand_knowledge: 'view',
      team: 'view',
      billing: 'view',
      api: 'view',
      organization: 'view',
    });
    const list = await call(s, 'GET', '/api/v1/roles', { key: w.a.key });
    expect(list.body.roles.map((x: RoleView) => x.role_id)).toContain(role.role_id);
    const other = await call(s, 'GET', '/api/v1/roles', { key: w.b.key });
    expect(other.body.roles.map((x: RoleView) => x.role_id)).not.toContain(role.role_id);
  });

  it('given a name taken in another case, or a system role name, then 409 Role name already exists and nothing written', async () => {
    const first = await createRole(w.a.key, { name: 'Analyst', permissions: uniqueMatrix() });
    expect(first.status).toBe(201);
    const before = await s.head();
    for (const name of ['ANALYST', 'analyst', 'Viewer', 'admin', 'OWNER']) {
      const r = await createRole(w.a.key, { name, permissions: uniqueMatrix() });
      expect(r, name).toMatchObject({ status: 409, body: { error: 'Role name already exists' } });
    }
    expect(await s.head()).toBe(before);
    // names are per organization
    expect((await createRole(w.b.key, { name: 'Analyst', permissions: uniqueMatrix() })).status).toBe(201);
  });

  it("given a matrix another role has (a system role's too), then 409 A role with the same permissions already exists", async () => {
    const matrix = uniqueMatrix();
    expect((await createRole(w.a.key, { name: 'First of its kind', permissions: matrix })).status).toBe(201);
    const same = await createRole(w.a.key, { name: 'Second of its kind', permissions: matrix });
    expect(same).toMatchObject({ status: 409, body: { error: 'A role with the same permissions already exists' } });
    // every category omitted is every category view: the Viewer's matrix
    const viewer = await createRole(w.a.key, { name: 'Just looking' });
    expect(viewer).toMatchObject({ status: 409, body: { error: 'A role with the same permissions already exists' } });
    const admin = await createRole(w.a.key, { name: 'All powerful', permissions: Object.fromEntries(CATEGORIES.map((c) => [c, 'manage'])) });
    expect(admin).toMatchObject({ status: 409, body: { error: 'A role with the same permissions already exists' } });
  });

  it('given bad input, then 400 naming the field and nothing written', async () => {
    const before = await s.head();
    const cases: [unknown, string][] = [
      [{ permissions: { content: 'edit' } }, 'name is required'],
      [{ name: 'X', permissions: { content: 'none' } }, 'permissions.content: must be at least view'],
      [{ name: 'X', permissions: { content: 'admin' } }, 'permissions.content: must be one of none, view, edit, manage'],
      [{ name: 'X', permissions: { payroll: 'edit' } }, 'permissions.payroll is not allowed'],
      [
        { name: 'X\u202E', permissions: { content: 'edit' } },
        'name: must not contain bidirectional override or isolate characters (U+202A to U+202E, U+2066 to U+2069)',
      ],
      [{ name: 'x'.repeat(101), permissions: { content: 'edit' } }, 'name: must be at most 100 characters'],
      [{ name: 'X', permissions: { content: 'edit' }, extra: 1 }, 'extra is not allowed'],
    ];
    for (const [body, error] of cases) {
      const r = await createRole(w.a.key, body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.error).toBe(error);
    }
    expect(await s.head()).toBe(before);
  });

  it('given an organization not on the Enterprise plan, then 403 Custom roles require the Enterprise plan', async () => {
    const pro = await s.org('Pro Org', { plan: 'pro' });
    const r = await createRole(pro.key, { name: 'Editor', permissions: { content: 'edit' } });
    expect(r).toMatchObject({ status: 403, body: { error: 'Custom roles require the Enterprise plan' } });
    expect((await call(s, 'GET', '/api/v1/roles', { key: pro.key })).body.roles).toHaveLength(3);
  });

  it('given a scoped key, then every roles endpoint answers 403 global key required; no key 401', async () => {
    const forbidden = { status: 403, body: { error: 'Forbidden: global API key required' } };
    expect(await call(s, 'GET', '/api/v1/roles', { key: w.a.scoped })).toMatchObject(forbidden);
    expect(await createRole(w.a.scoped, { name: 'Scoped', permissions: uniqueMatrix() })).toMatchObject(forbidden);
    expect(await call(s, 'DELETE', `/api/v1/roles/${VIEWER}`, { key: w.a.scoped })).toMatchObject(forbidden);
    expect(await call(s, 'GET', '/api/v1/roles')).toMatchObject({ status: 401, body: { error: 'Unauthorized' } });
    expect(await call(s, 'GET', '/api/v1/roles', { key: w.a.revoked })).toMatchObject({ status: 401 });
  });

  it("given a custom role, when deleted, then it is gone; a system role 400; another organization's or an unknown id 404; not a GUID 400", async () => {
    const r = await createRole(w.a.key, { name: 'Short lived', permissions: uniqueMatrix() });
    const id = r.body.role.role_id;
    expect(await call(s, 'DELETE', `/api/v1/roles/${id}`, { key: w.b.key })).toMatchObject({ status: 404, body: { error: 'Role not found' } });
    const del = await call(s, 'DELETE', `/api/v1/roles/${id}`, { key: w.a.key });
    expect(del).toMatchObject({ status: 200, body: { success: true } });
    expect(typeof del.body.message).toBe('string');
    expect((await call(s, 'GET', '/api/v1/roles', { key: w.a.key })).body.roles.map((x: RoleView) => x.role_id)).not.toContain(id);
    expect(await call(s, 'DELETE', `/api/v1/roles/${id}`, { key: w.a.key })).toMatchObject({ status: 404, body: { error: 'Role not found' } });
    for (const sys of [OWNER, ADMIN, VIEWER]) {
      expect(await call(s, 'DELETE', `/api/v1/roles/${sys}`, { key: w.a.key })).toMatchObject({
        status: 400,
        body: { error: 'System roles cannot be deleted' },
      });
    }
    expect(await call(s, 'DELETE', '/api/v1/roles/not-a-guid', { key: w.a.key })).toMatchObject({
      status: 400,
      body: { error: 'role_id: must be a GUID' },
    });
    // the name is free again
    expect((await createRole(w.a.key, { name: 'short LIVED', permissions: uniqueMatrix() })).status).toBe(201);
  });

  it('given ten concurrent creates of one name (in different cases), then exactly one wins and the others get 409', async () => {
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) => createRole(w.a.key, { name: i % 2 ? 'Race Role' : 'RACE ROLE', permissions: uniqueMatrix() })),
    );
    expect(answers.filter((r) => r.status === 201)).toHaveLength(1);
    expect(answers.filter((r) => r.status === 409).every((r) => r.body.error === 'Role name already exists')).toBe(true);
    expect(answers.filter((r) => r.status === 409)).toHaveLength(9);
    const list = await call(s, 'GET', '/api/v1/roles', { key: w.a.key });
    expect(list.body.roles.filter((x: RoleView) => x.name.toLowerCase() === 'race role')).toHaveLength(1);
  });

  it('given ten concurrent creates of one matrix under different names, then exactly one wins', async () => {
    const matrix = uniqueMatrix();
    const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => createRole(w.a.key, { name: `Matrix ${i}`, permissions: matrix })));
    expect(answers.filter((r) => r.status === 201)).toHaveLength(1);
    expect(answers.filter((r) => r.status === 409 && r.body.error === 'A role with the same permissions already exists')).toHaveLength(9);
  });

  it('given roles created and deleted with a key, then the activity feed lists them with no person as the actor', async () => {
    const r = await createRole(w.a.key, { name: 'Audited', permissions: uniqueMatrix() });
    await call(s, 'DELETE', `/api/v1/roles/${r.body.role.role_id}`, { key: w.a.key });
    const entries = await until('the role entries of the feed', async () => {
      const f = await call(s, 'GET', '/api/v1/activity', { key: w.a.key, query: { entity_type: 'role' } });
      const mine = f.body.data.filter((e: { entity_ids: string[] }) => e.entity_ids?.includes(r.body.role.role_id));
      return mine.length === 2 ? mine : undefined;
    });
    expect(entries.map((e: { change_type: string }) => e.change_type).sort()).toEqual(['created', 'deleted']);
    for (const e of entries) expect(e).toMatchObject({ via_api_key: true, website_id: null, actor: { user: null } });
  });
});
