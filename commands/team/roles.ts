import { z } from 'zod';
import { conflict, type DomainError, forbidden, invalid, notFound } from '../../src/domain/errors';
import { ACCESS_LEVELS, PERMISSION_CATEGORIES, type Permissions, systemRole, SYSTEM_ROLES } from '../../src/domain/principal';
import { label, text } from '../../src/domain/schemas';
import type { Decision } from '../handle';
import type { OrganizationState } from '../organizations/organization';
import { roleInUse } from './team';

/** A role id: GUID-shaped (system roles' sentinel ids are not RFC 4122 UUIDs, so zod's uuid() would refuse them). */
export const RoleId = text()
  .regex(/^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/, 'must be a GUID')
  .transform((s) => s.toLowerCase());

const Level = z.enum(ACCESS_LEVELS, { error: `must be one of ${ACCESS_LEVELS.join(', ')}` }).refine((l) => l !== 'none', 'must be at least view');

/** Omitted categories are `view`; every category is at least `view`. */
export const RolePermissions = z.strictObject(
  Object.fromEntries(PERMISSION_CATEGORIES.map((c) => [c, Level.optional()])) as Record<
    (typeof PERMISSION_CATEGORIES)[number],
    z.ZodOptional<typeof Level>
  >,
);

export const CreateRole = z.strictObject({
  name: label(100),
  permissions: RolePermissions.default({}),
});
export type CreateRole = z.infer<typeof CreateRole>;

export const fullMatrix = (p: Partial<Record<(typeof PERMISSION_CATEGORIES)[number], string | undefined>>): Permissions =>
  Object.fromEntries(PERMISSION_CATEGORIES.map((c) => [c, p[c] ?? 'view'])) as Permissions;

const sameMatrix = (a: Readonly<Permissions>, b: Readonly<Permissions>) => PERMISSION_CATEGORIES.every((c) => a[c] === b[c]);

export const slugOf = (name: string) =>
  name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '') || 'role';

export const ROLE_MESSAGES = {
  nameTaken: 'Role name already exists',
  sameMatrix: 'A role with the same permissions already exists',
  system: 'System roles cannot be deleted',
  inUse: 'Role is in use',
  enterprise: 'Custom roles require the Enterprise plan',
  notFound: 'Role not found',
};

export interface RoleCreatedResult {
  role_id: string;
}

/** Unique names (case-insensitive, never a system role's), a matrix no other role has, the Enterprise plan. */
export function decideCreateRole(s: OrganizationState, cmd: CreateRole & { role_id: string }): Decision<RoleCreatedResult> | DomainError {
  if (s.plan !== 'enterprise') return forbidden(ROLE_MESSAGES.enterprise);
  const name = cmd.name.trim();
  if (!name) return invalid('name: must not be empty');
  const lower = name.toLowerCase();
  const roles = [...SYSTEM_ROLES, ...s.team.roles.values()];
  if (roles.some((r) => r.name.toLowerCase() === lower)) return conflict(ROLE_MESSAGES.nameTaken);
  const permissions = fullMatrix(cmd.permissions);
  if (roles.some((r) => sameMatrix(r.permissions, permissions))) return conflict(ROLE_MESSAGES.sameMatrix);
  const base = slugOf(name);
  const slugs = new Set(roles.map((r) => r.slug));
  let slug = base;
  for (let i = 2; slugs.has(slug); i++) slug = `${base}-${i}`;
  return { events: [{ type: 'RoleCreated', data: { role_id: cmd.role_id, name, slug, permissions } }], result: { role_id: cmd.role_id } };
}

/** Not a system role, not in use by a member (organization, website, group) or a pending invite. */
export function decideDeleteRole(s: OrganizationState, roleId: string): Decision<{ success: true; message: string }> | DomainError {
  if (systemRole(roleId)) return invalid(ROLE_MESSAGES.system);
  const role = s.team.roles.get(roleId);
  if (!role) return notFound(ROLE_MESSAGES.notFound);
  if (roleInUse(s.team, roleId)) return conflict(ROLE_MESSAGES.inUse);
  return { events: [{ type: 'RoleDeleted', data: { role_id: roleId, name: role.name } }], result: { success: true, message: 'Role deleted' } };
}
