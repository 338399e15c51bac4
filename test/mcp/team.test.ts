import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { describe, expect, it } from 'vitest';
import { GroupsView } from '../../queries/team/groups';
import { MembersView, UserWebsitesView } from '../../queries/team/members';
import { RolesView } from '../../queries/team/roles';
import { call, type TestServer, sharedServer } from '../support/server';
import type { World } from '../support/tenancy';
import { type AreaClients, callTool, toolOk, useAreaClients } from './support';

let s: TestServer, w: World, a: Client, scoped: Client, b: Client, refused: AreaClients['refused'];
useAreaClients((ctx) => ({ s, w, a, scoped, b, refused } = ctx), sharedServer);

describe('organization administration tools', () => {
  it('given invite_user, then it follows REST: direct answers user_id, the user is listed by list_members and reaches the website by get_user_websites', async () => {
    const email = `mcp-${Date.now()}@example.com`;
    const r = await toolOk(scoped, 'invite_user', { type: 'website', invite_method: 'direct', email, website_id: w.a.a2, role: 'admin' });
    expect(r).toMatchObject({ success: true, message: 'User added to website' });
    expect(r).not.toHaveProperty('invite_id');
    const sites = UserWebsitesView.parse(await toolOk(a, 'get_user_websites', { user_id: r.user_id }));
    expect(sites.websites).toMatchObject([{ website_id: w.a.a2, access_type: 'website', role: 'admin' }]);
    const members = MembersView.parse(await toolOk(scoped, 'list_members', { website_id: w.a.a2 }));
    expect(members.members.find((m) => m.user_id === r.user_id)).toMatchObject({ access_type: 'website', email });
    const org = MembersView.parse(await toolOk(a, 'list_members', {}));
    expect(org.members.find((m) => m.user_id === w.a.owner_user_id)).toMatchObject({ role: 'owner' });
  });

  it("given a scoped key, then organization invites, roles and groups are refused as REST refuses them; another organization's website 403", async () => {
    const global = 'Forbidden: global API key required';
    await refused(scoped, 'invite_user', { type: 'organization', invite_method: 'direct', email: 'x@example.com' }, 403, global);
    await refused(scoped, 'list_roles', {}, 403, global);
    await refused(scoped, 'list_groups', {}, 403, global);
    await refused(scoped, 'list_members', { website_id: w.a.a1 }, 403, 'Unauthorized access to this website');
    await refused(
      b,
      'invite_user',
      { type: 'website', invite_method: 'direct', email: 'x@example.com', website_id: w.a.a1 },
      403,
      'Unauthorized access to this website',
    );
    await refused(
      a,
      'invite_user',
      { type: 'organization', invite_method: 'direct', email: 'x@example.com', role: 'admin', role_id: '00000000-0000-0000-0000-000000000002' },
      400,
      'role_id: role and role_id are mutually exclusive',
    );
    // another organization's user: none of its websites (CONTRACT: not told apart from a user outside); an id no user has: 404
    expect(await toolOk(b, 'get_user_websites', { user_id: w.a.owner_user_id })).toEqual({ websites: [] });
    await refused(b, 'get_user_websites', { user_id: '6f1c2d3e-4b5a-4c6d-8e9f-0a1b2c3d4e5f' }, 404, 'User not found');
    // a filter that would be ignored is refused, naming it
    const ignored = await callTool(a, 'list_members', { access_type: 'group' });
    expect(ignored.isError, ignored.text).toBe(true);
    expect(ignored.text).toContain('access_type');
  });

  it("given list_roles and list_groups, then their answers are the read models' views", async () => {
    const roles = RolesView.parse(await toolOk(a, 'list_roles', {}));
    expect(roles.roles.slice(0, 3).map((r) => r.slug)).toEqual(['owner', 'admin', 'viewer']);
    const made = await call(s, 'POST', '/api/v1/groups', { key: w.a.key, body: { name: 'MCP group', website_ids: [w.a.a1], external_id: 'mcp-1' } });
    expect(made.status).toBe(201);
    const groups = GroupsView.parse(await toolOk(a, 'list_groups', { external_id: 'mcp-1' }));
    expect(groups.groups).toMatchObject([{ id: made.body.group.id, name: 'MCP group', websiteIds: [w.a.a1], externalId: 'mcp-1' }]);
    expect(GroupsView.parse(await toolOk(b, 'list_groups', {})).groups.map((g) => g.id)).not.toContain(made.body.group.id);
  });
});
