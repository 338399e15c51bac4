import type { Knex } from 'knex';
import { heldIndexes, lowerBound } from '../held-indexes';

export { dayNumber } from '../held-indexes';

/**
 * A website's rm_source_days of one kind held in memory as columns sorted by day, so the sources read sums a range of
 * days in typed arrays instead of grouping rows in Postgres. An index is used while the website's rm_fact_sites.version
 * (moved in the same transaction as every rm_source_days write) is the one it was loaded at.
 */
interface SourceIndex {
  version: string;
  /** distinct keys in `collate "C"` order: a key's index is its rank */
  keys: string[];
  models: string[];
  /** day numbers (days since 1970-01-01) ascending; dayStart[i] is the first row of days[i] */
  days: Int32Array;
  dayStart: Int32Array;
  rowKey: Int32Array;
  rowModel: Uint16Array;
  rowRetrieved: Int32Array;
  rowCited: Int32Array;
  bytes: number;
}

// per process; least recently read websites go past it
const held = heldIndexes<SourceIndex>(256 * 1024 * 1024);

async function load(db: Knex, websiteId: string, kind: number, version: string): Promise<SourceIndex> {
  const res = await db.raw(
    `select (day - date '1970-01-01') as d, model, key, retrieved, cited from rm_source_days
      where website_id = ? and kind = ? order by key collate "C"`,
    [websiteId, kind],
  );
  const rows = res.rows as { d: number; model: string; key: string; retrieved: number; cited: number }[];
  const keys: string[] = [];
  const models: string[] = [];
  const modelIdx = new Map<string, number>();
  const n = rows.length;
  const key = new Int32Array(n);
  const model = new Uint16Array(n);
  const dayOf = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    const r = rows[i];
    if (keys.length === 0 || keys[keys.length - 1] !== r.key) keys.push(r.key);
    key[i] = keys.length - 1;
    let m = modelIdx.get(r.model);
    if (m === undefined) {
      m = models.length;
      models.push(r.model);
      modelIdx.set(r.model, m);
    }
    model[i] = m;
    dayOf[i] = r.d;
  }
  // rows by day (stable: within a day, key order)
  const order = Array.from({ length: n }, (_, i) => i).sort((a, b) => dayOf[a] - dayOf[b] || a - b);
  const distinctDays: number[] = [];
  const starts: number[] = [];
  const rowKey = new Int32Array(n);
  const rowModel = new Uint16Array(n);
  const rowRetrieved = new Int32Array(n);
  const rowCited = new Int32Array(n);
  for (let j = 0; j < n; j++) {
    const i = order[j];
    if (distinctDays.length === 0 || distinctDays[distinctDays.length - 1] !== dayOf[i]) {
      distinctDays.push(dayOf[i]);
      starts.push(j);
    }
    rowKey[j] = key[i];
    rowModel[j] = model[i];
    rowRetrieved[j] = rows[i].retrieved;
    rowCited[j] = rows[i].cited;
  }
  starts.push(n);
  const bytes = n * 14 + keys.reduce((s, k) => s + 40 + 2 * k.length, 0);
  return {
    version,
    keys,
    models,
    days: Int32Array.from(distinctDays),
    dayStart: Int32Array.from(starts),
    rowKey,
    rowModel,
    rowRetrieved,
    rowCited,
    bytes,
  };
}

/** The website's index of a kind at its current version, loaded when missing or stale. */
async function indexOf(db: Knex, websiteId: string, kind: number): Promise<SourceIndex> {
  const site = await db('rm_fact_sites').where('website_id', websiteId).first(db.raw('version::text as version'));
  // no site row yet: nothing to keep a version for, read as it is
  if (!site) return load(db, websiteId, kind, '');
  return held(`${websiteId}:${kind}`, site.version, () => load(db, websiteId, kind, site.version));
}

export interface SourceCount {
  key: string;
  retrieved: number;
  cited: number;
}

/**
 * The rows at [offset, offset + count) of the keys summed over days [fromDay, toDay] (day numbers; null = open) and
 * the models (null = all), sorted by cited desc, retrieved desc, then the key in `collate "C"` order.
 */
export async function sourceCounts(
  db: Knex,
  websiteId: string,
  kind: number,
  r: { fromDay: number | null; toDay: number | null; models: string[] | null },
  offset: number,
  count: number,
): Promise<SourceCount[]> {
  const x = await indexOf(db, websiteId, kind);
  if (x.keys.length === 0) return [];
  const firstDay = lowerBound(x.days, r.fromDay ?? Number.MIN_SAFE_INTEGER);
  const endDay = lowerBound(x.days, r.toDay === null ? Number.MAX_SAFE_INTEGER : r.toDay + 1);
  const from = x.dayStart[firstDay];
  const to = x.dayStart[endDay];
  let allowed: Uint8Array | null = null;
  if (r.models) {
    allowed = new Uint8Array(x.models.length);
    const wanted = new Set(r.models);
    x.models.forEach((m, i) => {
      if (wanted.has(m)) allowed![i] = 1;
    });
  }
  const retrieved = new Int32Array(x.keys.length);
  const cited = new Int32Array(x.keys.length);
  // the columns in locals, and the keys met in a typed array (a key is met once: every row retrieved at least once, so
  // its sum is 0 only before its first row): the loop below is most of a warm read's CPU
  const { rowKey, rowModel, rowRetrieved, rowCited } = x;
  const touchedKeys = new Int32Array(Math.min(x.keys.length, to - from));
  let touchedCount = 0;
  for (let i = from; i < to; i++) {
    if (allowed !== null && allowed[rowModel[i]] === 0) continue;
    const k = rowKey[i];
    if (retrieved[k] === 0) touchedKeys[touchedCount++] = k;
    retrieved[k] += rowRetrieved[i];
    cited[k] += rowCited[i];
  }
  const before = (a: number, b: number) =>
    cited[a] > cited[b] || (cited[a] === cited[b] && (retrieved[a] > retrieved[b] || (retrieved[a] === retrieved[b] && a < b)));
  const want = offset + count;
  let top: number[];
  if (want >= touchedCount / 4) top = Array.from(touchedKeys.subarray(0, touchedCount)).sort((a, b) => (before(a, b) ? -1 : 1));
  else {
    // the best `want` kept sorted; a key enters only when it beats the worst kept (most keys fail on cited alone)
    top = [];
    let worstCited = -1;
    for (let t = 0; t < touchedCount; t++) {
      const k = touchedKeys[t];
      if (top.length === want && (cited[k] < worstCited || !before(k, top[want - 1]))) continue;
      let lo = 0;
      let hi = top.length;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (before(top[mid], k)) lo = mid + 1;
        else hi = mid;
      }
      top.splice(lo, 0, k);
      if (top.length > want) top.pop();
      if (top.length === want) worstCited = cited[top[want - 1]];
    }
  }
  return top.slice(offset, want).map((k) => ({ key: x.keys[k], retrieved: retrieved[k], cited: cited[k] }));
}
