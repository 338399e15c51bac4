import { z } from 'zod';
import { conflict, type DomainError, forbidden, invalid, notFound } from '../../src/domain/errors';
import type { DomainEvent } from '../../src/domain/events';
import { parseMailbox } from '../../src/email/address';
import { SYSTEM_ROLE_IDS, WEBSITE_FORBIDDEN } from '../../src/domain/principal';
import { label, text, Uuid } from '../../src/domain/schemas';
import type { Decision } from '../handle';
import type { OrganizationState } from '../organizations/organization';
import { RoleId } from './roles';
import { membershipKey, roleOf, userByEmail } from './team';

/** How long an email invite's token works (CONTRACT.md). */
export const INVITE_TTL_MS = 14 * 24 * 3600 * 1000;
export const BULK_MAX = 50;

export const InviteEmail = text()
  .trim()
  .max(254, 'must be at most 254 characters')
  .refine((s) => parseMailbox(s)?.address === s, 'must be an email address');
const InviteRole = z.enum(['admin', 'viewer'], { error: "must be 'admin' or 'viewer'" });
/** a string first: a missing value is `… is required`, a wrong one names the values */
const oneOf = <const T extends readonly [string, ...string[]]>(values: T, error: string) =>
  text(error)
    .pipe(z.enum(values, { error }))
    .meta({ enum: [...values] });
const InviteMethod = oneOf(['direct', 'email'], "must be 'direct' or 'email'");
const Name = label(100);

const required = (ctx: z.core.$RefinementCtx, path: string) =>
  ctx.addIssue({ code: 'invalid_type', expected: 'string', path: [path], message: 'is required', input: undefined });

export const CreateInvite = z
  .strictObject({
    type: oneOf(['organization', 'website', 'group'], "must be 'organization', 'website' or 'group'").describe('What the person joins'),
    invite_method: InviteMethod.describe('direct: added at once (answers user_id); email: an invitation is sent (answers invite_id)'),
    email: InviteEmail.describe("The person's email address"),
    role: InviteRole.optional().describe('admin or viewer (default viewer); not with role_id'),
    role_id: RoleId.optional().describe("A role's id (GET /api/v1/roles); not with role"),
    website_id: Uuid.optional().describe('Required for type website'),
    group_id: Uuid.optional().describe('Required for type group'),
    first_name: Name.optional().describe('First name, for a new user'),
    last_name: Name.optional().describe('Last name, for a new user'),
  })
  .superRefine((b, ctx) => {
    if (b.role !== undefined && b.role_id !== undefined)
      ctx.addIssue({ code: 'custom', path: ['role_id'], message: 'role and role_id are mutually exclusive' });
    if (b.type === 'website' && b.website_id === undefined) required(ctx, 'website_id');
    if (b.type === 'group' && b.group_id === undefined) required(ctx, 'group_id');
    if (b.type !== 'website' && b.website_id !== undefined) ctx.addIssue({ code: 'custom', path: ['website_id'], message: 'only with type website' });
    if (b.type !== 'group' && b.group_id !== undefined) ctx.addIssue({ code: 'custom', path: ['group_id'], message: 'only with type group' });
  });
export type CreateInvite = z.infer<typeof CreateInvite>;

const Targets = (what: string) =>
  z
    .array(Uuid)
    .min(1, `must list 1 to ${BULK_MAX} ${what}`)
    .max(BULK_MAX, `must list 1 to ${BULK_MAX} ${what}`)
    .refine((ids) => new Set(ids).size === ids.length, 'must not list an id twice');

export const BulkInvite = z
  .strictObject({
    invite_method: InviteMethod,
    email: InviteEmail,
    role: InviteRole.optional(),
    role_id: RoleId.optional(),
    website_ids: Targets('websites').optional(),
    group_ids: Targets('groups').optional(),
    first_name: Name.optional(),
    last_name: Name.optional(),
  })
  .superRefine((b, ctx) => {
    if (b.role !== undefined && b.role_id !== undefined)
      ctx.addIssue({ code: 'custom', path: ['role_id'], message: 'role and role_id are mutually exclusive' });
    if ((b.website_ids === undefined) === (b.group_ids === undefined))
      ctx.addIssue({ code: 'custom', path: [], message: 'exactly one of website_ids or group_ids is required' });
  });
export type BulkInvite = z.infer<typeof BulkInvite>;

export interface InviteTarget {
  type: 'organization' | 'website' | 'group';
  target_id: string | null;
}

/** One target's outcome: a membership (direct), a pending invite (email), or why not. */
export type TargetOutcome = { ok: true; message: string; user_id?: string; invite_id?: string } | { ok: false; error: DomainError };

export interface InviteCommand {
  method: 'direct' | 'email';
  email: string;
  first_name: string | null;
  last_name: string | null;
  role?: 'admin' | 'viewer';
  role_id?: string;
  targets: InviteTarget[];
  /** the caller's websites (null: every website of the organization) */
  scope: readonly string[] | null;
  now: string;
  /** ids and the token's hash come in with the command, so decide stays pure */
  new_user_id: string;
  invite_ids: string[];
  batch_id: string;
  token: string;
  token_hash: string;
}

export interface InviteDecision {
  outcomes: TargetOutcome[];
  /** the role given, by name (the invitation email says it) */
  role_name: string;
  /** what the targets are called (the invitation email lists them) */
  target_names: string[];
}

const ADDED = { organization: 'User added to organization', website: 'User added to website', group: 'User added to group' } as const;
const ALREADY = {
  organization: 'User is already a member of this organization',
  website: 'User is already a member of this website',
  group: 'User is already a member of this group',
} as const;
export const INVITE_PENDING = 'An invite is already pending for this email';
export const INVITATION_SENT = 'Invitation sent';

/** The role an invite gives: role (admin/viewer), role_id (the organization's or a system role), default viewer. */
export function resolveInviteRole(
  s: OrganizationState,
  cmd: { role?: 'admin' | 'viewer'; role_id?: string },
): { role_id: string; name: string } | DomainError {
  if (cmd.role) return { role_id: SYSTEM_ROLE_IDS[cmd.role], name: cmd.role === 'admin' ? 'Admin' : 'Viewer' };
  if (cmd.role_id === undefined) return { role_id: SYSTEM_ROLE_IDS.viewer, name: 'Viewer' };
  const role = roleOf(s.team, cmd.role_id);
  if (!role) return notFound('Role not found');
  if (role.role_id === SYSTEM_ROLE_IDS.owner) return invalid('role_id: the owner role cannot be given');
  return { role_id: role.role_id, name: role.name };
}

/** Whether the target can take this person: it exists, the caller reaches it, they are not in it yet, no invite waits. */
function checkTarget(s: OrganizationState, cmd: InviteCommand, t: InviteTarget, userId: string | null): DomainError | null {
  const team = s.team;
  if (t.type === 'website') {
    const w = s.websites.get(t.target_id!);
    if (!w) return notFound('Website not found');
    if (w.status !== 'active' || (cmd.scope !== null && !cmd.scope.includes(w.id))) return forbidden(WEBSITE_FORBIDDEN);
    if (userId && team.websiteMembers.has(membershipKey(w.id, userId))) return conflict(ALREADY.website);
  } else if (t.type === 'group') {
    const g = team.groups.get(t.target_id!);
    if (!g) return notFound('Group not found');
    if (userId && g.members.has(userId)) return conflict(ALREADY.group);
  } else if (userId && team.members.has(userId)) {
    return conflict(ALREADY.organization);
  }
  if (cmd.method === 'email') {
    const email = cmd.email.toLowerCase();
    for (const i of team.invites.values()) {
      if (i.status === 'pending' && i.type === t.type && i.target_id === t.target_id && i.email?.toLowerCase() === email && i.expires_at > cmd.now)
        return conflict(INVITE_PENDING);
    }
  }
  return null;
}

const targetName = (s: OrganizationState, t: InviteTarget) =>
  t.type === 'website' ? (s.websites.get(t.target_id!)?.name ?? '') : t.type === 'group' ? (s.team.groups.get(t.target_id!)?.name ?? '') : s.name;

/**
 * Invites one person to one or several targets, each independently (a bulk call's targets each get their own outcome).
 * direct: the user is created at once when the organization has no user with that email (email unverified) and added
 * to each target; email: a pending invite per target, all under one token (one email).
 */
export function decideInvite(s: OrganizationState, cmd: InviteCommand): Decision<InviteDecision> | DomainError {
  const role = resolveInviteRole(s, cmd);
  if ('kind' in role) return role;
  const existing = userByEmail(s.team, cmd.email);
  const userId = existing?.id ?? null;
  const events: DomainEvent[] = [];
  const outcomes: TargetOutcome[] = [];
  const names: string[] = [];
  const expires_at = new Date(Date.parse(cmd.now) + INVITE_TTL_MS).toISOString();
  for (const [i, t] of cmd.targets.entries()) {
    const refused = checkTarget(s, cmd, t, userId);
    if (refused) {
      outcomes.push({ ok: false, error: refused });
      continue;
    }
    names.push(targetName(s, t));
    if (cmd.method === 'email') {
      const invite_id = cmd.invite_ids[i];
      events.push({
        type: 'InviteCreated',
        data: {
          invite_id,
          batch_id: cmd.batch_id,
          type: t.type,
          target_id: t.target_id,
          role_id: role.role_id,
          email: cmd.email,
          ...(cmd.first_name !== null ? { first_name: cmd.first_name } : {}),
          ...(cmd.last_name !== null ? { last_name: cmd.last_name } : {}),
          token_hash: cmd.token_hash,
          token: cmd.token,
          expires_at,
        },
      });
      outcomes.push({ ok: true, message: INVITATION_SENT, invite_id });
      continue;
    }
    const user_id = userId ?? cmd.new_user_id;
    events.push(membershipEvent(t, user_id, role.role_id));
    outcomes.push({ ok: true, message: ADDED[t.type], user_id });
  }
  if (cmd.method === 'direct' && !existing && events.length) {
    events.unshift({
      type: 'UserCreated',
      data: { user_id: cmd.new_user_id, email: cmd.email, first_name: cmd.first_name, last_name: cmd.last_name, email_verified: false },
    });
  }
  return { events, result: { outcomes, role_name: role.name, target_names: names } };
}

export function membershipEvent(t: InviteTarget, user_id: string, role_id: string): DomainEvent {
  if (t.type === 'website') return { type: 'WebsiteMemberAdded', data: { user_id, website_id: t.target_id!, role_id } };
  if (t.type === 'group') return { type: 'GroupMemberAdded', data: { user_id, group_id: t.target_id!, role_id } };
  return { type: 'OrganizationMemberAdded', data: { user_id, role_id } };
}

export const AcceptInvite = z.strictObject({
  token: text().min(1, 'is required').max(200, 'must be at most 200 characters'),
  first_name: Name.optional(),
  last_name: Name.optional(),
  password: text().min(8, 'must be at least 8 characters').max(200, 'must be at most 200 characters').optional(),
});
export type AcceptInvite = z.infer<typeof AcceptInvite>;

export const ACCEPT_MESSAGES = {
  invalid: 'Invalid invite token',
  used: 'Invite has already been used',
  expired: 'Invite has expired',
  erased: 'Invite is no longer available',
};

export interface AcceptResult {
  success: true;
  user_id: string;
  organization_id: string;
  memberships: { type: 'organization' | 'website' | 'group'; target_id: string | null }[];
}

/** A pending invite's token becomes membership: its user (created, email verified by the link) joins every target. */
export function decideAccept(
  s: OrganizationState,
  cmd: { token_hash: string; now: string; new_user_id: string; first_name: string | null; last_name: string | null; password_hash?: string | null },
): Decision<AcceptResult> | DomainError {
  const invites = [...s.team.invites.values()].filter((i) => i.token_hash === cmd.token_hash);
  if (!invites.length) return invalid(ACCEPT_MESSAGES.invalid);
  const pending = invites.filter((i) => i.status === 'pending');
  if (!pending.length) return invalid(ACCEPT_MESSAGES.used);
  if (pending.every((i) => i.expires_at <= cmd.now)) return invalid(ACCEPT_MESSAGES.expired);
  const email = pending[0].email;
  if (!email) return invalid(ACCEPT_MESSAGES.erased);
  const existing = userByEmail(s.team, email);
  const user_id = existing?.id ?? cmd.new_user_id;
  const events: DomainEvent[] = [];
  if (!existing) {
    events.push({
      type: 'UserCreated',
      data: {
        user_id,
        email,
        first_name: cmd.first_name ?? pending[0].first_name,
        last_name: cmd.last_name ?? pending[0].last_name,
        email_verified: true,
      },
    });
    // only an account this acceptance creates takes the password: an existing one keeps its own
    if (cmd.password_hash) events.push({ type: 'UserPasswordSet', data: { user_id, password_hash: cmd.password_hash } });
  }
  const memberships: AcceptResult['memberships'] = [];
  for (const i of pending) {
    if (i.expires_at <= cmd.now) continue;
    const t = { type: i.type, target_id: i.target_id };
    // a target gone since (a deleted website or group) or joined meanwhile gives no membership; the invite is used all the same
    const gone =
      (t.type === 'website' && s.websites.get(t.target_id!)?.status !== 'active') ||
      (t.type === 'group' && !s.team.groups.has(t.target_id!)) ||
      !roleOf(s.team, i.role_id);
    const already =
      existing &&
      ((t.type === 'organization' && s.team.members.has(user_id)) ||
        (t.type === 'website' && s.team.websiteMembers.has(membershipKey(t.target_id!, user_id))) ||
        (t.type === 'group' && s.team.groups.get(t.target_id!)?.members.has(user_id)));
    if (!gone && !already) {
      events.push(membershipEvent(t, user_id, i.role_id));
      memberships.push(t);
    }
    events.push({ type: 'InviteAccepted', data: { invite_id: i.id, user_id } });
  }
  return { events, result: { success: true, user_id, organization_id: s.id!, memberships } };
}
