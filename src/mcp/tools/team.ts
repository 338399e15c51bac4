import { z } from 'zod';
import { CreateInvite } from '../../../commands/team/invites';
import { GroupsView } from '../../../queries/team/groups';
import { GroupAccessType, MembersView, UserWebsitesView } from '../../../queries/team/members';
import { RolesView } from '../../../queries/team/roles';
import { createInvite, listGroupMembers, listGroups, listOrganizationMembers, listRoles, listWebsiteMembers, userWebsites } from '../../app/team';
import { boundedString, Uuid } from '../../domain/schemas';
import { tool, READS } from '../tool';

/** Organization administration for assistants: the read side and invites, with REST's rules (src/app/team.ts). */
export const teamTools = [
  tool({
    name: 'list_members',
    title: 'List members',
    description:
      "Who has access and with which role: the organization's members (each reaches every website), everyone reaching a website_id (access_type organization, group or website), or a group_id's members.",
    input: z
      .strictObject({
        website_id: Uuid.optional().describe('List who reaches this website instead'),
        group_id: Uuid.optional().describe("List this group's members instead (global key)"),
        access_type: GroupAccessType.optional().describe('With group_id: only group members (group) or only organization members (organization)'),
      })
      .refine((i) => !(i.website_id && i.group_id), { message: 'give website_id or group_id, not both', path: ['group_id'] })
      .refine((i) => i.access_type === undefined || i.group_id !== undefined, { message: 'only with group_id', path: ['access_type'] }),
    output: MembersView,
    annotations: READS,
    handler(ctx, input) {
      if (input.website_id) return listWebsiteMembers(ctx, input.website_id);
      if (input.group_id) return listGroupMembers(ctx, input.group_id, input.access_type);
      return listOrganizationMembers(ctx);
    },
  }),
  tool({
    name: 'list_roles',
    title: 'List roles',
    description:
      "The system roles (owner, admin, viewer; sentinel ids) and the organization's custom roles with their permission matrix over ten categories. Global key.",
    input: z.strictObject({}),
    output: RolesView,
    annotations: READS,
    handler: (ctx) => listRoles(ctx),
  }),
  tool({
    name: 'list_groups',
    title: 'List groups',
    description:
      "The organization's groups of websites (camelCase: id, name, orgId, billingEnabled, createdAt, websites, websiteIds; externalId for partner keys). Global key.",
    input: z.strictObject({ external_id: boundedString(255).optional().describe('Only the group with this partner id (partner key)') }),
    output: GroupsView,
    annotations: READS,
    handler: (ctx, input) => listGroups(ctx, input.external_id),
  }),
  tool({
    name: 'get_user_websites',
    title: "Get a user's websites",
    description:
      "The websites a user reaches, each with how (organization role, group, explicit membership) and the role; within the key's websites. An id no user has: not found; another organization's user: none.",
    input: z.strictObject({ user_id: Uuid.describe('The user') }),
    output: UserWebsitesView,
    annotations: READS,
    handler: (ctx, input) => userWebsites(ctx, input.user_id),
  }),
  tool({
    name: 'invite_user',
    title: 'Invite a user',
    description:
      'Invite a person by email to the organization, a website or a group: added at once (direct) or sent an invitation (email). Organization and group invites need a global key.',
    input: CreateInvite,
    output: z.object({ success: z.boolean(), message: z.string(), invite_id: z.string().optional(), user_id: z.string().optional() }),
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    handler: (ctx, input) => createInvite(ctx, input),
  }),
];
