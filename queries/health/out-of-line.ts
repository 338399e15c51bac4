import type { Knex } from 'knex';
import { entityIdsAgg, outOfLine, siteEntityIdsSql } from '../../projections/site-entities';
import type { FactsCache } from '../metrics/facts/cache';

/** A website whose stored metric facts are not laid out for its entity list (brand first, then competitors). */
export interface SiteOutOfLine {
  website_id: string;
  detail: string;
}

/** Every site row is compared with its website's list at most this often; in between, only rows written since. */
const FULL_SCAN_MS = 5 * 60_000;
const LIMIT = 100;

interface Watch {
  /** highest site-row version compared so far */
  version: string;
  fullAt: number;
  table: string;
  found: Map<string, string>;
  /** one check at a time */
  going: Promise<unknown>;
}

const watches = new WeakMap<Knex, Watch>();

type SiteRow = { website_id: string; entities: string[] | null; ids: string[]; version: string | null };
const detailOf = (x: SiteRow) =>
  x.entities === null
    ? `no site row for entities [${x.ids.join(', ')}]`
    : `the site row lists [${x.entities.join(', ')}], the website has [${x.ids.join(', ')}]`;
const differ = (x: SiteRow) => x.entities === null || x.entities.length !== x.ids.length || x.entities.some((e, i) => e !== x.ids[i]);

/**
 * Websites out of line (at most 100), for /readyz: those whose site row (rm_fact_sites) lists other entities than the
 * website has (or none while it has some), and those this process found with a fact chunk of another layout and
 * could not derive again yet. Their metric reads are derived again first or refused with 503, never served shifted.
 *
 * Comparing every site row costs a pass over both tables (about half a second for 20,000 websites on a loaded
 * machine), too much for a probe: the whole comparison runs on the first call, after a rebuild's swap and every five
 * minutes; in between, only the rows written since (a version above the highest compared), and again those found.
 */
export async function sitesOutOfLine(db: Knex, cache: FactsCache): Promise<SiteOutOfLine[]> {
  let w = watches.get(db);
  if (!w) watches.set(db, (w = { version: '0', fullAt: 0, table: '', found: new Map(), going: Promise.resolve() }));
  const watch = w;
  const run = watch.going.then(() => check(db, watch));
  watch.going = run.catch(() => undefined);
  await run;
  const out: SiteOutOfLine[] = [...watch.found].slice(0, LIMIT).map(([website_id, detail]) => ({ website_id, detail }));
  for (const u of cache.outOfLine()) {
    if (watch.found.has(u.website_id) || out.length >= LIMIT) continue;
    const detail = await outOfLine(db, u.website_id);
    if (detail === null) cache.inLine(u.website_id);
    else out.push({ website_id: u.website_id, detail });
  }
  return out;
}

async function check(db: Knex, w: Watch): Promise<void> {
  const head = (await db.raw(`select coalesce(max(version), 0)::text as version, 'rm_fact_sites'::regclass::oid::text as "table" from rm_fact_sites`))
    .rows[0] as {
    version: string;
    table: string;
  };
  if (Date.now() - w.fullAt >= FULL_SCAN_MS || head.table !== w.table) {
    const r = await db.raw(
      `select coalesce(s.website_id, d.website_id) as website_id, s.entities, coalesce(d.ids, '[]'::jsonb) as ids, s.version::text as version
         from rm_fact_sites s
         full join (select e.website_id, ${entityIdsAgg('e')} as ids
                      from rm_analysis_entities e where not e.removed group by e.website_id) d on d.website_id = s.website_id
        where s.entities is distinct from coalesce(d.ids, '[]'::jsonb)
        order by 1
        limit ?`,
      [LIMIT * 10],
    );
    w.found = new Map((r.rows as SiteRow[]).map((x) => [x.website_id, detailOf(x)]));
    w.fullAt = Date.now();
    w.table = head.table;
    w.version = head.version;
    return;
  }
  const r = await db.raw(
    `select s.website_id, s.entities, ${siteEntityIdsSql('s.website_id')} as ids, s.version::text as version
       from rm_fact_sites s
      where s.version > ?::bigint or s.website_id = any(?::uuid[])`,
    [w.version, [...w.found.keys()]],
  );
  const seen = new Set<string>();
  for (const x of r.rows as SiteRow[]) {
    seen.add(x.website_id);
    if (differ(x)) w.found.set(x.website_id, detailOf(x));
    else w.found.delete(x.website_id);
  }
  // a website found without a site row keeps it until it has one (or the next full comparison)
  for (const id of w.found.keys()) if (!seen.has(id) && !w.found.get(id)!.startsWith('no site row')) w.found.delete(id);
  if (BigInt(head.version) > BigInt(w.version)) w.version = head.version;
}
