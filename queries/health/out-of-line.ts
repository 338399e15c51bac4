import type { Knex } from 'knex';
import { outOfLine, siteEntityIdsSql } from '../../projections/site-entities';
import type { FactsCache } from '../metrics/facts-cache';

/** A website whose stored metric facts are not laid out for its entity list (brand first, then competitors). */
export interface SiteOutOfLine {
  website_id: string;
  detail: string;
}

/**
 * Websites out of line, at most `limit`: those whose site row (rm_fact_sites) lists other entities than the website
 * has, or none while it has some, read in one statement; and those this process found with a fact chunk of another
 * layout and could not re-derive yet (checked again here: a re-derivation or rebuild since clears them). Their
 * metric reads are re-derived first or refused with 503, never served shifted.
 */
export async function sitesOutOfLine(db: Knex, cache: FactsCache, limit = 100): Promise<SiteOutOfLine[]> {
  const r = await db.raw(
    `select website_id, entities, ids from (
       select s.website_id, s.entities, ${siteEntityIdsSql('s.website_id')} as ids from rm_fact_sites s
       union all
       select a.website_id, null, ${siteEntityIdsSql('a.website_id')} from rm_analysis_entities a
        where a.is_self and not exists (select 1 from rm_fact_sites s where s.website_id = a.website_id)
     ) x
     where entities is distinct from ids
     order by website_id
     limit ?`,
    [limit],
  );
  const out: SiteOutOfLine[] = (r.rows as { website_id: string; entities: string[] | null; ids: string[] }[]).map((x) => ({
    website_id: x.website_id,
    detail: x.entities === null ? `no site row for entities [${x.ids.join(', ')}]` : `the site row lists [${x.entities.join(', ')}], the website has [${x.ids.join(', ')}]`,
  }));
  const listed = new Set(out.map((x) => x.website_id));
  for (const u of cache.outOfLine()) {
    if (listed.has(u.website_id) || out.length >= limit) continue;
    const detail = await outOfLine(db, u.website_id);
    if (detail === null) cache.inLine(u.website_id);
    else out.push({ website_id: u.website_id, detail });
  }
  return out;
}
