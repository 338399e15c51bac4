import { z } from 'zod';
import { conflict, type DomainError, forbidden, notFound } from '../../src/domain/errors';
import { SYSTEM_ROLE_IDS } from '../../src/domain/principal';
import type { Decision } from '../handle';
import type { OrganizationState } from '../organizations/organization';
import { resolveInviteRole } from './invites';
import { RoleId } from './roles';
import { effectiveAccess, membershipKey, websitesAffected } from './team';

export const ChangeRole = z
  .strictObject({
    role: z.enum(['admin', 'viewer'], { error: "must be 'admin' or 'viewer'" }).optional(),
    role_id: RoleId.optional(),
  })
  .superRefine((b, ctx) => {
    if ((b.role === undefined) === (b.role_id === undefined))
      ctx.addIssue({ code: 'custom', path: [], message: 'exactly one of role or role_id is required' });
  });
export type ChangeRole = z.infer<typeof ChangeRole>;

export const MEMBER_MESSAGES = {
  notFound: 'Member not found',
  owner: 'The organization owner cannot be changed or removed',
  self: "The key's own user cannot be changed or removed",
  lastAdmin: 'Cannot remove the last admin',
};

export interface MemberChange {
  success: true;
  message: string;
  websites_affected: number;
}

const liveWebsites = (s: OrganizationState) => [...s.websites.values()].filter((w) => w.status !== 'deleted').map((w) => w.id);
const admins = (s: OrganizationState) => [...s.team.members.values()].filter((r) => r === SYSTEM_ROLE_IDS.admin).length;

function guard(s: OrganizationState, userId: string, callerUserId: string | null): DomainError | string {
  const role = s.team.members.get(userId);
  if (!role) return notFound(MEMBER_MESSAGES.notFound);
  if (role === SYSTEM_ROLE_IDS.owner) return forbidden(MEMBER_MESSAGES.owner);
  if (callerUserId !== null && callerUserId === userId) return forbidden(MEMBER_MESSAGES.self);
  return role;
}

/** Changes an organization member's role: not the owner, not the caller's own user, never leaving no admin. */
export function decideChangeMemberRole(
  s: OrganizationState,
  userId: string,
  input: ChangeRole,
  callerUserId: string | null,
): Decision<MemberChange> | DomainError {
  const current = guard(s, userId, callerUserId);
  if (typeof current !== 'string') return current;
  const role = resolveInviteRole(s, input);
  if ('kind' in role) return role;
  if (role.role_id === current) return { events: [], result: { success: true, message: 'Role unchanged', websites_affected: 0 } };
  if (current === SYSTEM_ROLE_IDS.admin && admins(s) <= 1) return conflict(MEMBER_MESSAGES.lastAdmin);
  const websites = liveWebsites(s);
  const before = effectiveAccess(s.team, userId, websites);
  const after = effectiveAccess({ ...s.team, members: new Map(s.team.members).set(userId, role.role_id) }, userId, websites);
  return {
    events: [{ type: 'OrganizationMemberRoleChanged', data: { user_id: userId, role_id: role.role_id } }],
    result: { success: true, message: 'Member role updated', websites_affected: websitesAffected(before, after) },
  };
}

/** Removes a member from the organization (their groups and website memberships with it); the same guards. */
export function decideRemoveMember(s: OrganizationState, userId: string, callerUserId: string | null): Decision<MemberChange> | DomainError {
  const current = guard(s, userId, callerUserId);
  if (typeof current !== 'string') return current;
  if (current === SYSTEM_ROLE_IDS.admin && admins(s) <= 1) return conflict(MEMBER_MESSAGES.lastAdmin);
  const before = effectiveAccess(s.team, userId, liveWebsites(s));
  return {
    events: [{ type: 'OrganizationMemberRemoved', data: { user_id: userId } }],
    result: { success: true, message: 'Member removed from organization', websites_affected: before.size },
  };
}

/** An explicit website membership: its role changed, or removed; never the caller's own user. */
export function decideChangeWebsiteMember(
  s: OrganizationState,
  websiteId: string,
  userId: string,
  input: ChangeRole | null,
  callerUserId: string | null,
): Decision<{ success: true; message: string }> | DomainError {
  const current = s.team.websiteMembers.get(membershipKey(websiteId, userId));
  if (!current) return notFound(MEMBER_MESSAGES.notFound);
  if (callerUserId !== null && callerUserId === userId) return forbidden(MEMBER_MESSAGES.self);
  if (input === null) {
    return {
      events: [{ type: 'WebsiteMemberRemoved', data: { user_id: userId, website_id: websiteId } }],
      result: { success: true, message: 'Member removed from website' },
    };
  }
  const role = resolveInviteRole(s, input);
  if ('kind' in role) return role;
  if (role.role_id === current) return { events: [], result: { success: true, message: 'Role unchanged' } };
  return {
    events: [{ type: 'WebsiteMemberRoleChanged', data: { user_id: userId, website_id: websiteId, role_id: role.role_id } }],
    result: { success: true, message: 'Member role updated' },
  };
}
