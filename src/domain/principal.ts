import { DomainErrorException, forbidden } from './errors';
import type { Feature } from './events';

/**
 * Who is calling, and what they may do (ARCHITECTURE.md, "Who may do what"). An API key acts as an admin within its
 * scope; a signed-in user acts with their role's permission matrix over the websites they reach (an organization
 * member: every website; anyone else: their groups' websites and explicit website memberships).
 */
export const PERMISSION_CATEGORIES = [
  'content',
  'prompts',
  'competitors',
  'analytics',
  'integrations',
  'brand_knowledge',
  'team',
  'billing',
  'api',
  'organization',
] as const;
export type PermissionCategory = (typeof PERMISSION_CATEGORIES)[number];

/** Ordered: none < view < edit < manage. */
export const ACCESS_LEVELS = ['none', 'view', 'edit', 'manage'] as const;
export type AccessLevel = (typeof ACCESS_LEVELS)[number];
export type Permissions = Record<PermissionCategory, AccessLevel>;

const matrix = (level: AccessLevel): Permissions => Object.fromEntries(PERMISSION_CATEGORIES.map((c) => [c, level])) as Permissions;
/** What an API key may do within its scope, and what the owner and admin roles may do. */
export const ADMIN_PERMISSIONS: Readonly<Permissions> = Object.freeze(matrix('manage'));
export const VIEWER_PERMISSIONS: Readonly<Permissions> = Object.freeze(matrix('view'));

export interface Principal {
  /** absent: an API key (the only kind before sign-in existed) */
  kind?: 'api_key' | 'user';
  organizationId: string;
  /** the key that authenticated the call; null for a signed-in user */
  apiKeyId: string | null;
  /** the key's owner, or the signed-in user */
  userId: string | null;
  /** the signed-in user's email (activity's actor.user); null for keys */
  email?: string | null;
  /** the websites reachable: null = every website of the organization (a global key, an organization member) */
  websiteIds: string[] | null;
  partner: boolean;
  plan: 'free' | 'pro' | 'enterprise';
  features: Feature[];
  /** absent: an API key, an admin within its scope */
  permissions?: Permissions;
  /**
   * A signed-in user's websites (groups' websites ∪ explicit memberships; absent for an organization member, who
   * reaches them all) with the permissions they hold on each: the keys are `websiteIds`, looked up in O(1).
   */
  websiteAccess?: ReadonlyMap<string, Readonly<Permissions>>;
}

export const WEBSITE_FORBIDDEN = 'Unauthorized access to this website';
export const GLOBAL_KEY_REQUIRED = 'Forbidden: global API key required';
export const PARTNER_KEY_REQUIRED = 'Forbidden: partner API key required';
export const PERMISSION_DENIED = 'Forbidden: insufficient permissions';

export const isGlobal = (p: Principal) => p.websiteIds === null;
export const isUser = (p: Principal) => p.kind === 'user';
export const permissionsOf = (p: Principal): Readonly<Permissions> => p.permissions ?? ADMIN_PERMISSIONS;
export const inScope = (p: Principal, websiteId: string) =>
  p.websiteIds === null || (p.websiteAccess ? p.websiteAccess.has(websiteId) : p.websiteIds.includes(websiteId));
/** What the principal may do on one website (its membership's role there), or in general. */
const permissionsOn = (p: Principal, websiteId?: string): Readonly<Permissions> =>
  (websiteId !== undefined && p.websiteAccess?.get(websiteId)) || permissionsOf(p);
export const atLeast = (have: AccessLevel, need: AccessLevel) => ACCESS_LEVELS.indexOf(have) >= ACCESS_LEVELS.indexOf(need);

/** What an operation needs: a level in one permission category. */
export interface Need {
  category: PermissionCategory;
  level: AccessLevel;
}

/** Whether the principal may do what `need` names (on `websiteId`, when given). Pure: no I/O. */
export function can(p: Principal, need: Need, websiteId?: string): boolean {
  if (websiteId !== undefined && !inScope(p, websiteId)) return false;
  return atLeast(permissionsOn(p, websiteId)[need.category], need.level);
}

/**
 * The one access decision every operation makes (never re-implemented in a route or tool): 403 'Unauthorized access
 * to this website' outside the principal's websites, 403 'Forbidden: insufficient permissions' below the level.
 * Whether the website exists and belongs to the organization is read by the caller first (a read model).
 */
export function authorize(p: Principal, need: Need, websiteId?: string): void {
  if (websiteId !== undefined && !inScope(p, websiteId)) throw new DomainErrorException(forbidden(WEBSITE_FORBIDDEN));
  if (!atLeast(permissionsOn(p, websiteId)[need.category], need.level)) throw new DomainErrorException(forbidden(PERMISSION_DENIED));
}

/** Global-only operations (spec, Authentication 4): a key scoped to some websites gets 403. */
export function requireGlobal(p: Principal): void {
  if (p.websiteIds !== null) throw new DomainErrorException(forbidden(GLOBAL_KEY_REQUIRED));
}

export function requirePartner(p: Principal): void {
  if (!p.partner) throw new DomainErrorException(forbidden(PARTNER_KEY_REQUIRED));
}

// ---- users: roles and effective access -------------------------------------------------------------------------

/** The system roles (CONTRACT.md, Organization administration): sentinel ids, not RFC 4122 UUIDs. */
export const SYSTEM_ROLE_IDS = {
  owner: '00000000-0000-0000-0000-000000000001',
  admin: '00000000-0000-0000-0000-000000000002',
  viewer: '00000000-0000-0000-0000-000000000003',
} as const;
export type SystemRoleSlug = keyof typeof SYSTEM_ROLE_IDS;

export interface RoleDefinition {
  role_id: string;
  name: string;
  slug: string;
  is_system: boolean;
  permissions: Readonly<Permissions>;
}

export const SYSTEM_ROLES: readonly RoleDefinition[] = Object.freeze([
  { role_id: SYSTEM_ROLE_IDS.owner, name: 'Owner', slug: 'owner', is_system: true, permissions: ADMIN_PERMISSIONS },
  { role_id: SYSTEM_ROLE_IDS.admin, name: 'Admin', slug: 'admin', is_system: true, permissions: ADMIN_PERMISSIONS },
  { role_id: SYSTEM_ROLE_IDS.viewer, name: 'Viewer', slug: 'viewer', is_system: true, permissions: VIEWER_PERMISSIONS },
]);
const systemById = new Map(SYSTEM_ROLES.map((r) => [r.role_id, r]));
export const systemRole = (roleId: string): RoleDefinition | undefined => systemById.get(roleId);
const NO_PERMISSIONS: Readonly<Permissions> = Object.freeze(matrix('none'));

/** The higher level of each category: a website reached twice (a group and a membership) has the better of both. */
export function strongest(a: Readonly<Permissions>, b: Readonly<Permissions>): Permissions {
  const out = { ...a };
  for (const c of PERMISSION_CATEGORIES) if (ACCESS_LEVELS.indexOf(b[c]) > ACCESS_LEVELS.indexOf(out[c])) out[c] = b[c];
  return out;
}

/** What a user reaches, from their memberships (read from the team read model, or folded from the log). */
export interface UserAccess {
  organizationId: string;
  userId: string;
  email: string | null;
  plan: Principal['plan'];
  features: Feature[];
  /** the organization role's id and permissions; null when the user is not an organization member */
  orgRole: { role_id: string; permissions: Readonly<Permissions> } | null;
  /** the user's groups: each group's websites with the permissions of the user's role in the group */
  groups: readonly { website_ids: readonly string[]; permissions: Readonly<Permissions> }[];
  /** explicit website memberships */
  websites: readonly { website_id: string; permissions: Readonly<Permissions> }[];
}

/**
 * Reach (CONTRACT.md, Organization administration): an organization member, whatever their organization role (system
 * or custom), reaches every website with that role's permissions: null. Anyone else reaches the websites of their
 * groups and explicit memberships, each with the best of the roles that reach it.
 */
export function websiteReach(a: Pick<UserAccess, 'orgRole' | 'groups' | 'websites'>): Map<string, Readonly<Permissions>> | null {
  if (a.orgRole) return null;
  const access = new Map<string, Readonly<Permissions>>();
  const add = (id: string, perms: Readonly<Permissions>) => {
    const had = access.get(id);
    access.set(id, had ? strongest(had, perms) : perms);
  };
  for (const g of a.groups) for (const id of g.website_ids) add(id, g.permissions);
  for (const m of a.websites) add(m.website_id, m.permissions);
  return access;
}

/** A signed-in user as a principal (websiteReach). Built once per session; authorize() is then a map lookup. */
export function userPrincipal(a: UserAccess): Principal {
  const base: Principal = {
    kind: 'user',
    organizationId: a.organizationId,
    apiKeyId: null,
    userId: a.userId,
    email: a.email,
    websiteIds: null,
    partner: false,
    plan: a.plan,
    features: a.features,
    permissions: { ...(a.orgRole?.permissions ?? NO_PERMISSIONS) },
  };
  const access = websiteReach(a);
  return access ? { ...base, websiteIds: [...access.keys()], websiteAccess: access } : base;
}
