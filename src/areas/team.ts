import { teamProjection } from '../../projections/team';
import { teamRoutes } from '../http/routes/team';
import { teamTools } from '../mcp/tools/team';
import { INVITATION_WORKER_TYPES, startInvitationWorkers } from '../workers/invitations';
import { entriesOf, entry, entryOf } from '../../projections/activity';
import type { AreaManifest } from './manifest';

/** Users, roles, members, groups and invitations. */
export const team: AreaManifest<'team'> = {
  readModels: { team: teamProjection },
  routes: teamRoutes,
  tools: teamTools,
  feed: {
    RoleCreated: entryOf('role', 'created', (e) => [e.data.role_id], null),
    RoleDeleted: entryOf('role', 'deleted', (e) => [e.data.role_id], null),
    UserCreated: entryOf('user', 'created', (e) => [e.data.user_id], null),
    OrganizationMemberAdded: entryOf('organization_member', 'created', (e) => [e.data.user_id], null),
    OrganizationMemberRoleChanged: entryOf('organization_member', 'updated', (e) => [e.data.user_id], null),
    OrganizationMemberRemoved: entryOf('organization_member', 'deleted', (e) => [e.data.user_id], null),
    WebsiteMemberAdded: entryOf('website_member', 'created', (e) => [e.data.user_id], 'website_id'),
    WebsiteMemberRoleChanged: entryOf('website_member', 'updated', (e) => [e.data.user_id], 'website_id'),
    WebsiteMemberRemoved: entryOf('website_member', 'deleted', (e) => [e.data.user_id], 'website_id'),
    GroupCreated: entryOf('group', 'created', (e) => [e.data.group_id], null),
    GroupUpdated: entryOf('group', 'updated', (e) => [e.data.group_id], null),
    GroupMemberAdded: entryOf('group_member', 'created', (e) => [e.data.user_id, e.data.group_id], null),
    GroupMemberRemoved: entryOf('group_member', 'deleted', (e) => [e.data.user_id, e.data.group_id], null),
    InviteCreated: entriesOf(['invite.created'], (e) =>
      entry('invite', 'created', [e.data.invite_id], e.data.type === 'website' ? e.data.target_id : null),
    ),
    InviteAccepted: entryOf('invite', 'accepted', (e) => [e.data.invite_id, e.data.user_id], null),
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
