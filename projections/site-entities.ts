import type { Knex } from 'knex';
import type { EntityInput } from '../src/analysis/answer';
import { sameEntities } from '../src/analysis/facts';

export { sameEntities };

/**
 * A website's tracked entities, as the answers read model analyzes against them (rm_analysis_entities): the brand
 * first, then the competitors not removed in the order they were added. This is the one rule for that list: the
 * position and citation columns of every fact chunk, the entity list of every site row (rm_fact_sites) and the
 * entities every metric and listing reports follow it, whatever order the events arrived in (a provisioned
 * website's competitors are appended before the website itself).
 */
export interface SiteEntity extends EntityInput {
  url: string | null;
  slot: number;
}

/** The order of the list in SQL over rm_analysis_entities (as `t`); siteEntities and siteEntityIdsSql use it. */
export const orderOf = (t: string) => `${t}.is_self desc, ${t}.slot, ${t}.entity_id`;

/** Each website's tracked entities, brand first, then competitors in their order (websites without any: []). */
export async function siteEntities(db: Knex, websiteIds: readonly string[]): Promise<Map<string, SiteEntity[]>> {
  const out = new Map<string, SiteEntity[]>(websiteIds.map((w) => [w, []]));
  if (!websiteIds.length) return out;
  const rows = await db('rm_analysis_entities as e')
    .whereIn('website_id', websiteIds)
    .andWhere('removed', false)
    .orderByRaw(`e.website_id, ${orderOf('e')}`)
    .select('website_id', 'entity_id', 'slot', 'is_self', 'name', 'identifiers', 'url');
  for (const r of rows)
    out.get(r.website_id)!.push({ id: r.entity_id, slot: r.slot, is_self: r.is_self, name: r.name, identifiers: r.identifiers, url: r.url });
  return out;
}

/** One website's tracked entities (siteEntities). */
export async function siteEntitiesOf(db: Knex, websiteId: string): Promise<SiteEntity[]> {
  return (await siteEntities(db, [websiteId])).get(websiteId)!;
}

/**
 * The same list's ids as a jsonb array, as a SQL expression over a website id column (`site`), for reads that
 * compare it with what was stored in the same statement (one snapshot).
 */
export const siteEntityIdsSql = (site: string) =>
  `(select coalesce(${entityIdsAgg('a')}, '[]'::jsonb) from rm_analysis_entities a where a.website_id = ${site} and not a.removed)`;

/** The list's ids as a jsonb aggregate over rows of rm_analysis_entities (as `t`), for a query grouped by website. */
export const entityIdsAgg = (t: string) => `jsonb_agg(${t}.entity_id order by ${orderOf(t)})`;

/** How a website's facts stand against its entity list (siteEntities): null when in line, else what differs. */
export async function outOfLine(db: Knex, websiteId: string): Promise<string | null> {
  const site: { entities: string[] } | undefined = await db('rm_fact_sites').where('website_id', websiteId).first('entities');
  const entities = await siteEntities(db, [websiteId]);
  const chunks = await db('rm_fact_chunks').where('website_id', websiteId).select(db.raw(`distinct meta->'entities' as entities`));
  const ids = entities.get(websiteId)!.map((e) => e.id);
  if (!site) return chunks.length ? 'facts without a site row' : ids.length ? `no site row for entities [${ids.join(', ')}]` : null;
  if (!sameEntities(site.entities, ids)) return `the site row lists [${site.entities.join(', ')}], the website has [${ids.join(', ')}]`;
  const other = (chunks as { entities: string[] }[]).find((c) => !sameEntities(c.entities, ids));
  if (other) return `facts laid out for [${other.entities.join(', ')}], the website has [${ids.join(', ')}]`;
  return null;
}
