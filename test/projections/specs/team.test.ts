import { randomUUID } from 'node:crypto';
import { describe, it } from 'vitest';
import { teamProjection } from '../../../projections/team';
import { SYSTEM_ROLE_IDS, SYSTEM_ROLES } from '../../../src/domain/principal';
import { event, projectionSpec, T0, T1 } from '../../support/projection-spec';

const { org, site, given } = projectionSpec(teamProjection);
const user = randomUUID();
const role = randomUUID();
const other = randomUUID();
const group = randomUUID();

const userCreated = event('UserCreated', { user_id: user, email: 'b@example.com', first_name: 'Bea', last_name: null, email_verified: false });
const groupCreated = event('GroupCreated', { group_id: group, name: 'EU', website_ids: [site], external_id: null, billing_enabled: false });

describe('team read model: the organization people and their access', () => {
  it('given nothing, when the owner is added, then the user is verified and an organization member with the owner role', async () => {
    await given()
      .when(event('UserAdded', { user_id: user, email: 'a@example.com', role: 'owner' }))
      .then({
        rm_team_users: [{ id: user, organization_id: org, email: 'a@example.com', email_verified: true }],
        rm_team_members: [{ organization_id: org, user_id: user, role_id: SYSTEM_ROLE_IDS.owner }],
      });
  });

  it('given a member of two websites, when their role on one changes and they leave the other, then one membership is left with the new role', async () => {
    await given(
      userCreated,
      event('WebsiteMemberAdded', { user_id: user, website_id: site, role_id: SYSTEM_ROLE_IDS.viewer }),
      event('WebsiteMemberAdded', { user_id: user, website_id: other, role_id: SYSTEM_ROLE_IDS.viewer }),
    )
      .when(
        event('WebsiteMemberRoleChanged', { user_id: user, website_id: site, role_id: role }),
        event('WebsiteMemberRemoved', { user_id: user, website_id: other }),
      )
      .then({ rm_team_website_members: [{ website_id: site, user_id: user, role_id: role }] });
  });

  it('given a group with a website, when websites are added and removed, then the group lists the new set', async () => {
    const third = randomUUID();
    await given(groupCreated)
      .when(
        event(
          'GroupUpdated',
          { group_id: group, name: 'Europe', added_website_ids: [other, third], removed_website_ids: [site] },
          { meta: { time: T1 } },
        ),
      )
      .then({
        rm_team_groups: [{ id: group, name: 'Europe', created_at: T0, updated_at: T1 }],
        rm_team_group_websites: { columns: ['website_id'], orderBy: 'seq', rows: [{ website_id: other }, { website_id: third }] },
      });
  });

  it('given a group member, when removed with the website memberships the group gave, then those go and others stay', async () => {
    await given(
      userCreated,
      groupCreated,
      event('GroupMemberAdded', { group_id: group, user_id: user, role_id: role }),
      event('WebsiteMemberAdded', { user_id: user, website_id: site, role_id: role }),
      event('WebsiteMemberAdded', { user_id: user, website_id: other, role_id: role }),
    )
      .when(event('GroupMemberRemoved', { group_id: group, user_id: user, group_membership_removed: true, website_ids: [site] }))
      .then({ rm_team_group_members: [], rm_team_website_members: [{ website_id: other }] });
  });

  it('given a custom role, when it is deleted, then it is gone', async () => {
    await given(event('RoleCreated', { role_id: role, name: 'Editor', slug: 'editor', permissions: SYSTEM_ROLES[0].permissions }))
      .when(event('RoleDeleted', { role_id: role, name: 'Editor' }))
      .then({ rm_team_roles: [] });
  });

  it('given an invite, when it is accepted, then it is accepted by that user at that time', async () => {
    const invite = randomUUID();
    await given(
      event('InviteCreated', {
        invite_id: invite,
        batch_id: randomUUID(),
        type: 'website',
        target_id: site,
        role_id: role,
        email: 'c@example.com',
        token_hash: 'th',
        token: 't',
        expires_at: '2026-03-08T00:00:00.000Z',
      }),
    )
      .when(event('InviteAccepted', { invite_id: invite, user_id: user }, { meta: { time: T1 } }))
      .then({ rm_team_invites: [{ id: invite, status: 'accepted', accepted_user_id: user, accepted_at: T1, email: 'c@example.com' }] });
  });

  it('given members in two organizations, when one organization removes its member, then the other keeps theirs', async () => {
    const theirs = randomUUID();
    await given(
      event('OrganizationMemberAdded', { user_id: user, role_id: role }),
      event('OrganizationMemberAdded', { user_id: user, role_id: role }, { meta: { organization_id: theirs } }),
    )
      .when(event('OrganizationMemberRemoved', { user_id: user }))
      .then({ rm_team_members: [{ organization_id: theirs, user_id: user }] });
  });
});
