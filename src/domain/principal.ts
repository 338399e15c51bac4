import { DomainErrorException, forbidden } from './errors';
import type { Feature } from './events';

/**
 * Who is calling, and what they may do (ARCHITECTURE.md, "Who may do what"). An API key acts as an admin within its
 * scope; a signed-in user acts with their role's permission matrix over the websites they reach (organization role
 * owner/admin: every website; otherwise their groups' websites and explicit website memberships).
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
  /** the websites reachable: null = every website of the organization (a global key, an owner or admin) */
  websiteIds: string[] | null;
  partner: boolean;
  plan: 'free' | 'pro' | 'enterprise';
  features: Feature[];
  /** absent: an API key, an admin within its scope */
  permissions?: Permissions;
}

export const WEBSITE_FORBIDDEN = 'Unauthorized access to this website';
export const GLOBAL_KEY_REQUIRED = 'Forbidden: global API key required';
export const PARTNER_KEY_REQUIRED = 'Forbidden: partner API key required';
export const PERMISSION_DENIED = 'Forbidden: insufficient permissions';

export const isGlobal = (p: Principal) => p.websiteIds === null;
export const isUser = (p: Principal) => p.kind === 'user';
export const permissionsOf = (p: Principal): Readonly<Permissions> => p.permissions ?? ADMIN_PERMISSIONS;
export const inScope = (p: Principal, websiteId: string) => p.websiteIds === null || p.websiteIds.includes(websiteId);
export const atLeast = (have: AccessLevel, need: AccessLevel) => ACCESS_LEVELS.indexOf(have) >= ACCESS_LEVELS.indexOf(need);

/** What an operation needs: a level in one permission category. */
export interface Need {
  category: PermissionCategory;
  level: AccessLevel;
}

/** Whether the principal may do what `need` names (on `websiteId`, when given). Pure: no I/O. */
export function can(p: Principal, need: Need, websiteId?: string): boolean {
  if (websiteId !== undefined && !inScope(p, websiteId)) return false;
  return atLeast(permissionsOf(p)[need.category], need.level);
}

/**
 * The one access decision every operation makes (never re-implemented in a route or tool): 403 'Unauthorized access
 * to this website' outside the principal's websites, 403 'Forbidden: insufficient permissions' below the level.
 * Whether the website exists and belongs to the organization is read by the caller first (a read model).
 */
export function authorize(p: Principal, need: Need, websiteId?: string): void {
  if (websiteId !== undefined && !inScope(p, websiteId)) throw new DomainErrorException(forbidden(WEBSITE_FORBIDDEN));
  if (!atLeast(permissionsOf(p)[need.category], need.level)) throw new DomainErrorException(forbidden(PERMISSION_DENIED));
}

/** Global-only operations (spec, Authentication 4): a key scoped to some websites gets 403. */
export function requireGlobal(p: Principal): void {
  if (p.websiteIds !== null) throw new DomainErrorException(forbidden(GLOBAL_KEY_REQUIRED));
}

export function requirePartner(p: Principal): void {
  if (!p.partner) throw new DomainErrorException(forbidden(PARTNER_KEY_REQUIRED));
}
