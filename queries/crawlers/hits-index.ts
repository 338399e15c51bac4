import type { Knex } from 'knex';
import { heldIndexes, lowerBound } from '../held-indexes';

export { dayNumber, dayOfNumber } from '../held-indexes';

/**
 * A website's rm_crawler_hits held in memory as columns sorted by day, so the activity and pages reads sum a period in
 * typed arrays instead of grouping page rows in Postgres. An index is used while the website's rm_crawler_sites.version
 * (moved in the same transaction as every rm_crawler_hits write) is the one it was loaded at.
 */
export interface HitsIndex {
  version: string;
  /** distinct bots, urls and statuses in the database's order (C.UTF-8: code points): an id is its rank */
  bots: string[];
  urls: string[];
  statuses: number[];
  verifications: string[];
  /** day numbers (days since 1970-01-01) ascending; dayStart[i] is the first row of days[i] */
  days: Int32Array;
  dayStart: Int32Array;
  rowBot: Uint16Array;
  rowUrl: Int32Array;
  rowStatus: Uint16Array;
  rowVerification: Uint8Array;
  rowHits: Float64Array;
  /** last_seen in ms since the epoch */
  rowLast: Float64Array;
  bytes: number;
}

// per process; least recently read websites go past it
const held = heldIndexes<HitsIndex>(256 * 1024 * 1024);

/** Code point order, as `collate "C"` and C.UTF-8 sort text (UTF-16 code units put surrogates before U+E000..U+FFFF). */
export function codePointCompare(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return unitRank(x) - unitRank(y);
  }
  return a.length - b.length;
}
const unitRank = (u: number) => (u >= 0xe000 ? u - 0x800 : u >= 0xd800 ? u + 0x2000 : u);

/** Interns values in first-seen ids, then renumbers them by rank in `order`. */
function interner<T>(order: (a: T, b: T) => number) {
  const ids = new Map<T, number>();
  const values: T[] = [];
  return {
    id(v: T): number {
      let i = ids.get(v);
      if (i === undefined) {
        i = values.length;
        values.push(v);
        ids.set(v, i);
      }
      return i;
    },
    /** the values sorted and, per first-seen id, its rank */
    ranked(): { values: T[]; rank: Int32Array } {
      const byRank = values.map((_, i) => i).sort((a, b) => order(values[a], values[b]));
      const rank = new Int32Array(values.length);
      byRank.forEach((id, r) => {
        rank[id] = r;
      });
      return { values: byRank.map((i) => values[i]), rank };
    },
  };
}

async function load(db: Knex, websiteId: string, version: string): Promise<HitsIndex> {
  const res = await db.raw(
    `select (day - date '1970-01-01') as d, bot, url, status, verification, hits::float8 as hits, last_seen
       from rm_crawler_hits where website_id = ? order by day`,
    [websiteId],
  );
  const rows = res.rows as { d: number; bot: string; url: string; status: number; verification: string; hits: number; last_seen: Date }[];
  const n = rows.length;
  const bots = interner<string>(codePointCompare);
  const urls = interner<string>(codePointCompare);
  const statuses = interner<number>((a, b) => a - b);
  const verifications = interner<string>(codePointCompare);
  const rowBot = new Uint16Array(n);
  const rowUrl = new Int32Array(n);
  const rowStatus = new Uint16Array(n);
  const rowVerification = new Uint8Array(n);
  const rowHits = new Float64Array(n);
  const rowLast = new Float64Array(n);
  const distinctDays: number[] = [];
  const starts: number[] = [];
  for (let i = 0; i < n; i++) {
    const r = rows[i];
    if (distinctDays.length === 0 || distinctDays[distinctDays.length - 1] !== r.d) {
      distinctDays.push(r.d);
      starts.push(i);
    }
    rowBot[i] = bots.id(r.bot);
    rowUrl[i] = urls.id(r.url);
    rowStatus[i] = statuses.id(r.status);
    rowVerification[i] = verifications.id(r.verification);
    rowHits[i] = r.hits;
    rowLast[i] = r.last_seen.getTime();
  }
  starts.push(n);
  const b = bots.ranked();
  const u = urls.ranked();
  const s = statuses.ranked();
  const v = verifications.ranked();
  for (let i = 0; i < n; i++) {
    rowBot[i] = b.rank[rowBot[i]];
    rowUrl[i] = u.rank[rowUrl[i]];
    rowStatus[i] = s.rank[rowStatus[i]];
    rowVerification[i] = v.rank[rowVerification[i]];
  }
  const bytes = n * 25 + u.values.reduce((sum, k) => sum + 40 + 2 * k.length, 0);
  return {
    version,
    bots: b.values,
    urls: u.values,
    statuses: s.values,
    verifications: v.values,
    days: Int32Array.from(distinctDays),
    dayStart: Int32Array.from(starts),
    rowBot,
    rowUrl,
    rowStatus,
    rowVerification,
    rowHits,
    rowLast,
    bytes,
  };
}

/** The website's hits at their current version, loaded when missing or stale. */
export async function hitsIndexOf(db: Knex, websiteId: string): Promise<HitsIndex> {
  const site = await db('rm_crawler_sites').where('website_id', websiteId).first(db.raw('version::text as version'));
  // no hits ever projected: nothing to hold
  if (!site) return load(db, websiteId, '');
  return held(websiteId, site.version, () => load(db, websiteId, site.version));
}

/** The held days within [fromDay, toDay] (day numbers): indexes [first, end) into days and dayStart. */
export function daysOfPeriod(x: HitsIndex, fromDay: number, toDay: number): [number, number] {
  return [lowerBound(x.days, fromDay), lowerBound(x.days, toDay + 1)];
}

/** Marks per key (a group and a page): an array while the keys are few enough (16 MB), else a map. */
export function pageMarks(keys: number): { dense: Int32Array; sparse: null } | { dense: null; sparse: Map<number, number> } {
  return keys <= 4 * 1024 * 1024 ? { dense: new Int32Array(keys), sparse: null } : { dense: null, sparse: new Map() };
}
