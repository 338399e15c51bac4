import type { Readable } from 'node:stream';
import type { Knex } from 'knex';
import { to as copyTo } from 'pg-copy-streams';
import { heldIndexes, lowerBound } from '../held-indexes';

export { dayNumber } from '../held-indexes';

/**
 * A website's rm_source_days of one kind held in memory as columns sorted by day, so the sources read sums a range of
 * days in typed arrays instead of grouping rows in Postgres. An index is used while the website's rm_fact_sites.version
 * (moved in the same transaction as every rm_source_days write) is the one it was loaded at. The keys (1.7 M URLs on
 * the 1.2 M-answer website) are held as their UTF-8 bytes in one buffer, never as a JS string each.
 */
export interface SourceIndex {
  version: string;
  /** distinct keys in `collate "C"` (byte) order, a key's index its rank: key k is keyBytes[keyStart[k], keyStart[k + 1]) */
  keyCount: number;
  keyBytes: Buffer;
  keyStart: Int32Array;
  models: string[];
  /** day numbers (days since 1970-01-01) ascending; dayStart[i] is the first row of days[i] */
  days: Int32Array;
  dayStart: Int32Array;
  rowKey: Int32Array;
  rowModel: Uint16Array;
  rowRetrieved: Int32Array;
  rowCited: Int32Array;
  /** a read's sums per key and the keys it met, zeroed again before the read returns (a read never awaits in between) */
  sumRetrieved: Int32Array;
  sumCited: Int32Array;
  touched: Int32Array;
  bytes: number;
}

// per process; least recently read websites go past it (the 1.2 M-answer website's URLs: see docs/benchmarks.md)
const held = heldIndexes<SourceIndex>(256 * 1024 * 1024);

/** The rows of one snapshot placed by day as they come (in key order), the keys' bytes appended as they change. */
export class IndexBuilder {
  readonly rowKey: Int32Array;
  readonly rowModel: Uint16Array;
  readonly rowRetrieved: Int32Array;
  readonly rowCited: Int32Array;
  /** the next free row of each day, and the day's index by day number - firstDay */
  private readonly next: Int32Array;
  private readonly slot: Int32Array;
  private readonly firstDay: number;
  keyBytes = Buffer.allocUnsafe(1 << 16);
  keyStart = new Int32Array(1 << 12);
  keyCount = 0;

  constructor(
    readonly days: Int32Array,
    readonly dayStart: Int32Array,
  ) {
    const n = dayStart[days.length];
    this.rowKey = new Int32Array(n);
    this.rowModel = new Uint16Array(n);
    this.rowRetrieved = new Int32Array(n);
    this.rowCited = new Int32Array(n);
    this.next = dayStart.slice(0, days.length);
    this.firstDay = days.length ? days[0] : 0;
    this.slot = new Int32Array(days.length ? days[days.length - 1] - this.firstDay + 1 : 0).fill(-1);
    days.forEach((d, i) => {
      this.slot[d - this.firstDay] = i;
    });
  }

  /** A row whose key is src[ks, ke); rows come in key order. */
  add(day: number, model: number, src: Buffer, ks: number, ke: number, retrieved: number, cited: number) {
    const len = ke - ks;
    let k = this.keyCount - 1;
    if (k < 0 || !this.isLastKey(src, ks, len)) k = this.appendKey(src, ks, ke);
    const s = day - this.firstDay;
    const d = s >= 0 && s < this.slot.length ? this.slot[s] : -1;
    if (d < 0 || this.next[d] === this.dayStart[d + 1]) throw new Error('source index: a row outside the counts read in the same snapshot');
    const j = this.next[d]++;
    this.rowKey[j] = k;
    this.rowModel[j] = model;
    this.rowRetrieved[j] = retrieved;
    this.rowCited[j] = cited;
  }

  private isLastKey(src: Buffer, ks: number, len: number): boolean {
    const a = this.keyStart[this.keyCount - 1];
    if (this.keyStart[this.keyCount] - a !== len) return false;
    // from the end: neighbours in byte order share their beginnings
    const b = this.keyBytes;
    for (let i = len - 1; i >= 0; i--) if (b[a + i] !== src[ks + i]) return false;
    return true;
  }

  private appendKey(src: Buffer, ks: number, ke: number): number {
    const at = this.keyStart[this.keyCount];
    if (at + (ke - ks) > this.keyBytes.length) {
      const bigger = Buffer.allocUnsafe(Math.max(2 * this.keyBytes.length, at + (ke - ks)));
      this.keyBytes.copy(bigger, 0, 0, at);
      this.keyBytes = bigger;
    }
    if (this.keyCount + 2 > this.keyStart.length) {
      const bigger = new Int32Array(2 * this.keyStart.length);
      bigger.set(this.keyStart);
      this.keyStart = bigger;
    }
    src.copy(this.keyBytes, at, ks, ke);
    this.keyStart[++this.keyCount] = at + (ke - ks);
    return this.keyCount - 1;
  }

  finish(version: string, models: string[]): SourceIndex {
    this.next.forEach((at, d) => {
      if (at !== this.dayStart[d + 1]) throw new Error('source index: fewer rows than the counts read in the same snapshot');
    });
    const keyCount = this.keyCount;
    const used = this.keyStart[keyCount];
    // exactly sized copies: the grown buffers are dropped
    const keyBytes = Buffer.allocUnsafeSlow(used);
    this.keyBytes.copy(keyBytes, 0, 0, used);
    const keyStart = this.keyStart.slice(0, keyCount + 1);
    const n = this.rowKey.length;
    const index: SourceIndex = {
      version,
      keyCount,
      keyBytes,
      keyStart,
      models,
      days: this.days,
      dayStart: this.dayStart,
      rowKey: this.rowKey,
      rowModel: this.rowModel,
      rowRetrieved: this.rowRetrieved,
      rowCited: this.rowCited,
      sumRetrieved: new Int32Array(keyCount),
      sumCited: new Int32Array(keyCount),
      touched: new Int32Array(keyCount),
      bytes: 0,
    };
    index.bytes =
      1024 + 14 * n + used + 4 * (keyCount + 1) + 12 * keyCount + 8 * this.days.length + models.reduce((s, m) => s + 64 + 2 * m.length, 0);
    return index;
  }
}

const SIGNATURE = Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1');

/**
 * Binary COPY rows of (int4 day, int4 model, text key, int4 retrieved, int4 cited) into the builder, chunk by chunk:
 * no JS object or string per row, only a row that straddles two chunks joined with the next chunk.
 */
export async function copyInto(stream: AsyncIterable<Buffer>, b: IndexBuilder): Promise<void> {
  const bad = (why: string) => new Error(`source index: unexpected COPY data (${why})`);
  let rest: Buffer | null = null;
  let started = false;
  let ended = false;
  for await (const chunk of stream) {
    const buf: Buffer = rest ? Buffer.concat([rest, chunk]) : chunk;
    const end = buf.length;
    let o = 0;
    if (!started) {
      if (end < 19 || end < 19 + buf.readUInt32BE(15)) {
        rest = buf;
        continue;
      }
      if (!buf.subarray(0, 11).equals(SIGNATURE)) throw bad('no signature');
      o = 19 + buf.readUInt32BE(15);
      started = true;
    }
    while (!ended && o + 2 <= end) {
      const fields = buf.readInt16BE(o);
      if (fields === -1) {
        ended = true;
        o += 2;
        break;
      }
      if (fields !== 5) throw bad(`${fields} fields`);
      if (o + 22 > end) break;
      const len = buf.readInt32BE(o + 18);
      if (o + 38 + len > end) break;
      if (buf.readInt32BE(o + 2) !== 4 || buf.readInt32BE(o + 10) !== 4 || len < 0) throw bad('a field not as selected');
      const ke = o + 22 + len;
      b.add(buf.readInt32BE(o + 6), buf.readInt32BE(o + 14), buf, o + 22, ke, buf.readInt32BE(ke + 4), buf.readInt32BE(ke + 12));
      o = ke + 16;
    }
    rest = o < end ? buf.subarray(o) : null;
  }
  if (!ended || rest) throw bad(ended ? 'bytes after the trailer' : 'no trailer');
}

type Row = { d: number; m: number; key: string; retrieved: number; cited: number };

interface CopyConn {
  connection?: { stream?: { write?: unknown } };
  escapeLiteral(s: string): string;
  query(q: object): Readable;
}

/**
 * The index read in one snapshot: first each day's and model's row count (from the primary key's order, no sort),
 * then the rows in key order, each placed in its day's part of the columns. On a Postgres server the rows come by
 * binary COPY; on PGlite (no COPY stream) by a SELECT.
 */
async function load(db: Knex, websiteId: string, kind: number, version: string): Promise<SourceIndex> {
  return db.transaction(
    async (trx) => {
      const counts = (
        await trx.raw(
          `select (day - date '1970-01-01') as d, model, count(*)::int as n from rm_source_days
            where website_id = ? and kind = ? group by day, model order by day, model`,
          [websiteId, kind],
        )
      ).rows as { d: number; model: string; n: number }[];
      const models = [...new Set(counts.map((c) => c.model))].sort();
      const days: number[] = [];
      const starts: number[] = [];
      let n = 0;
      for (const c of counts) {
        if (days[days.length - 1] !== c.d) {
          days.push(c.d);
          starts.push(n);
        }
        n += c.n;
      }
      starts.push(n);
      const b = new IndexBuilder(Int32Array.from(days), Int32Array.from(starts));
      if (n > 0) {
        const conn = (await trx.client.acquireConnection()) as CopyConn;
        const lit = (s: string) => conn.escapeLiteral(s);
        const select = (site: string, modelList: string) =>
          `select (day - date '1970-01-01')::int4 as d, (array_position(${modelList}, model) - 1)::int4 as m, key, retrieved, cited
             from rm_source_days where website_id = ${site} and kind = ${Number(kind)} order by key collate "C"`;
        if (typeof conn.connection?.stream?.write === 'function') {
          const sql = `copy (${select(`${lit(websiteId)}::uuid`, `array[${models.map(lit).join(',')}]::text[]`)}) to stdout (format binary)`;
          // as knex does for its queries: listeners that count or watch statements see this one
          const obj = { method: 'copy', sql, bindings: [] };
          db.client.emit('query', obj);
          await copyInto(conn.query(copyTo(sql)) as AsyncIterable<Buffer>, b);
          db.client.emit('query-response', [], obj);
        } else {
          const rows = (await trx.raw(select('?', '?::text[]'), [models as unknown as Knex.RawBinding, websiteId])).rows as Row[];
          for (const r of rows) {
            const bytes = Buffer.from(r.key, 'utf8');
            b.add(r.d, r.m, bytes, 0, bytes.length, r.retrieved, r.cited);
          }
        }
      }
      return b.finish(version, models);
    },
    { isolationLevel: 'repeatable read', readOnly: true },
  );
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
  if (x.keyCount === 0) return [];
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
  // the columns in locals, and the keys met in a typed array (a key is met once: every row retrieved at least once, so
  // its sum is 0 only before its first row): the loop below is most of a warm read's CPU
  const { rowKey, rowModel, rowRetrieved, rowCited, sumRetrieved: retrieved, sumCited: cited, touched: touchedKeys } = x;
  let touchedCount = 0;
  try {
    for (let i = from; i < to; i++) {
      if (allowed !== null && allowed[rowModel[i]] === 0) continue;
      const k = rowKey[i];
      if (retrieved[k] === 0) touchedKeys[touchedCount++] = k;
      retrieved[k] += rowRetrieved[i];
      cited[k] += rowCited[i];
    }
    const top = bestKeys(retrieved, cited, touchedKeys.subarray(0, touchedCount), offset + count);
    return top.slice(offset).map((k) => ({
      key: x.keyBytes.toString('utf8', x.keyStart[k], x.keyStart[k + 1]),
      retrieved: retrieved[k],
      cited: cited[k],
    }));
  } finally {
    for (let t = 0; t < touchedCount; t++) {
      retrieved[touchedKeys[t]] = 0;
      cited[touchedKeys[t]] = 0;
    }
  }
}

/**
 * The first `want` of the keys by cited desc, retrieved desc, then the key (its rank below `retrieved.length`). A short
 * page keeps its best in a sorted array; a deep one (page 1,000 of 100 wants 100,100) sorts them all.
 */
export function bestKeys(retrieved: Int32Array, cited: Int32Array, keys: Int32Array, want: number): number[] {
  const before = (a: number, b: number) =>
    cited[a] > cited[b] || (cited[a] === cited[b] && (retrieved[a] > retrieved[b] || (retrieved[a] === retrieved[b] && a < b)));
  if (want > 1024 || want >= keys.length / 4) return sortedKeys(retrieved, cited, keys, want, before);
  // a key enters only when it beats the worst kept (most keys fail on cited alone)
  const top: number[] = [];
  let worstCited = -1;
  for (let t = 0; t < keys.length; t++) {
    const k = keys[t];
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
  return top;
}

/**
 * All the keys sorted, the first `want` of them: as one exact number each (cited, retrieved and rank packed, ascending
 * in the wanted order) by the typed array's native sort when they fit in 53 bits, else with the comparison.
 */
function sortedKeys(retrieved: Int32Array, cited: Int32Array, keys: Int32Array, want: number, before: (a: number, b: number) => boolean) {
  let maxC = 0;
  let maxR = 0;
  for (let t = 0; t < keys.length; t++) {
    maxC = Math.max(maxC, cited[keys[t]]);
    maxR = Math.max(maxR, retrieved[keys[t]]);
  }
  const ranks = retrieved.length;
  if ((maxC + 1) * (maxR + 1) * ranks > 2 ** 53)
    return Array.from(keys)
      .sort((a, b) => (before(a, b) ? -1 : 1))
      .slice(0, want);
  const packed = new Float64Array(keys.length);
  for (let t = 0; t < keys.length; t++) {
    const k = keys[t];
    packed[t] = ((maxC - cited[k]) * (maxR + 1) + (maxR - retrieved[k])) * ranks + k;
  }
  packed.sort();
  const out = new Array<number>(Math.min(want, packed.length));
  for (let i = 0; i < out.length; i++) out[i] = packed[i] % ranks;
  return out;
}
