import { createHash, randomBytes } from 'node:crypto';
import { hash as hashPassword } from '@node-rs/argon2';
import { type Decision, handle } from '../../commands/handle';
import { Organization, type OrganizationState, organizationStream } from '../../commands/organizations/organization';
import {
  type CreateGroup,
  decideCreateGroup,
  decideRemoveGroupMember,
  decideUpdateGroup,
  type GroupMemberRemoval,
  type UpdateGroup,
} from '../../commands/team/groups';
import {
  ACCEPT_MESSAGES,
  type AcceptInvite,
  type AcceptResult,
  type BulkInvite,
  type CreateInvite,
  decideAccept,
  decideInvite,
  type InviteCommand,
  type InviteTarget,
  type TargetOutcome,
} from '../../commands/team/invites';
import {
  type ChangeRole,
  decideChangeMemberRole,
  decideChangeWebsiteMember,
  decideRemoveMember,
  type MemberChange,
} from '../../commands/team/members';
import { type CreateRole, decideCreateRole, decideDeleteRole } from '../../commands/team/roles';
import type { ReadModelName } from '../areas';
import * as groupsQueries from '../../queries/team/groups';
import type { GroupView } from '../../queries/team/groups';
import * as membersQueries from '../../queries/team/members';
import { type AccessType, inviteOrganization, type MemberView } from '../../queries/team/members';
import * as rolesQueries from '../../queries/team/roles';
import { getRole, type RoleView } from '../../queries/team/roles';
import { foreignWebsiteIds } from '../../queries/websites/websites';
import { type DomainError, DomainErrorException, forbidden, invalid, isDomainError } from '../domain/errors';
import { SYSTEM_ACTOR } from '../domain/events';
import { newId } from '../domain/ids';
import { authorize, isUser, requireGlobal, requirePartner, WEBSITE_FORBIDDEN } from '../domain/principal';
import { type AppDeps, type Caller, commandContextOf, dbOf, settled, websiteFor } from './context';

/**
 * Organization administration (spec, "Organization administration"; CONTRACT.md): roles, members, invites, groups.
 * Every rule is decided on the organization's stream (commands/team); these operations check who calls, run the
 * decision, wait for the team read model and answer from it.
 */

/** The team read model answers every read of this area. */
const READS: readonly ReadModelName[] = ['team'];

/** Decides on the caller's organization stream and answers once the team read model has the change. */
function decideOnOrganization<R>(c: Caller, decide: (s: OrganizationState) => Decision<R> | DomainError): Promise<R> {
  return settled(c.deps, handle(commandContextOf(c), organizationStream(c.principal.organizationId), Organization, decide), READS);
}

/**
 * Global-only operations (spec, Authentication 4): a scoped key gets 403 'Forbidden: global API key required'; a
 * signed-in user needs the `team` category at `level`.
 */
function globalOnly(c: Caller, level: 'view' | 'manage'): void {
  if (isUser(c.principal)) authorize(c.principal, { category: 'team', level });
  else requireGlobal(c.principal);
}

// ---- roles --------------------------------------------------------------------------------------------------------

export async function listRoles(c: Caller): Promise<{ roles: RoleView[] }> {
  globalOnly(c, 'view');
  return { roles: await rolesQueries.listRoles(dbOf(c), c.principal.organizationId) };
}

export async function createRole(c: Caller, input: CreateRole): Promise<{ success: true; role: RoleView }> {
  globalOnly(c, 'manage');
  const role_id = newId();
  await decideOnOrganization(c, (s) => decideCreateRole(s, { ...input, role_id }));
  return { success: true, role: await getRole(dbOf(c), c.principal.organizationId, role_id) };
}

export async function deleteRole(c: Caller, roleId: string): Promise<{ success: true; message: string }> {
  globalOnly(c, 'manage');
  return decideOnOrganization(c, (s) => decideDeleteRole(s, roleId));
}

// ---- invites -------------------------------------------------------------------------------------------------------

type InviteOutcomeView = { success: boolean; message?: string; user_id?: string; invite_id?: string; error?: string };

/** A one-time token for an email invite: its SHA-256 is all the log keeps. */
const newToken = () => randomBytes(32).toString('base64url');
export const tokenHash = (token: string) => createHash('sha256').update(token).digest('hex');

/** Website ids that are another organization's: the spec answers 403 for them, not 404. */
async function foreignWebsites(c: Caller, ids: readonly string[]): Promise<Set<string>> {
  return foreignWebsiteIds(dbOf(c), c.principal.organizationId, ids);
}

async function invite(
  c: Caller,
  input: { invite_method: 'direct' | 'email'; email: string; role?: 'admin' | 'viewer'; role_id?: string; first_name?: string; last_name?: string },
  targets: InviteTarget[],
) {
  const websiteTargets = targets.filter((t) => t.type === 'website').map((t) => t.target_id!);
  const foreign = await foreignWebsites(c, websiteTargets);
  const token = newToken();
  const now = new Date().toISOString();
  const cmd: InviteCommand = {
    method: input.invite_method,
    email: input.email,
    first_name: input.first_name ?? null,
    last_name: input.last_name ?? null,
    role: input.role,
    role_id: input.role_id,
    targets,
    scope: c.principal.websiteIds,
    now,
    new_user_id: newId(),
    invite_ids: targets.map(() => newId()),
    batch_id: newId(),
    token,
    token_hash: tokenHash(token),
  };
  const decided = await decideOnOrganization(c, (s) => {
    const d = decideInvite(s, cmd);
    if (isDomainError(d)) return d;
    // another organization's website: 403, as every website-scoped endpoint answers
    const outcomes = d.result.outcomes.map(
      (o, i): TargetOutcome => (foreign.has(targets[i].target_id ?? '') ? { ok: false, error: forbidden(WEBSITE_FORBIDDEN) } : o),
    );
    return { ...d, result: { ...d.result, outcomes } };
  });
  // the invitation email follows from the invites recorded (src/workers/invitations.ts, then the outbox)
  return decided.outcomes;
}

const outcomeView = (o: TargetOutcome): InviteOutcomeView =>
  o.ok
    ? { success: true, message: o.message, ...(o.user_id ? { user_id: o.user_id } : {}), ...(o.invite_id ? { invite_id: o.invite_id } : {}) }
    : { success: false, error: o.error.message };

/**
 * POST /api/v1/invites: organization and group invites need a global key; a website invite works with a key whose
 * scope includes the website. direct answers user_id, email answers invite_id.
 */
export async function createInvite(c: Caller, input: CreateInvite) {
  if (input.type === 'website') {
    if (isUser(c.principal)) authorize(c.principal, { category: 'team', level: 'manage' }, input.website_id);
  } else globalOnly(c, 'manage');
  const target: InviteTarget = {
    type: input.type,
    target_id: input.type === 'website' ? input.website_id! : input.type === 'group' ? input.group_id! : null,
  };
  const [o] = await invite(c, input, [target]);
  if (!o.ok) throw new DomainErrorException(o.error);
  return outcomeView(o) as { success: true; message: string; user_id?: string; invite_id?: string };
}

/** POST /api/v1/invites/bulk: each target on its own (one consolidated email); group targets need a global key. */
export async function bulkInvite(c: Caller, input: BulkInvite) {
  if (input.group_ids) globalOnly(c, 'manage');
  else if (isUser(c.principal)) authorize(c.principal, { category: 'team', level: 'manage' });
  const targets: InviteTarget[] = input.website_ids
    ? input.website_ids.map((id) => ({ type: 'website', target_id: id }))
    : input.group_ids!.map((id) => ({ type: 'group', target_id: id }));
  const outcomes = await invite(c, input, targets);
  return {
    success: true,
    results: outcomes.map((o, i) => ({
      ...(input.website_ids ? { website_id: targets[i].target_id! } : { group_id: targets[i].target_id! }),
      ...outcomeView(o),
    })),
  };
}

/**
 * POST /api/v1/invites/accept (no key): the token's pending invites become memberships; expired or used tokens 400.
 * The organization is found by the token's hash in the read model, then the acceptance is decided on its stream.
 */
export async function acceptInvite(deps: AppDeps, input: AcceptInvite): Promise<AcceptResult> {
  const hash = tokenHash(input.token);
  const organizationId = await inviteOrganization(deps.rt.database.db, hash);
  if (!organizationId) throw new DomainErrorException(invalid(ACCEPT_MESSAGES.invalid));
  const ctx = { store: deps.rt.store, organizationId, actor: SYSTEM_ACTOR };
  const password_hash = input.password ? await hashPassword(input.password) : null;
  const cmd = {
    token_hash: hash,
    now: new Date().toISOString(),
    new_user_id: newId(),
    first_name: input.first_name ?? null,
    last_name: input.last_name ?? null,
    password_hash,
  };
  return settled(
    deps,
    handle(ctx, organizationStream(organizationId), Organization, (s) => decideAccept(s, cmd)),
    READS,
  );
}

// ---- groups -------------------------------------------------------------------------------------------------------

export async function listGroups(c: Caller, externalId?: string): Promise<{ groups: GroupView[] }> {
  globalOnly(c, 'view');
  if (externalId !== undefined) requirePartner(c.principal);
  return { groups: await groupsQueries.listGroups(dbOf(c), c.principal, externalId) };
}

export async function getGroup(c: Caller, groupId: string): Promise<{ group: GroupView }> {
  globalOnly(c, 'view');
  return { group: await groupsQueries.getGroup(dbOf(c), c.principal, groupId) };
}

/** Another organization's website in a group's websites: 403, as every endpoint answers for its website ids. */
async function refuseForeignWebsites(c: Caller, ids: readonly string[] | undefined): Promise<void> {
  if (ids?.length && (await foreignWebsites(c, ids)).size) throw new DomainErrorException(forbidden(WEBSITE_FORBIDDEN));
}

export async function createGroup(c: Caller, input: CreateGroup): Promise<{ group: GroupView }> {
  globalOnly(c, 'manage');
  await refuseForeignWebsites(c, input.website_ids);
  const group_id = newId();
  await decideOnOrganization(c, (s) => decideCreateGroup(s, { ...input, group_id, partner: c.principal.partner }));
  return { group: await groupsQueries.getGroup(dbOf(c), c.principal, group_id) };
}

export async function updateGroup(c: Caller, groupId: string, input: UpdateGroup): Promise<{ group: GroupView }> {
  globalOnly(c, 'manage');
  await refuseForeignWebsites(c, [...(input.add_website_ids ?? []), ...(input.remove_website_ids ?? [])]);
  await decideOnOrganization(c, (s) => decideUpdateGroup(s, groupId, { ...input, partner: c.principal.partner }));
  return { group: await groupsQueries.getGroup(dbOf(c), c.principal, groupId) };
}

export async function listGroupMembers(c: Caller, groupId: string, accessType?: AccessType): Promise<{ members: MemberView[] }> {
  globalOnly(c, 'view');
  return { members: await membersQueries.listGroupMembers(dbOf(c), c.principal.organizationId, groupId, accessType) };
}

export async function removeGroupMember(c: Caller, groupId: string, userId: string): Promise<GroupMemberRemoval> {
  globalOnly(c, 'manage');
  return decideOnOrganization(c, (s) => decideRemoveGroupMember(s, groupId, userId, c.principal.userId));
}

// ---- members ------------------------------------------------------------------------------------------------------

/** GET /api/v1/organizations/members: a scoped key sees those who reach one of its websites. */
export async function listOrganizationMembers(c: Caller): Promise<{ members: MemberView[] }> {
  if (isUser(c.principal)) authorize(c.principal, { category: 'team', level: 'view' });
  return { members: await membersQueries.listOrganizationMembers(dbOf(c), c.principal) };
}

export async function changeMemberRole(c: Caller, userId: string, input: ChangeRole): Promise<MemberChange> {
  globalOnly(c, 'manage');
  return decideOnOrganization(c, (s) => decideChangeMemberRole(s, userId, input, c.principal.userId));
}

export async function removeMember(c: Caller, userId: string): Promise<MemberChange> {
  globalOnly(c, 'manage');
  return decideOnOrganization(c, (s) => decideRemoveMember(s, userId, c.principal.userId));
}

export async function listWebsiteMembers(c: Caller, websiteId: string): Promise<{ members: MemberView[] }> {
  await websiteFor(c, websiteId, { category: 'team', level: 'view' });
  return { members: await membersQueries.listWebsiteMembers(dbOf(c), c.principal.organizationId, websiteId) };
}

/** PATCH (input) or DELETE (null) /api/v1/websites/{id}/members/{user_id}: a key whose scope includes the website. */
export async function changeWebsiteMember(
  c: Caller,
  websiteId: string,
  userId: string,
  input: ChangeRole | null,
): Promise<{ success: true; message: string }> {
  await websiteFor(c, websiteId, { category: 'team', level: 'manage' });
  return decideOnOrganization(c, (s) => decideChangeWebsiteMember(s, websiteId, userId, input, c.principal.userId));
}

/** GET /api/v1/users/{id}/websites: 404 for an id no user has, within the caller's websites. */
export async function userWebsites(c: Caller, userId: string) {
  if (isUser(c.principal) && c.principal.userId !== userId) authorize(c.principal, { category: 'team', level: 'view' });
  return membersQueries.userWebsites(dbOf(c), c.principal, userId);
}
