import type { Knex } from 'knex';
import { DomainErrorException, notFound } from '../../src/domain/errors';
import type { Principal } from '../../src/domain/principal';
import { organizationIds, type WebsiteRow } from '../access';
import type { WebsiteView } from './views';

export { WebsiteView } from './views';

/** external_id appears only in answers to partner keys. */
export function websiteView(
  w: Pick<WebsiteRow, 'id' | 'name' | 'url' | 'normalized_url' | 'status' | 'external_id' | 'created_at'>,
  p: Principal,
): WebsiteView {
  const v: WebsiteView = {
    id: w.id,
    name: w.name,
    url: w.url,
    normalized_url: w.normalized_url,
    status: w.status,
    created_at: new Date(w.created_at).toISOString(),
  };
  if (p.partner) v.external_id = w.external_id;
  return v;
}

/** The websites the key can reach (its organization's, within its scope), deleted ones left out. */
export async function listWebsites(db: Knex, p: Principal): Promise<WebsiteView[]> {
  const q = db('rm_websites')
    .where('organization_id', p.organizationId)
    .whereNot('status', 'deleted')
    .orderBy([{ column: 'created_at' }, { column: 'id' }]);
  if (p.websiteIds !== null) q.whereIn('id', p.websiteIds);
  return ((await q) as WebsiteRow[]).map((w) => websiteView(w, p));
}

/** One website of the organization as the key sees it (after a write that just created or changed it). */
export async function findWebsiteView(db: Knex, p: Principal, websiteId: string): Promise<WebsiteView | undefined> {
  const w = (await db('rm_websites').where({ id: websiteId, organization_id: p.organizationId }).first()) as WebsiteRow | undefined;
  return w && websiteView(w, p);
}

export async function websiteByExternalId(db: Knex, p: Principal, externalId: string): Promise<WebsiteView> {
  const q = db('rm_websites').where({ organization_id: p.organizationId, external_id: externalId });
  if (p.websiteIds !== null) q.whereIn('id', p.websiteIds);
  const w = (await q.first()) as WebsiteRow | undefined;
  if (!w) throw new DomainErrorException(notFound('Website not found'));
  return websiteView(w, p);
}

/** Websites a user of the organization can reach (owners and admins: all), within the calling key's scope. */
export async function websitesOfUser(db: Knex, p: Principal, userId: string): Promise<WebsiteView[]> {
  const user = await db('rm_users').where({ id: userId, organization_id: p.organizationId }).first();
  if (!user) throw new DomainErrorException(notFound('User not found'));
  return listWebsites(db, p);
}

/** The ids among `ids` of websites that are another organization's. */
export async function foreignWebsiteIds(db: Knex, organizationId: string, ids: readonly string[]): Promise<Set<string>> {
  if (!ids.length) return new Set();
  const rows = (await db('rm_websites')
    .whereIn('id', [...ids])
    .whereNot('organization_id', organizationId)
    .select('id')) as { id: string }[];
  return new Set(rows.map((r) => r.id));
}

/** The ids among `ids` of the organization's websites that are not deleted. */
export const liveWebsiteIdsOf = (db: Knex, organizationId: string, ids: readonly string[]): Promise<Set<string>> =>
  organizationIds(db, 'rm_websites', organizationId, ids, (q) => q.whereNot('status', 'deleted'));

/** A website by id alone, whoever's it is (workers, which act for the system); undefined for an unknown id. */
export async function websiteById(db: Knex, websiteId: string): Promise<WebsiteRow | undefined> {
  return db('rm_websites').where('id', websiteId).first();
}
