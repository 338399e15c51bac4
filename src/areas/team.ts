import { teamProjection } from '../../projections/team';
import { teamRoutes } from '../http/routes/team';
import { teamTools } from '../mcp/tools/team';
import { INVITATION_WORKER_TYPES, startInvitationWorkers } from '../workers/invitations';
import { entry } from '../../projections/activity';
import type { AreaManifest } from './manifest';

/** Users, roles, members, groups and invitations. */
export const team: AreaManifest<'team'> = {
  readModels: { team: teamProjection },
  routes: teamRoutes,
  tools: teamTools,
  feed: {
    RoleCreated: (e) => entry('role', 'created', [e.data.role_id], null),
    RoleDeleted: (e) => entry('role', 'deleted', [e.data.role_id], null),
    UserCreated: (e) => entry('user', 'created', [e.data.user_id], null),
    OrganizationMemberAdded: (e) => entry('organization_member', 'created', [e.data.user_id], null),
    OrganizationMemberRoleChanged: (e) => entry('organization_member', 'updated', [e.data.user_id], null),
    OrganizationMemberRemoved: (e) => entry('organization_member', 'deleted', [e.data.user_id], null),
    WebsiteMemberAdded: (e) => entry('website_member', 'created', [e.data.user_id], e.data.website_id),
    WebsiteMemberRoleChanged: (e) => entry('website_member', 'updated', [e.data.user_id], e.data.website_id),
    WebsiteMemberRemoved: (e) => entry('website_member', 'deleted', [e.data.user_id], e.data.website_id),
    GroupCreated: (e) => entry('group', 'created', [e.data.group_id], null),
    GroupUpdated: (e) => entry('group', 'updated', [e.data.group_id], null),
    GroupMemberAdded: (e) => entry('group_member', 'created', [e.data.user_id, e.data.group_id], null),
    GroupMemberRemoved: (e) => entry('group_member', 'deleted', [e.data.user_id, e.data.group_id], null),
    InviteCreated: (e) => entry('invite', 'created', [e.data.invite_id], e.data.type === 'website' ? e.data.target_id : null),
    InviteAccepted: (e) => entry('invite', 'accepted', [e.data.invite_id, e.data.user_id], null),
  },
  notInFeed: [{ why: 'a credential, never shown', types: ['UserPasswordSet'] }],
  // an email invite's email, requested from the outbox
  workers: [
    {
      busTypes: INVITATION_WORKER_TYPES,
      start: ({ config, store, bus, logger, now }) => startInvitationWorkers({ store, bus, logger, publicBaseUrl: config.publicBaseUrl, now }),
    },
  ],
};
