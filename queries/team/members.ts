import type { Knex } from 'knex';
import { z } from 'zod';
import { DomainErrorException, notFound } from '../../src/domain/errors';
import { catalogue } from '../../src/domain/events';
import { type Permissions, type Principal, SYSTEM_ROLES, type UserAccess } from '../../src/domain/principal';
import { roleNames } from './roles';
import { iso } from '../timestamps';

export const AccessType = z.enum(['organization', 'group', 'website']);
export type AccessType = z.infer<typeof AccessType>;
/** How a group's members reach it: the group itself, or the organization role (every organization member). */
export const GroupAccessType = z.enum(['organization', 'group'], { error: "must be 'organization' or 'group'" });

/** A person of the organization with the role that gives them access. */
export const MemberView = z.object({
  // the person's own fields, as their account was created (UserCreated)
  ...catalogue.UserCreated.pick({ user_id: true, email: true, first_name: true, last_name: true }).shape,
  role: z.string(),
  role_id: z.string(),
  role_name: z.string(),
  access_type: AccessType,
  created_at: z.string(),
});
export type MemberView = z.infer<typeof MemberView>;
export const MembersView = z.object({ members: z.array(MemberView) });

export const UserWebsiteView = z.object({ website_id: z.string(), name: z.string(), url: z.string(), access_type: AccessType, role: z.string() });
export const UserWebsitesView = z.object({ websites: z.array(UserWebsiteView) });

interface Row {
  user_id: string;
  email: string;
  first_name: string | null;
  last_name: string | null;
  role_id: string;
  created_at: Date | string;
}

/** A user reached twice is shown by the broadest of the ways: the organization, then a website membership, then a group. */
const RANK: Record<AccessType, number> = { organization: 0, website: 1, group: 2 };

async function shape(db: Knex, organizationId: string, rows: (Row & { access_type: AccessType })[]): Promise<MemberView[]> {
  const names = await roleNames(db, organizationId);
  const best = new Map<string, Row & { access_type: AccessType }>();
  for (const r of rows) {
    const had = best.get(r.user_id);
    if (!had || RANK[r.access_type] < RANK[had.access_type]) best.set(r.user_id, r);
  }
  return [...best.values()].map((r) => ({
    user_id: r.user_id,
    email: r.email,
    first_name: r.first_name,
    last_name: r.last_name,
    role: names.get(r.role_id)?.slug ?? 'unknown',
    role_id: r.role_id,
    role_name: names.get(r.role_id)?.name ?? 'Unknown',
    access_type: r.access_type,
    created_at: iso(r.created_at),
  }));
}

const USER_COLUMNS = ['u.id as user_id', 'u.email', 'u.first_name', 'u.last_name'];

/** The organization's members, oldest first: everyone whose organization role reaches every website. */
const organizationMembers = (db: Knex, organizationId: string) =>
  db('rm_team_members as m')
    .join('rm_team_users as u', 'u.id', 'm.user_id')
    .where('m.organization_id', organizationId)
    .orderBy([{ column: 'm.created_at' }, { column: 'u.id' }])
    .select(...USER_COLUMNS, 'm.role_id', 'm.created_at');

/**
 * The organization's members with their organization role, oldest first. Each reaches every website (websiteReach), so
 * a scoped key sees them all too.
 */
export async function listOrganizationMembers(db: Knex, p: Principal): Promise<MemberView[]> {
  const rows = (await organizationMembers(db, p.organizationId)) as Row[];
  return shape(
    db,
    p.organizationId,
    rows.map((r) => ({ ...r, access_type: 'organization' as const })),
  );
}

/** Everyone who reaches a website: the organization's members, its groups' members, its explicit members. */
export async function listWebsiteMembers(db: Knex, organizationId: string, websiteId: string): Promise<MemberView[]> {
  const [org, direct, groups] = await Promise.all([
    organizationMembers(db, organizationId),
    db('rm_team_website_members as m')
      .join('rm_team_users as u', 'u.id', 'm.user_id')
      .where('m.website_id', websiteId)
      .select(...USER_COLUMNS, 'm.role_id', 'm.created_at'),
    db('rm_team_group_members as m')
      .join('rm_team_group_websites as gw', 'gw.group_id', 'm.group_id')
      .join('rm_team_users as u', 'u.id', 'm.user_id')
      .where('gw.website_id', websiteId)
      .select(...USER_COLUMNS, 'm.role_id', 'm.created_at'),
  ]);
  const rows = [
    ...(org as Row[]).map((r) => ({ ...r, access_type: 'organization' as const })),
    ...(direct as Row[]).map((r) => ({ ...r, access_type: 'website' as const })),
    ...(groups as Row[]).map((r) => ({ ...r, access_type: 'group' as const })),
  ].sort((a, b) => new Date(a.created_at).getTime() - new Date(b.created_at).getTime() || a.user_id.localeCompare(b.user_id));
  return shape(db, organizationId, rows);
}

/**
 * Everyone who reaches a group's websites: its members (group) and the organization's members (organization), each
 * listed once by the broadest way; `accessType` keeps those reaching it that way.
 */
export async function listGroupMembers(db: Knex, organizationId: string, groupId: string, accessType?: AccessType): Promise<MemberView[]> {
  const group = await db('rm_team_groups').where({ id: groupId, organization_id: organizationId }).first('id');
  if (!group) throw new DomainErrorException(notFound('Group not found'));
  const [direct, org] = await Promise.all([
    db('rm_team_group_members as m')
      .join('rm_team_users as u', 'u.id', 'm.user_id')
      .where('m.group_id', groupId)
      .orderBy([{ column: 'm.created_at' }, { column: 'u.id' }])
      .select(...USER_COLUMNS, 'm.role_id', 'm.created_at') as Promise<Row[]>,
    organizationMembers(db, organizationId) as Promise<Row[]>,
  ]);
  const members = await shape(db, organizationId, [
    ...direct.map((r) => ({ ...r, access_type: 'group' as const })),
    ...org.map((r) => ({ ...r, access_type: 'organization' as const })),
  ]);
  return accessType === undefined ? members : members.filter((m) => m.access_type === accessType);
}

/**
 * The websites a user reaches (websiteReach), active ones only, within the calling key's scope: an organization member
 * every one with their organization role; anyone else each website once by the broadest way it is reached (website,
 * group) and that way's role. 404 for an id no user has; a user of another organization reaches none here.
 */
export async function userWebsites(db: Knex, p: Principal, userId: string): Promise<z.infer<typeof UserWebsitesView>> {
  const user = await db('rm_team_users').where({ id: userId }).first('id');
  if (!user) throw new DomainErrorException(notFound('User not found'));
  const names = await roleNames(db, p.organizationId);
  const member = (await db('rm_team_members').where({ organization_id: p.organizationId, user_id: userId }).first('role_id')) as
    | { role_id: string }
    | undefined;
  const sites = db('rm_websites').where({ organization_id: p.organizationId, status: 'active' });
  if (p.websiteIds !== null) sites.whereIn('id', p.websiteIds);
  const reached = new Map<string, { access_type: AccessType; role_id: string }>();
  const reach = (websiteId: string, access_type: AccessType, role_id: string) => {
    const had = reached.get(websiteId);
    if (!had || RANK[access_type] < RANK[had.access_type]) reached.set(websiteId, { access_type, role_id });
  };
  if (member) {
    for (const w of (await sites.clone().select('id')) as { id: string }[]) reach(w.id, 'organization', member.role_id);
  } else {
    const [direct, grouped] = await Promise.all([
      db('rm_team_website_members').where({ organization_id: p.organizationId, user_id: userId }).select('website_id', 'role_id'),
      db('rm_team_group_members as m')
        .join('rm_team_group_websites as gw', 'gw.group_id', 'm.group_id')
        .where('m.user_id', userId)
        .select('gw.website_id', 'm.role_id'),
    ]);
    for (const r of direct as { website_id: string; role_id: string }[]) reach(r.website_id, 'website', r.role_id);
    for (const r of grouped as { website_id: string; role_id: string }[]) reach(r.website_id, 'group', r.role_id);
  }
  if (!reached.size) return { websites: [] };
  const rows = (await sites
    .whereIn('id', [...reached.keys()])
    .orderBy([{ column: 'created_at' }, { column: 'id' }])
    .select('id', 'name', 'url')) as { id: string; name: string; url: string }[];
  return {
    websites: rows.map((w) => {
      const r = reached.get(w.id)!;
      return { website_id: w.id, name: w.name, url: w.url, access_type: r.access_type, role: names.get(r.role_id)?.slug ?? 'unknown' };
    }),
  };
}

/** What a user reaches, for their principal (userPrincipal): one read per kind of membership. */
export async function userAccess(db: Knex, organizationId: string, userId: string): Promise<UserAccess | null> {
  const user = (await db('rm_team_users as u')
    .join('rm_organizations as o', 'o.id', 'u.organization_id')
    .where({ 'u.id': userId, 'u.organization_id': organizationId })
    .first('u.email', 'o.plan', 'o.features')) as { email: string; plan: Principal['plan']; features: Principal['features'] } | undefined;
  if (!user) return null;
  const custom = new Map<string, Permissions>();
  for (const r of (await db('rm_team_roles').where('organization_id', organizationId).select('id', 'permissions')) as {
    id: string;
    permissions: Permissions | string;
  }[]) {
    custom.set(r.id, typeof r.permissions === 'string' ? JSON.parse(r.permissions) : r.permissions);
  }
  const perms = (roleId: string): Permissions | undefined => SYSTEM_ROLES.find((r) => r.role_id === roleId)?.permissions ?? custom.get(roleId);
  const [member, direct, grouped] = await Promise.all([
    db('rm_team_members').where({ organization_id: organizationId, user_id: userId }).first('role_id') as Promise<{ role_id: string } | undefined>,
    db('rm_team_website_members as m')
      .join('rm_websites as w', 'w.id', 'm.website_id')
      .where({ 'm.organization_id': organizationId, 'm.user_id': userId, 'w.status': 'active' })
      .select('m.website_id', 'm.role_id') as Promise<{ website_id: string; role_id: string }[]>,
    db('rm_team_group_members as m')
      .join('rm_team_group_websites as gw', 'gw.group_id', 'm.group_id')
      .join('rm_websites as w', 'w.id', 'gw.website_id')
      .where({ 'm.user_id': userId, 'w.organization_id': organizationId, 'w.status': 'active' })
      .select('m.group_id', 'm.role_id', 'gw.website_id') as Promise<{ group_id: string; role_id: string; website_id: string }[]>,
  ]);
  const groups = new Map<string, { website_ids: string[]; permissions: Permissions }>();
  for (const r of grouped) {
    const p = perms(r.role_id);
    if (!p) continue;
    const g = groups.get(r.group_id) ?? { website_ids: [], permissions: p };
    g.website_ids.push(r.website_id);
    groups.set(r.group_id, g);
  }
  const orgPerms = member ? perms(member.role_id) : undefined;
  return {
    organizationId,
    userId,
    email: user.email,
    plan: user.plan,
    features: user.features,
    orgRole: member && orgPerms ? { role_id: member.role_id, permissions: orgPerms } : null,
    groups: [...groups.values()],
    websites: direct.flatMap((r) => {
      const p = perms(r.role_id);
      return p ? [{ website_id: r.website_id, permissions: p }] : [];
    }),
  };
}

/** The organization of the pending invites a token's hash addresses; undefined for a token no invite has. */
export async function inviteOrganization(db: Knex, tokenHash: string): Promise<string | undefined> {
  const row = (await db('rm_team_invites').where('token_hash', tokenHash).first('organization_id')) as { organization_id: string } | undefined;
  return row?.organization_id;
}
