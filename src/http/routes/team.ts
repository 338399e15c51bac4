import { z } from 'zod';
import { CreateGroup, UpdateGroup } from '../../../commands/team/groups';
import { AcceptInvite, BulkInvite, CreateInvite } from '../../../commands/team/invites';
import { CreateRole, RoleId } from '../../../commands/team/roles';
import { GroupsView, GroupView } from '../../../queries/team/groups';
import { GroupAccessType, MembersView, UserWebsitesView } from '../../../queries/team/members';
import { ChangeRole } from '../../../commands/team/members';
import { RolesView, RoleView } from '../../../queries/team/roles';
import {
  acceptInvite,
  bulkInvite,
  changeMemberRole,
  changeWebsiteMember,
  listOrganizationMembers,
  listWebsiteMembers,
  removeMember,
  userWebsites,
  createGroup,
  createInvite,
  createRole,
  deleteRole,
  getGroup,
  listGroupMembers,
  listGroups,
  listRoles,
  removeGroupMember,
  updateGroup,
} from '../../app/team';
import { boundedString, route, Uuid } from '../route';

const TAG = 'organization administration';
const Success = z.object({ success: z.boolean(), message: z.string() });
const InviteAnswer = z.object({ success: z.boolean(), message: z.string(), invite_id: z.string().optional(), user_id: z.string().optional() });
const BulkAnswer = z.object({
  success: z.boolean(),
  results: z.array(
    z.object({
      website_id: z.string().optional(),
      group_id: z.string().optional(),
      success: z.boolean(),
      message: z.string().optional(),
      user_id: z.string().optional(),
      invite_id: z.string().optional(),
      error: z.string().optional(),
    }),
  ),
});
const GroupParams = z.object({ group_id: Uuid });
const UserParams = z.object({ user_id: Uuid });
const WebsiteParams = z.object({ website_id: Uuid });
const WebsiteUserParams = z.object({ website_id: Uuid, user_id: Uuid });
/** GET routes that take no query parameter refuse one (400 naming it) rather than ignore it. */
const NoQuery = z.strictObject({});
const MemberChangeAnswer = z.object({ success: z.boolean(), message: z.string(), websites_affected: z.number().int().nonnegative() });

/** Organization administration: thin adapters over src/app/team.ts. */
export const teamRoutes = [
  route({
    method: 'GET',
    url: '/api/v1/roles',
    summary: "The system roles and the organization's custom roles (global key)",
    tag: TAG,
    query: NoQuery,
    responses: { 200: RolesView },
    handler: (ctx) => listRoles(ctx),
  }),
  route({
    method: 'POST',
    url: '/api/v1/roles',
    summary: 'Create a custom role (Enterprise plan; global key): unique name, every category at least view, a matrix no other role has',
    tag: TAG,
    body: CreateRole,
    status: 201,
    responses: { 201: z.object({ success: z.boolean(), role: RoleView }) },
    handler: (ctx) => createRole(ctx, ctx.body),
  }),
  route({
    method: 'DELETE',
    url: '/api/v1/roles/:role_id',
    summary: 'Delete a custom role: not a system role, not in use by members or pending invites (global key)',
    tag: TAG,
    params: z.object({ role_id: RoleId }),
    responses: { 200: Success },
    handler: (ctx) => deleteRole(ctx, ctx.params.role_id),
  }),
  route({
    method: 'POST',
    url: '/api/v1/invites',
    summary: 'Invite a person to the organization, a website or a group: direct adds them at once (user_id), email sends an invitation (invite_id)',
    tag: TAG,
    body: CreateInvite,
    responses: { 200: InviteAnswer },
    handler: (ctx) => createInvite(ctx, ctx.body),
  }),
  route({
    method: 'POST',
    url: '/api/v1/invites/bulk',
    summary: 'Invite a person to 1 to 50 websites or groups, each on its own; email mode sends one consolidated email',
    tag: TAG,
    body: BulkInvite,
    responses: { 200: BulkAnswer },
    handler: (ctx) => bulkInvite(ctx, ctx.body),
  }),
  route({
    method: 'POST',
    url: '/api/v1/invites/accept',
    summary: "Accept an email invite with its token (no key): the invite's targets become memberships",
    tag: TAG,
    extension: true,
    public: true,
    body: AcceptInvite,
    responses: {
      200: z.object({
        success: z.boolean(),
        user_id: z.string(),
        organization_id: z.string(),
        memberships: z.array(z.object({ type: z.enum(['organization', 'website', 'group']), target_id: z.string().nullable() })),
      }),
    },
    handler: (ctx) => acceptInvite(ctx.deps, ctx.body),
  }),
  route({
    method: 'GET',
    url: '/api/v1/groups',
    summary: "The organization's groups (global key); external_id selects by the partner's own id (partner key)",
    tag: TAG,
    query: z.strictObject({ external_id: boundedString(255).optional() }),
    responses: { 200: GroupsView },
    handler: (ctx) => listGroups(ctx, ctx.query.external_id),
  }),
  route({
    method: 'POST',
    url: '/api/v1/groups',
    summary: 'Create a group of websites (global key; external_id: partner key)',
    tag: TAG,
    body: CreateGroup,
    status: 201,
    responses: { 201: z.object({ group: GroupView }) },
    handler: (ctx) => createGroup(ctx, ctx.body),
  }),
  route({
    method: 'GET',
    url: '/api/v1/groups/:group_id',
    summary: 'One group with its websites (global key)',
    tag: TAG,
    query: NoQuery,
    params: GroupParams,
    responses: { 200: z.object({ group: GroupView }) },
    handler: (ctx) => getGroup(ctx, ctx.params.group_id),
  }),
  route({
    method: 'PATCH',
    url: '/api/v1/groups/:group_id',
    summary: 'Rename, add or remove websites, set external_id (409 with existing when another group holds it) or billing_enabled',
    tag: TAG,
    params: GroupParams,
    body: UpdateGroup,
    responses: { 200: z.object({ group: GroupView }) },
    handler: (ctx) => updateGroup(ctx, ctx.params.group_id, ctx.body),
  }),
  route({
    method: 'GET',
    url: '/api/v1/groups/:group_id/members',
    summary: "A group's members (access_type group) and the organization's members (organization), each listed once",
    tag: TAG,
    params: GroupParams,
    query: z.strictObject({ access_type: GroupAccessType.optional() }),
    responses: { 200: MembersView },
    handler: (ctx) => listGroupMembers(ctx, ctx.params.group_id, ctx.query.access_type),
  }),
  route({
    method: 'DELETE',
    url: '/api/v1/groups/:group_id/members/:user_id',
    summary: "Remove a user from a group and from the group's websites' explicit memberships, atomically; idempotent",
    tag: TAG,
    params: z.object({ group_id: Uuid, user_id: Uuid }),
    responses: {
      200: z.object({ success: z.boolean(), group_membership_removed: z.boolean(), website_memberships_removed: z.number().int().nonnegative() }),
    },
    handler: (ctx) => removeGroupMember(ctx, ctx.params.group_id, ctx.params.user_id),
  }),
  route({
    method: 'GET',
    url: '/api/v1/organizations/members',
    summary: "The organization's members with their role (each reaches every website)",
    tag: TAG,
    query: NoQuery,
    responses: { 200: MembersView },
    handler: (ctx) => listOrganizationMembers(ctx),
  }),
  route({
    method: 'PATCH',
    url: '/api/v1/organizations/members/:user_id',
    summary: "Change a member's role (global key): not the owner, not the key's own user, not the last admin",
    tag: TAG,
    params: UserParams,
    body: ChangeRole,
    responses: { 200: MemberChangeAnswer },
    handler: (ctx) => changeMemberRole(ctx, ctx.params.user_id, ctx.body),
  }),
  route({
    method: 'DELETE',
    url: '/api/v1/organizations/members/:user_id',
    summary: 'Remove a member from the organization with their groups and website memberships (global key); the same rules',
    tag: TAG,
    params: UserParams,
    responses: { 200: MemberChangeAnswer },
    handler: (ctx) => removeMember(ctx, ctx.params.user_id),
  }),
  route({
    method: 'GET',
    url: '/api/v1/websites/:website_id/members',
    summary: "Everyone who reaches a website: the organization's members (organization), its groups (group), its members (website)",
    tag: TAG,
    query: NoQuery,
    params: WebsiteParams,
    responses: { 200: MembersView },
    handler: (ctx) => listWebsiteMembers(ctx, ctx.params.website_id),
  }),
  route({
    method: 'PATCH',
    url: '/api/v1/websites/:website_id/members/:user_id',
    summary: "Change an explicit website member's role",
    tag: TAG,
    params: WebsiteUserParams,
    body: ChangeRole,
    responses: { 200: Success },
    handler: (ctx) => changeWebsiteMember(ctx, ctx.params.website_id, ctx.params.user_id, ctx.body),
  }),
  route({
    method: 'DELETE',
    url: '/api/v1/websites/:website_id/members/:user_id',
    summary: 'Remove an explicit website membership (access through a group or the organization role stays)',
    tag: TAG,
    params: WebsiteUserParams,
    responses: { 200: Success },
    handler: (ctx) => changeWebsiteMember(ctx, ctx.params.website_id, ctx.params.user_id, null),
  }),
  route({
    method: 'GET',
    url: '/api/v1/users/:user_id/websites',
    summary:
      "The websites a user reaches, with how (organization, group, website) and the role (within the key's websites; none for another organization's user)",
    tag: TAG,
    query: NoQuery,
    params: UserParams,
    responses: { 200: UserWebsitesView },
    handler: (ctx) => userWebsites(ctx, ctx.params.user_id),
  }),
];
