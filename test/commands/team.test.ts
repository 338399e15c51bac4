import { describe, expect, it } from 'vitest';
import { Organization } from '../../commands/organizations/organization';
import { decideAccept, decideInvite, type InviteCommand } from '../../commands/team/invites';
import { decideRemoveGroupMember } from '../../commands/team/groups';
import { effectiveAccess } from '../../commands/team/team';
import type { DomainEvent } from '../../src/domain/events';
import { invalid } from '../../src/domain/errors';
import { ADMIN_PERMISSIONS, authorize, can, SYSTEM_ROLE_IDS, userPrincipal, VIEWER_PERMISSIONS } from '../../src/domain/principal';
import { given } from '../support/given';

const ORG = '11111111-1111-4111-8111-111111111111';
const OWNER = '22222222-2222-4222-8222-222222222222';
const USER = '33333333-3333-4333-8333-333333333333';
const S1 = '44444444-4444-4444-8444-444444444444';
const S2 = '55555555-5555-4555-8555-555555555555';
const G = '66666666-6666-4666-8666-666666666666';
const INVITE = '77777777-7777-4777-8777-777777777777';

const history: DomainEvent[] = [
  { type: 'OrganizationCreated', data: { organization_id: ORG, name: 'Acme', plan: 'enterprise', features: [], pitch_allowance: 1 } },
  { type: 'UserAdded', data: { user_id: OWNER, email: 'owner@acme.test', role: 'owner' } },
  { type: 'WebsiteCreated', data: { website_id: S1, name: 'One', url: 'https://one.test', normalized_url: 'one.test/', external_id: null } },
  { type: 'WebsiteCreated', data: { website_id: S2, name: 'Two', url: 'https://two.test', normalized_url: 'two.test/', external_id: null } },
  { type: 'GroupCreated', data: { group_id: G, name: 'Both', website_ids: [S1, S2], external_id: null, billing_enabled: false } },
];
const invited = (expires_at: string): DomainEvent => ({
  type: 'InviteCreated',
  data: {
    invite_id: INVITE,
    batch_id: INVITE,
    type: 'website',
    target_id: S1,
    role_id: SYSTEM_ROLE_IDS.viewer,
    email: 'Ann@Example.com',
    token_hash: 'h',
    token: 't',
    expires_at,
  },
});
const accept = { token_hash: 'h', now: '2026-06-01T00:00:00.000Z', new_user_id: USER, first_name: null, last_name: null };

describe('invites', () => {
  it('given a pending invite past its 14 days, when accepted, then 400 Invite has expired and nothing recorded', () => {
    given(Organization, ...history, invited('2026-05-31T23:59:59.000Z'))
      .when((s) => decideAccept(s, accept))
      .then(invalid('Invite has expired'));
  });

  it('given a pending invite, when accepted, then the user (email verified) joins its website and the invite is used', () => {
    given(Organization, ...history, invited('2026-06-14T00:00:00.000Z'))
      .when((s) => decideAccept(s, accept))
      .then([
        { type: 'UserCreated', data: { user_id: USER, email: 'Ann@Example.com', first_name: null, last_name: null, email_verified: true } },
        { type: 'WebsiteMemberAdded', data: { user_id: USER, website_id: S1, role_id: SYSTEM_ROLE_IDS.viewer } },
        { type: 'InviteAccepted', data: { invite_id: INVITE, user_id: USER } },
      ]);
  });

  it('given a direct invite of an email the organization has in another case, then the existing user joins: no second account', () => {
    const cmd: InviteCommand = {
      method: 'direct',
      email: 'OWNER@acme.test',
      first_name: null,
      last_name: null,
      targets: [{ type: 'group', target_id: G }],
      scope: null,
      now: accept.now,
      new_user_id: USER,
      invite_ids: [INVITE],
      batch_id: INVITE,
      token: 't',
      token_hash: 'h',
    };
    given(Organization, ...history)
      .when((s) => decideInvite(s, cmd))
      .then([{ type: 'GroupMemberAdded', data: { user_id: OWNER, group_id: G, role_id: SYSTEM_ROLE_IDS.viewer } }]);
  });
});

describe('effective access', () => {
  const member = (): DomainEvent[] => [
    { type: 'UserCreated', data: { user_id: USER, email: 'u@acme.test', first_name: null, last_name: null, email_verified: false } },
    { type: 'GroupMemberAdded', data: { group_id: G, user_id: USER, role_id: SYSTEM_ROLE_IDS.viewer } },
    { type: 'WebsiteMemberAdded', data: { website_id: S1, user_id: USER, role_id: SYSTEM_ROLE_IDS.admin } },
  ];

  it('given a group (viewer) and a membership (admin) reaching one website, then that website has the better of both', () => {
    const { state } = given(Organization, ...history, ...member())
      .when(() => ({ events: [], result: null }))
      .then([]);
    const access = effectiveAccess(state.team, USER, [S1, S2]);
    expect(access.get(S1)).toEqual(ADMIN_PERMISSIONS);
    expect(access.get(S2)).toEqual(VIEWER_PERMISSIONS);
  });

  it("given removal from the group, then the membership of the group's website goes in the same event; the state before is unchanged", () => {
    const { state } = given(Organization, ...history, ...member())
      .when((s) => decideRemoveGroupMember(s, G, USER, null))
      .then([{ type: 'GroupMemberRemoved', data: { group_id: G, user_id: USER, group_membership_removed: true, website_ids: [S1] } }]);
    const after = Organization.evolve(state, {
      type: 'GroupMemberRemoved',
      data: { group_id: G, user_id: USER, group_membership_removed: true, website_ids: [S1] },
    });
    expect(effectiveAccess(after.team, USER, [S1, S2]).size).toBe(0);
    expect(effectiveAccess(state.team, USER, [S1, S2]).size).toBe(2);
  });

  it('given a user principal, then authorize uses the role of each website, and owners reach every website', () => {
    const p = userPrincipal({
      organizationId: ORG,
      userId: USER,
      email: 'u@acme.test',
      plan: 'enterprise',
      features: [],
      orgRole: null,
      groups: [{ website_ids: [S1, S2], permissions: VIEWER_PERMISSIONS }],
      websites: [{ website_id: S1, permissions: ADMIN_PERMISSIONS }],
    });
    expect(can(p, { category: 'prompts', level: 'manage' }, S1)).toBe(true);
    expect(can(p, { category: 'prompts', level: 'manage' }, S2)).toBe(false);
    expect(can(p, { category: 'prompts', level: 'view' }, S2)).toBe(true);
    expect(can(p, { category: 'prompts', level: 'view' }, G)).toBe(false);
    // no organization role: nothing outside websites
    expect(() => authorize(p, { category: 'team', level: 'view' })).toThrow('Forbidden: insufficient permissions');
    const owner = userPrincipal({
      ...p,
      organizationId: ORG,
      userId: OWNER,
      email: null,
      plan: 'enterprise',
      features: [],
      orgRole: { role_id: SYSTEM_ROLE_IDS.owner, permissions: ADMIN_PERMISSIONS },
      groups: [],
      websites: [],
    });
    expect(owner.websiteIds).toBeNull();
    expect(can(owner, { category: 'billing', level: 'manage' }, S2)).toBe(true);
  });
});
