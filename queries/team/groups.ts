import type { Knex } from 'knex';
import { z } from 'zod';
import { DomainErrorException, notFound } from '../../src/domain/errors';
import type { Principal } from '../../src/domain/principal';
import { iso } from '../timestamps';

/** A group as the public documentation shows it: camelCase, `externalId` for partner keys only. */
export const GroupView = z.object({
  id: z.string(),
  name: z.string(),
  orgId: z.string(),
  billingEnabled: z.boolean(),
  createdAt: z.string(),
  websites: z.array(z.object({ id: z.string(), websiteUrl: z.string(), websiteName: z.string() })),
  websiteIds: z.array(z.string()),
  externalId: z.string().nullable().optional(),
});
export type GroupView = z.infer<typeof GroupView>;
export const GroupsView = z.object({ groups: z.array(GroupView) });

interface GroupRow {
  id: string;
  organization_id: string;
  name: string;
  external_id: string | null;
  billing_enabled: boolean;
  created_at: Date | string;
}

async function views(db: Knex, p: Principal, rows: GroupRow[]): Promise<GroupView[]> {
  if (!rows.length) return [];
  const sites = (await db('rm_team_group_websites as gw')
    .join('rm_websites as w', 'w.id', 'gw.website_id')
    .whereIn(
      'gw.group_id',
      rows.map((r) => r.id),
    )
    .whereNot('w.status', 'deleted')
    .orderBy('gw.seq')
    .select('gw.group_id', 'w.id', 'w.url', 'w.name')) as { group_id: string; id: string; url: string; name: string }[];
  const byGroup = new Map<string, GroupView['websites']>();
  for (const s of sites) {
    const list = byGroup.get(s.group_id) ?? [];
    list.push({ id: s.id, websiteUrl: s.url, websiteName: s.name });
    byGroup.set(s.group_id, list);
  }
  return rows.map((r) => {
    const websites = byGroup.get(r.id) ?? [];
    const v: GroupView = {
      id: r.id,
      name: r.name,
      orgId: r.organization_id,
      billingEnabled: r.billing_enabled,
      createdAt: iso(r.created_at),
      websites,
      websiteIds: websites.map((w) => w.id),
    };
    if (p.partner) v.externalId = r.external_id;
    return v;
  });
}

/** The organization's groups, oldest first; `externalId` filters by the partner's own id. */
export async function listGroups(db: Knex, p: Principal, externalId?: string): Promise<GroupView[]> {
  const q = db('rm_team_groups')
    .where('organization_id', p.organizationId)
    .orderBy([{ column: 'created_at' }, { column: 'id' }]);
  if (externalId !== undefined) q.where('external_id', externalId);
  return views(db, p, (await q) as GroupRow[]);
}

/** The website ids of the organization's group (deleted websites too); undefined when it has no such group. */
export async function groupWebsiteIds(db: Knex, organizationId: string, groupId: string): Promise<string[] | undefined> {
  const group = await db('rm_team_groups').where({ id: groupId, organization_id: organizationId }).first('id');
  if (!group) return undefined;
  return (await db('rm_team_group_websites').where('group_id', groupId).pluck('website_id')) as string[];
}

export async function getGroup(db: Knex, p: Principal, groupId: string): Promise<GroupView> {
  const row = (await db('rm_team_groups').where({ id: groupId, organization_id: p.organizationId }).first()) as GroupRow | undefined;
  if (!row) throw new DomainErrorException(notFound('Group not found'));
  return (await views(db, p, [row]))[0];
}
