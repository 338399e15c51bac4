import { type EventsOf, exhaustive, isEventOf, TEAM_EVENT_TYPES } from '../../src/domain/events';
import { mapWriter } from '../handle';
import { type Permissions, type RoleDefinition, SYSTEM_ROLE_IDS, SYSTEM_ROLES, systemRole, websiteReach } from '../../src/domain/principal';

/**
 * The organization's people and what they reach, folded from its stream `org-<id>` (a part of OrganizationState):
 * roles, users, organization members, explicit website memberships, groups with their websites and members, invites.
 * Every rule that two requests can race for (unique role names, the last admin, one membership per target) is decided
 * on this state with the stream's expected revision.
 */
export type CustomRole = RoleDefinition;

export interface TeamUser {
  id: string;
  email: string;
  first_name: string | null;
  last_name: string | null;
}

export interface GroupState {
  id: string;
  name: string;
  external_id: string | null;
  billing_enabled: boolean;
  website_ids: readonly string[];
  /** user id -> role id */
  members: ReadonlyMap<string, string>;
}

export interface InviteState {
  id: string;
  batch_id: string;
  type: 'organization' | 'website' | 'group';
  target_id: string | null;
  role_id: string;
  /** null once erased */
  email: string | null;
  first_name: string | null;
  last_name: string | null;
  token_hash: string;
  /** null once erased */
  token: string | null;
  expires_at: string;
  status: 'pending' | 'accepted';
}

export interface TeamState {
  roles: Map<string, CustomRole>;
  users: Map<string, TeamUser>;
  /** lower-cased email -> user id */
  emails: Map<string, string>;
  /** organization members: user id -> role id */
  members: Map<string, string>;
  /** explicit website memberships: `<website_id> <user_id>` -> role id */
  websiteMembers: Map<string, string>;
  groups: Map<string, GroupState>;
  invites: Map<string, InviteState>;
}

/** The organization stream's events that make its team. */
export type TeamEvent = EventsOf<typeof TEAM_EVENT_TYPES>;
export const isTeamEvent = isEventOf(TEAM_EVENT_TYPES);

export const emptyTeam = (): TeamState => ({
  roles: new Map(),
  users: new Map(),
  emails: new Map(),
  members: new Map(),
  websiteMembers: new Map(),
  groups: new Map(),
  invites: new Map(),
});

/** A copy whose maps load's replay may change in place (entries are replaced, never changed). */
export const ownTeam = (t: TeamState): TeamState => ({
  roles: new Map(t.roles),
  users: new Map(t.users),
  emails: new Map(t.emails),
  members: new Map(t.members),
  websiteMembers: new Map(t.websiteMembers),
  groups: new Map(t.groups),
  invites: new Map(t.invites),
});

export const membershipKey = (websiteId: string, userId: string) => `${websiteId} ${userId}`;

/**
 * Folds one event. `owned`: the maps are the caller's own (load's replay) and are changed in place; otherwise only
 * the maps the event touches are copied and `t` is left as it was.
 */
export function foldTeam(t: TeamState, e: TeamEvent, owned: boolean): TeamState {
  const m = mapWriter(t, owned);
  const write = m.write;
  const removeUserEverywhere = (userId: string) => {
    if (t.members.has(userId)) write('members').delete(userId);
    const wm = [...t.websiteMembers.keys()].filter((k) => k.endsWith(` ${userId}`));
    if (wm.length) {
      const m = write('websiteMembers');
      for (const k of wm) m.delete(k);
    }
    for (const g of t.groups.values()) {
      if (!g.members.has(userId)) continue;
      const members = new Map(g.members);
      members.delete(userId);
      write('groups').set(g.id, { ...g, members });
    }
  };
  switch (e.type) {
    case 'UserAdded': {
      const d = e.data;
      write('users').set(d.user_id, { id: d.user_id, email: d.email, first_name: null, last_name: null });
      write('emails').set(d.email.toLowerCase(), d.user_id);
      write('members').set(d.user_id, SYSTEM_ROLE_IDS[d.role]);
      break;
    }
    case 'UserCreated': {
      const d = e.data;
      write('users').set(d.user_id, { id: d.user_id, email: d.email, first_name: d.first_name, last_name: d.last_name });
      write('emails').set(d.email.toLowerCase(), d.user_id);
      break;
    }
    case 'RoleCreated': {
      const d = e.data;
      write('roles').set(d.role_id, { role_id: d.role_id, name: d.name, slug: d.slug, is_system: false, permissions: d.permissions });
      break;
    }
    case 'RoleDeleted':
      if (t.roles.has(e.data.role_id)) write('roles').delete(e.data.role_id);
      break;
    case 'OrganizationMemberAdded':
    case 'OrganizationMemberRoleChanged':
      write('members').set(e.data.user_id, e.data.role_id);
      break;
    case 'OrganizationMemberRemoved':
      removeUserEverywhere(e.data.user_id);
      break;
    case 'WebsiteMemberAdded':
    case 'WebsiteMemberRoleChanged':
      write('websiteMembers').set(membershipKey(e.data.website_id, e.data.user_id), e.data.role_id);
      break;
    case 'WebsiteMemberRemoved':
      if (t.websiteMembers.has(membershipKey(e.data.website_id, e.data.user_id)))
        write('websiteMembers').delete(membershipKey(e.data.website_id, e.data.user_id));
      break;
    case 'GroupCreated': {
      const d = e.data;
      write('groups').set(d.group_id, {
        id: d.group_id,
        name: d.name,
        external_id: d.external_id,
        billing_enabled: d.billing_enabled,
        website_ids: d.website_ids,
        members: new Map(),
      });
      break;
    }
    case 'GroupUpdated': {
      const d = e.data;
      const g = t.groups.get(d.group_id);
      if (!g) break;
      const removed = new Set(d.removed_website_ids);
      const website_ids = [...g.website_ids.filter((id) => !removed.has(id)), ...d.added_website_ids.filter((id) => !g.website_ids.includes(id))];
      write('groups').set(g.id, {
        ...g,
        name: d.name ?? g.name,
        external_id: d.external_id !== undefined ? d.external_id : g.external_id,
        billing_enabled: d.billing_enabled ?? g.billing_enabled,
        website_ids,
      });
      break;
    }
    case 'GroupMemberAdded': {
      const g = t.groups.get(e.data.group_id);
      if (g) write('groups').set(g.id, { ...g, members: new Map(g.members).set(e.data.user_id, e.data.role_id) });
      break;
    }
    case 'GroupMemberRemoved': {
      const d = e.data;
      const g = t.groups.get(d.group_id);
      if (g?.members.has(d.user_id)) {
        const members = new Map(g.members);
        members.delete(d.user_id);
        write('groups').set(g.id, { ...g, members });
      }
      for (const w of d.website_ids)
        if (t.websiteMembers.has(membershipKey(w, d.user_id))) write('websiteMembers').delete(membershipKey(w, d.user_id));
      break;
    }
    case 'InviteCreated': {
      // the invite as created, under its id, pending
      const { invite_id, ...invite } = e.data;
      write('invites').set(invite_id, {
        id: invite_id,
        ...invite,
        first_name: invite.first_name ?? null,
        last_name: invite.last_name ?? null,
        status: 'pending',
      });
      break;
    }
    case 'InviteAccepted': {
      const i = t.invites.get(e.data.invite_id);
      if (i) write('invites').set(i.id, { ...i, status: 'accepted' });
      break;
    }
    default:
      return exhaustive(e, m.state);
  }
  return m.state;
}

// ---- reading the state -------------------------------------------------------------------------------------------

/** A role by id: a system role, or one of the organization's custom roles. */
export const roleOf = (t: TeamState, roleId: string): RoleDefinition | undefined => systemRole(roleId) ?? t.roles.get(roleId);

export const userByEmail = (t: TeamState, email: string): TeamUser | undefined => {
  const id = t.emails.get(email.toLowerCase());
  return id ? t.users.get(id) : undefined;
};

/** Every role in use: by members, website members, group members and pending invites. */
export function roleInUse(t: TeamState, roleId: string): boolean {
  for (const r of t.members.values()) if (r === roleId) return true;
  for (const r of t.websiteMembers.values()) if (r === roleId) return true;
  for (const g of t.groups.values()) for (const r of g.members.values()) if (r === roleId) return true;
  for (const i of t.invites.values()) if (i.status === 'pending' && i.role_id === roleId) return true;
  return false;
}

/**
 * What a user reaches (websiteReach): website id -> permissions. `websites`: the organization's websites that count
 * (not deleted), all of them for an organization member.
 */
export function effectiveAccess(t: TeamState, userId: string, websites: Iterable<string>): Map<string, Permissions> {
  const perms = (roleId: string | undefined) => (roleId === undefined ? undefined : roleOf(t, roleId)?.permissions);
  const all = new Set(websites);
  const org = t.members.get(userId);
  const orgPerms = perms(org);
  const groups = [...t.groups.values()].flatMap((g) => {
    const p = perms(g.members.get(userId));
    return p ? [{ website_ids: g.website_ids.filter((w) => all.has(w)), permissions: p }] : [];
  });
  const memberships = [...t.websiteMembers].flatMap(([k, r]) => {
    const sp = k.indexOf(' ');
    const p = perms(r);
    return p && k.slice(sp + 1) === userId && all.has(k.slice(0, sp)) ? [{ website_id: k.slice(0, sp), permissions: p }] : [];
  });
  const reach = websiteReach({ orgRole: org && orgPerms ? { role_id: org, permissions: orgPerms } : null, groups, websites: memberships });
  if (reach === null) return new Map([...all].map((w) => [w, { ...orgPerms! }]));
  return new Map([...reach].map(([w, p]) => [w, { ...p }]));
}

/** Websites whose access differs between two effective-access maps. */
export function websitesAffected(before: Map<string, Permissions>, after: Map<string, Permissions>): number {
  let n = 0;
  for (const [w, p] of before) {
    const q = after.get(w);
    if (!q || JSON.stringify(p) !== JSON.stringify(q)) n++;
  }
  for (const w of after.keys()) if (!before.has(w)) n++;
  return n;
}

export { SYSTEM_ROLES, SYSTEM_ROLE_IDS };
