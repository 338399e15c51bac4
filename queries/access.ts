import type { Knex } from 'knex';
import { DomainErrorException, forbidden, notFound } from '../src/domain/errors';
import { inScope, type Principal, WEBSITE_FORBIDDEN } from '../src/domain/principal';

export { GLOBAL_KEY_REQUIRED, inScope, PARTNER_KEY_REQUIRED, requireGlobal, requirePartner, WEBSITE_FORBIDDEN } from '../src/domain/principal';

export interface WebsiteRow {
  id: string;
  organization_id: string;
  name: string;
  url: string;
  normalized_url: string;
  status: 'active' | 'paused' | 'deleted';
  external_id: string | null;
  created_at: Date;
}

/**
 * The organization's row of `table` that matches `key` (its id, say), as `view` shows it; another organization's is
 * undefined, as an unknown one.
 */
export async function organizationRow<T>(
  db: Knex,
  table: string,
  organizationId: string,
  key: Record<string, string>,
  view: (r: any) => T,
): Promise<T | undefined> {
  const r = await db(table)
    .where({ ...key, organization_id: organizationId })
    .first();
  return r ? view(r) : undefined;
}

/** The ids among `ids` of the organization's rows of `table` (`where` narrows them further, e.g. to live ones). */
export async function organizationIds(
  db: Knex,
  table: string,
  organizationId: string,
  ids: readonly string[],
  where: (q: Knex.QueryBuilder) => unknown = () => undefined,
): Promise<Set<string>> {
  const q = db(table)
    .where('organization_id', organizationId)
    .whereIn('id', [...ids]);
  where(q);
  return new Set((await q.pluck('id')) as string[]);
}

/**
 * The website a request addresses, if the key may use it: 404 when no website has that id, 403 when it is another
 * organization's, outside the key's scope, or not active (paused websites are treated as deleted). `allow` admits
 * paused or deleted ones for the operations that work on them.
 */
export async function requireWebsite(
  db: Knex,
  p: Principal,
  websiteId: string,
  allow: { paused?: boolean; deleted?: boolean } = {},
): Promise<WebsiteRow> {
  const w = (await db('rm_websites').where('id', websiteId).first()) as WebsiteRow | undefined;
  if (!w) throw new DomainErrorException(notFound('Website not found'));
  if (w.organization_id !== p.organizationId || !inScope(p, websiteId)) throw new DomainErrorException(forbidden(WEBSITE_FORBIDDEN));
  if (w.status === 'paused' && !allow.paused) throw new DomainErrorException(forbidden(WEBSITE_FORBIDDEN));
  if (w.status === 'deleted' && !allow.deleted) throw new DomainErrorException(forbidden(WEBSITE_FORBIDDEN));
  return w;
}
