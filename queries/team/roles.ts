import type { Knex } from 'knex';
import { z } from 'zod';
import { DomainErrorException, notFound } from '../../src/domain/errors';
import { PermissionsData } from '../../src/domain/events';
import { PERMISSION_CATEGORIES, type Permissions, SYSTEM_ROLES, systemRole } from '../../src/domain/principal';
import { iso } from '../timestamps';

/** A role as the API shows it (spec, Role). */
export const RoleView = z.object({
  role_id: z.string(),
  name: z.string(),
  slug: z.string(),
  is_system: z.boolean(),
  permissions: PermissionsData,
  created_at: z.string(),
});
export type RoleView = z.infer<typeof RoleView>;
export const RolesView = z.object({ roles: z.array(RoleView) });

/** System roles have existed since before any organization. */
const SYSTEM_CREATED_AT = '1970-01-01T00:00:00.000Z';

const systemView = (r: (typeof SYSTEM_ROLES)[number], createdAt = SYSTEM_CREATED_AT): RoleView => ({
  role_id: r.role_id,
  name: r.name,
  slug: r.slug,
  is_system: true,
  permissions: { ...r.permissions },
  created_at: createdAt,
});

interface RoleRow {
  id: string;
  name: string;
  slug: string;
  permissions: Permissions;
  created_at: Date | string;
}

/** The ten categories in the spec's order, whatever order the jsonb column keeps its keys in. */
const inOrder = (p: Permissions | string): Permissions => {
  const stored = (typeof p === 'string' ? JSON.parse(p) : p) as Permissions;
  return Object.fromEntries(PERMISSION_CATEGORIES.map((c) => [c, stored[c]])) as Permissions;
};

const customView = (r: RoleRow): RoleView => ({
  role_id: r.id,
  name: r.name,
  slug: r.slug,
  is_system: false,
  permissions: inOrder(r.permissions),
  created_at: iso(r.created_at),
});

/** The system roles, then the organization's custom roles, oldest first. */
export async function listRoles(db: Knex, organizationId: string): Promise<RoleView[]> {
  const rows = (await db('rm_team_roles')
    .where('organization_id', organizationId)
    .orderBy([{ column: 'created_at' }, { column: 'id' }])) as RoleRow[];
  return [...SYSTEM_ROLES.map((r) => systemView(r)), ...rows.map(customView)];
}

export async function getRole(db: Knex, organizationId: string, roleId: string): Promise<RoleView> {
  const sys = systemRole(roleId);
  if (sys) return systemView(sys);
  const row = (await db('rm_team_roles').where({ organization_id: organizationId, id: roleId }).first()) as RoleRow | undefined;
  if (!row) throw new DomainErrorException(notFound('Role not found'));
  return customView(row);
}

/** Role names by id, for member listings: system roles and the organization's own. */
export async function roleNames(db: Knex, organizationId: string): Promise<Map<string, { slug: string; name: string }>> {
  const out = new Map<string, { slug: string; name: string }>(SYSTEM_ROLES.map((r) => [r.role_id, { slug: r.slug, name: r.name }]));
  for (const r of (await db('rm_team_roles').where('organization_id', organizationId).select('id', 'slug', 'name')) as {
    id: string;
    slug: string;
    name: string;
  }[]) {
    out.set(r.id, { slug: r.slug, name: r.name });
  }
  return out;
}
