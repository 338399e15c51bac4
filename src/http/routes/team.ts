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
import { boundedString, routeGroup, Uuid } from '../route';

const api = routeGroup({ tag: 'organization administration' });
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
const OneGroup = z.object({ group: GroupView });
const GroupParams = z.object({ group_id: Uuid });
const UserParams = z.object({ user_id: Uuid });
const WebsiteParams = z.object({ website_id: Uuid });
const WebsiteUserParams = z.object({ website_id: Uuid, user_id: Uuid });
/** GET routes that take no query parameter refuse one (400 naming it) rather than ignore it. */
const NoQuery = z.strictObject({});
const MemberChangeAnswer = z.object({ success: z.boolean(), message: z.string(), websites_affected: z.number().int().nonnegative() });

/** Organization administration: thin adapters over src/app/team.ts. */
export const teamRoutes = [
  api.get('/api/v1/roles', {
    summary: "The system roles and the organization's custom roles (global key)",
    query: NoQuery,
    answer: RolesView,
    handler: (ctx) => listRoles(ctx),
  }),
  api.post('/api/v1/roles', {
    summary: 'Create a custom role (Enterprise plan; global key): unique name, every category at least view, a matrix no other role has',
    body: CreateRole,
    status: 201,
    answer: z.object({ success: z.boolean(), role: RoleView }),
    handler: (ctx) => createRole(ctx, ctx.body),
  }),
  api.delete('/api/v1/roles/:role_id', {
    summary: 'Delete a custom role: not a system role, not in use by members or pending invites (global key)',
    params: z.object({ role_id: RoleId }),
    answer: Success,
    handler: (ctx) => deleteRole(ctx, ctx.params.role_id),
  }),
  api.post('/api/v1/invites', {
    summary: 'Invite a person to the organization, a website or a group: direct adds them at once (user_id), email sends an invitation (invite_id)',
    body: CreateInvite,
    answer: InviteAnswer,
    handler: (ctx) => createInvite(ctx, ctx.body),
  }),
  api.post('/api/v1/invites/bulk', {
    summary: 'Invite a person to 1 to 50 websites or groups, each on its own; email mode sends one consolidated email',
    body: BulkInvite,
    answer: BulkAnswer,
    handler: (ctx) => bulkInvite(ctx, ctx.body),
  }),
  api.post('/api/v1/invites/accept', {
    summary: "Accept an email invite with its token (no key): the invite's targets become memberships",
    extension: true,
    public: true,
    body: AcceptInvite,
    answer: z.object({
      success: z.boolean(),
      user_id: z.string(),
      organization_id: z.string(),
      memberships: z.array(z.object({ type: z.enum(['organization', 'website', 'group']), target_id: z.string().nullable() })),
    }),
    handler: (ctx) => acceptInvite(ctx.deps, ctx.body),
  }),
  api.get('/api/v1/groups', {
    summary: "The organization's groups (global key); external_id selects by the partner's own id (partner key)",
    query: z.strictObject({ external_id: boundedString(255).optional() }),
    answer: GroupsView,
    handler: (ctx) => listGroups(ctx, ctx.query.external_id),
  }),
  api.post('/api/v1/groups', {
    summary: 'Create a group of websites (global key; external_id: partner key)',
    body: CreateGroup,
    status: 201,
    answer: OneGroup,
    handler: (ctx) => createGroup(ctx, ctx.body),
  }),
  api.get('/api/v1/groups/:group_id', {
    summary: 'One group with its websites (global key)',
    query: NoQuery,
    params: GroupParams,
    answer: OneGroup,
    handler: (ctx) => getGroup(ctx, ctx.params.group_id),
  }),
  api.patch('/api/v1/groups/:group_id', {
    summary: 'Rename, add or remove websites, set external_id (409 with existing when another group holds it) or billing_enabled',
    params: GroupParams,
    body: UpdateGroup,
    answer: OneGroup,
    handler: (ctx) => updateGroup(ctx, ctx.params.group_id, ctx.body),
  }),
  api.get('/api/v1/groups/:group_id/members', {
    summary: "A group's members (access_type group) and the organization's members (organization), each listed once",
    params: GroupParams,
    query: z.strictObject({ access_type: GroupAccessType.optional() }),
    answer: MembersView,
    handler: (ctx) => listGroupMembers(ctx, ctx.params.group_id, ctx.query.access_type),
  }),
  api.delete('/api/v1/groups/:group_id/members/:user_id', {
    summary: "Remove a user from a group and from the group's websites' explicit memberships, atomically; idempotent",
    params: z.object({ group_id: Uuid, user_id: Uuid }),
    answer: z.object({ success: z.boolean(), group_membership_removed: z.boolean(), website_memberships_removed: z.number().int().nonnegative() }),
    handler: (ctx) => removeGroupMember(ctx, ctx.params.group_id, ctx.params.user_id),
  }),
  api.get('/api/v1/organizations/members', {
    summary: "The organization's members with their role (each reaches every website)",
    query: NoQuery,
    answer: MembersView,
    handler: (ctx) => listOrganizationMembers(ctx),
  }),
  api.patch('/api/v1/organizations/members/:user_id', {
    summary: "Change a member's role (global key): not the owner, not the key's own user, not the last admin",
    params: UserParams,
    body: ChangeRole,
    answer: MemberChangeAnswer,
    handler: (ctx) => changeMemberRole(ctx, ctx.params.user_id, ctx.body),
  }),
  api.delete('/api/v1/organizations/members/:user_id', {
    summary: 'Remove a member from the organization with their groups and website memberships (global key); the same rules',
    params: UserParams,
    answer: MemberChangeAnswer,
    handler: (ctx) => removeMember(ctx, ctx.params.user_id),
  }),
  api.get('/api/v1/websites/:website_id/members', {
    summary: "Everyone who reaches a website: the organization's members (organization), its groups (group), its members (website)",
    query: NoQuery,
    params: WebsiteParams,
    answer: MembersView,
    handler: (ctx) => listWebsiteMembers(ctx, ctx.params.website_id),
  }),
  api.patch('/api/v1/websites/:website_id/members/:user_id', {
    summary: "Change an explicit website member's role",
    params: WebsiteUserParams,
    body: ChangeRole,
    answer: Success,
    handler: (ctx) => changeWebsiteMember(ctx, ctx.params.website_id, ctx.params.user_id, ctx.body),
  }),
  api.delete('/api/v1/websites/:website_id/members/:user_id', {
    summary: 'Remove an explicit website membership (access through a group or the organization role stays)',
    params: WebsiteUserParams,
    answer: Success,
    handler: (ctx) => changeWebsiteMember(ctx, ctx.params.website_id, ctx.params.user_id, null),
  }),
  api.get('/api/v1/users/:user_id/websites', {
    summary:
      "The websites a user reaches, with how (organization, group, website) and the role (within the key's websites; none for another organization's user)",
    query: NoQuery,
    params: UserParams,
    answer: UserWebsitesView,
    handler: (ctx) => userWebsites(ctx, ctx.params.user_id),
  }),
];
