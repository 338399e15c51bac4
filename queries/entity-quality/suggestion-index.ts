import type { Knex } from 'knex';
import { heldIndexes, lowerBound } from '../held-indexes';
import { Dictionary } from '../metrics/facts/layout';

/**
 * A website's rm_suggestion_days held in memory, one block of typed arrays per day, so a range is summed in node
 * instead of grouping name rows in Postgres. An index is used while the website's rm_suggestion_sites.version is the
 * one it was loaded at; when it moved, only the days whose rm_suggestion_day_versions.version moved are read again
 * (the projection sets both to its transaction's id beside every day row it writes), the others are kept.
 */
export interface SuggestionIndex {
  version: string;
  /** interned texts, shared by the indexes loaded one from another (ids only ever added) */
  keys: Interned;
  names: Interned;
  domains: Interned;
  /** day numbers (days since 1970-01-01) ascending, their blocks and the version each was read at */
  days: Int32Array;
  blocks: DayBlock[];
  dayVersions: Map<number, string>;
  bytes: number;
}

/** One day's rows: one per name key. */
export interface DayBlock {
  key: Int32Array;
  name: Int32Array;
  answers: Int32Array;
  /** ms since the epoch */
  first: Float64Array;
  last: Float64Array;
  /** examples of row i: a uuid's text each (36 bytes), from byte exStart[i] to exStart[i + 1] */
  exStart: Int32Array;
  examples: Buffer;
  /** domain ids of row i: domStart[i] to domStart[i + 1] */
  domStart: Int32Array;
  domainIds: Int32Array;
  bytes: number;
}

/** Texts interned as ids in the order first seen (the metrics facts' Dictionary), with the bytes they hold. */
export class Interned extends Dictionary<string> {
  bytes = 0;
  override of(v: string): number {
    const n = this.size;
    const i = super.of(v);
    if (this.size > n) this.bytes += 64 + 2 * v.length;
    return i;
  }
}

// per process; least recently read websites go past it (1.2 M answers over a year: about 40 MB)
const held = heldIndexes<SuggestionIndex>(256 * 1024 * 1024);

/** A day row as the load reads it. */
export interface DayRow {
  d: number;
  key: string;
  name: string;
  answers: number;
  f: number;
  l: number;
  /** the examples' texts one after the other, 36 characters each */
  ex: string;
  /** the domains joined by commas */
  dom: string;
}

export function blocksOf(rows: DayRow[], x: Pick<SuggestionIndex, 'keys' | 'names' | 'domains'>): Map<number, DayBlock> {
  const out = new Map<number, DayBlock>();
  for (let s = 0; s < rows.length; ) {
    let e = s;
    let exBytes = 0;
    while (e < rows.length && rows[e].d === rows[s].d) exBytes += rows[e++].ex.length;
    const n = e - s;
    const b: DayBlock = {
      key: new Int32Array(n),
      name: new Int32Array(n),
      answers: new Int32Array(n),
      first: new Float64Array(n),
      last: new Float64Array(n),
      exStart: new Int32Array(n + 1),
      examples: Buffer.alloc(exBytes),
      domStart: new Int32Array(n + 1),
      domainIds: new Int32Array(0),
      bytes: 0,
    };
    const doms: number[] = [];
    let exAt = 0;
    for (let i = 0; i < n; i++) {
      const r = rows[s + i];
      b.key[i] = x.keys.of(r.key);
      b.name[i] = x.names.of(r.name);
      b.answers[i] = r.answers;
      b.first[i] = r.f;
      b.last[i] = r.l;
      b.exStart[i] = exAt;
      if (r.ex) exAt += b.examples.write(r.ex, exAt, 'latin1');
      b.domStart[i] = doms.length;
      if (r.dom) for (const h of r.dom.split(',')) doms.push(x.domains.of(h));
    }
    b.exStart[n] = exAt;
    b.domStart[n] = doms.length;
    b.domainIds = Int32Array.from(doms);
    b.bytes = n * 32 + 8 + exBytes + 4 * doms.length + 200;
    out.set(rows[s].d, b);
    s = e;
  }
  return out;
}

async function load(db: Knex, websiteId: string, version: string, previous: SuggestionIndex | undefined): Promise<SuggestionIndex> {
  const versions = (
    await db.raw("select (day - date '1970-01-01') as d, version::text as v from rm_suggestion_day_versions where website_id = ?", [websiteId])
  ).rows as { d: number; v: string }[];
  const dayVersions = new Map(versions.map((r) => [r.d, r.v]));
  // the days read again: all of them the first time, then those whose version moved
  const stale = previous ? versions.filter((r) => previous.dayVersions.get(r.d) !== r.v).map((r) => r.d) : null;
  const reread = new Set(stale);
  const base = previous ?? { keys: new Interned(), names: new Interned(), domains: new Interned() };
  let rows: DayRow[] = [];
  if (stale === null || stale.length > 0) {
    rows = (
      await db.raw(
        `select (day - date '1970-01-01') as d, key, name, answers,
                (extract(epoch from first_seen) * 1000)::float8 as f, (extract(epoch from last_seen) * 1000)::float8 as l,
                array_to_string(examples, '') as ex, array_to_string(domains, ',') as dom
           from rm_suggestion_days
          where website_id = ? ${stale === null ? '' : 'and day = any(cast(? as date[]))'}
          order by day`,
        stale === null ? [websiteId] : [websiteId, stale.map((d) => new Date(d * 86_400_000).toISOString().slice(0, 10))],
      )
    ).rows as DayRow[];
  }
  const fresh = blocksOf(rows, base);
  const days = [...dayVersions.keys()].sort((a, b) => a - b);
  const blocks: DayBlock[] = [];
  const kept: number[] = [];
  for (const d of days) {
    const b = fresh.get(d) ?? (previous && !reread.has(d) ? blockAt(previous, d) : undefined);
    // a day version without rows (written between the two reads): read again next time
    if (!b) {
      dayVersions.delete(d);
      continue;
    }
    kept.push(d);
    blocks.push(b);
  }
  const bytes = blocks.reduce((s, b) => s + b.bytes, 0) + base.keys.bytes + base.names.bytes + base.domains.bytes;
  return { version, keys: base.keys, names: base.names, domains: base.domains, days: Int32Array.from(kept), blocks, dayVersions, bytes };
}

function blockAt(x: SuggestionIndex, d: number): DayBlock | undefined {
  const i = lowerBound(x.days, d);
  return x.days[i] === d ? x.blocks[i] : undefined;
}

/** The website's suggestion rows at their current version and the keys left out (tracked or dismissed); null: no rows. */
export async function suggestionIndexOf(db: Knex, websiteId: string): Promise<{ index: SuggestionIndex; excluded: Set<string> } | null> {
  const r = await db.raw(
    `select (select version::text from rm_suggestion_sites where website_id = :site) as version,
            array(select unnest(e.keys) from rm_suggestion_entities e where e.website_id = :site
                  union all select x.key from rm_suggestion_dismissed x where x.website_id = :site) as excluded`,
    { site: websiteId },
  );
  const { version, excluded } = r.rows[0] as { version: string | null; excluded: string[] };
  if (version === null) return null;
  const index = await held(websiteId, version, (previous) => load(db, websiteId, version, previous));
  return { index, excluded: new Set(excluded) };
}
