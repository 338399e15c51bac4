import type { Knex } from 'knex';
import { type CopyConn, copies, copyOut } from '../copy-out';
import { heldIndexes } from '../held-indexes';

export { dayNumber } from '../held-indexes';

/**
 * A website's rm_source_days of one kind held in memory, so the sources read sums in typed arrays instead of grouping
 * rows in Postgres. An index is used while the website's rm_fact_sites.version (moved in the same transaction as every
 * rm_source_days write) is the one it was loaded at. The keys (1.7 M URLs on the 1.2 M-answer website) are held as
 * their UTF-8 bytes in one buffer, never as a JS string each. A key's rows are kept together (a block), the blocks
 * ordered by the key's counts over all days and models, most cited first: a read sums block after block, each in
 * sequence (no sums array written at random), and stops when no block left could enter the page (a key's count over a
 * range is at most its count over all days).
 */
export interface SourceIndex {
  version: string;
  /** distinct keys in `collate "C"` (byte) order, a key's index its rank: key k is keyBytes[keyStart[k], keyStart[k + 1]) */
  keyCount: number;
  keyBytes: Buffer;
  keyStart: Int32Array;
  models: string[];
  /** block b: the rows [blockStart[b], blockStart[b + 1]) of the key ranked blockKey[b], cited and retrieved over all rows */
  blockStart: Int32Array;
  blockKey: Int32Array;
  blockCited: Int32Array;
  blockRetrieved: Int32Array;
  /** day numbers (days since 1970-01-01) */
  rowDay: Int32Array;
  rowModel: Uint16Array;
  rowRetrieved: Int32Array;
  rowCited: Int32Array;
  bytes: number;
}

// per process; least recently read websites go past it (the 1.2 M-answer website's URLs: see docs/benchmarks.md)
const held = heldIndexes<SourceIndex>(256 * 1024 * 1024);

/** The rows of one snapshot as they come (in key order), the keys' bytes appended as they change; then made blocks. */
export class IndexBuilder {
  private readonly rowKey: Int32Array;
  private readonly rowDay: Int32Array;
  private readonly rowModel: Uint16Array;
  private readonly rowRetrieved: Int32Array;
  private readonly rowCited: Int32Array;
  private rows = 0;
  keyBytes = Buffer.allocUnsafe(1 << 16);
  keyStart = new Int32Array(1 << 12);
  keyCount = 0;

  /** `n`: the rows the snapshot holds, counted first */
  constructor(readonly n: number) {
    this.rowKey = new Int32Array(n);
    this.rowDay = new Int32Array(n);
    this.rowModel = new Uint16Array(n);
    this.rowRetrieved = new Int32Array(n);
    this.rowCited = new Int32Array(n);
  }

  /** A row whose key is src[ks, ke); rows come in key order. */
  add(day: number, model: number, src: Buffer, ks: number, ke: number, retrieved: number, cited: number) {
    const len = ke - ks;
    let k = this.keyCount - 1;
    if (k < 0 || !this.isLastKey(src, ks, len)) k = this.appendKey(src, ks, ke);
    if (this.rows === this.n) throw new Error('source index: more rows than counted in the same snapshot');
    const j = this.rows++;
    this.rowKey[j] = k;
    this.rowDay[j] = day;
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
    if (this.rows !== this.n) throw new Error('source index: fewer rows than counted in the same snapshot');
    const { n, keyCount, rowKey } = this;
    const used = this.keyStart[keyCount];
    // exactly sized copies: the grown buffers are dropped
    const keyBytes = Buffer.allocUnsafeSlow(used);
    this.keyBytes.copy(keyBytes, 0, 0, used);
    const keyStart = this.keyStart.slice(0, keyCount + 1);
    // each key's rows (contiguous, in rank order) and its counts over all of them
    const rankStart = new Int32Array(keyCount + 1);
    const allCited = new Int32Array(keyCount);
    const allRetrieved = new Int32Array(keyCount);
    for (let i = 0; i < n; i++) {
      const k = rowKey[i];
      rankStart[k + 1] = i + 1;
      allCited[k] += this.rowCited[i];
      allRetrieved[k] += this.rowRetrieved[i];
    }
    const blockKey = sortedKeys(
      allRetrieved,
      allCited,
      Int32Array.from({ length: keyCount }, (_, k) => k),
    );
    const blockStart = new Int32Array(keyCount + 1);
    const blockCited = new Int32Array(keyCount);
    const blockRetrieved = new Int32Array(keyCount);
    const index: SourceIndex = {
      version,
      keyCount,
      keyBytes,
      keyStart,
      models,
      blockStart,
      blockKey,
      blockCited,
      blockRetrieved,
      rowDay: new Int32Array(n),
      rowModel: new Uint16Array(n),
      rowRetrieved: new Int32Array(n),
      rowCited: new Int32Array(n),
      bytes: 0,
    };
    let j = 0;
    for (let b = 0; b < keyCount; b++) {
      const k = blockKey[b];
      blockStart[b] = j;
      blockCited[b] = allCited[k];
      blockRetrieved[b] = allRetrieved[k];
      for (let i = rankStart[k]; i < rankStart[k + 1]; i++, j++) {
        index.rowDay[j] = this.rowDay[i];
        index.rowModel[j] = this.rowModel[i];
        index.rowRetrieved[j] = this.rowRetrieved[i];
        index.rowCited[j] = this.rowCited[i];
      }
    }
    blockStart[keyCount] = j;
    index.bytes = 1024 + 14 * n + used + 4 * (keyCount + 1) + 16 * keyCount + models.reduce((s, m) => s + 64 + 2 * m.length, 0);
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

/**
 * The index read in one snapshot: first the models and the row count, then the rows in key order. On a Postgres server
 * the rows come by binary COPY; on PGlite (no COPY stream) by a SELECT.
 */
async function load(db: Knex, websiteId: string, kind: number, version: string): Promise<SourceIndex> {
  return db.transaction(
    async (trx) => {
      const counts = (
        await trx.raw('select model, count(*)::int as n from rm_source_days where website_id = ? and kind = ? group by model', [websiteId, kind])
      ).rows as { model: string; n: number }[];
      const models = counts.map((c) => c.model).sort();
      const n = counts.reduce((s, c) => s + c.n, 0);
      const b = new IndexBuilder(n);
      if (n > 0) {
        const conn = (await trx.client.acquireConnection()) as CopyConn;
        const lit = (s: string) => conn.escapeLiteral(s);
        const select = (site: string, modelList: string) =>
          `select (day - date '1970-01-01')::int4 as d, (array_position(${modelList}, model) - 1)::int4 as m, key, retrieved, cited
             from rm_source_days where website_id = ${site} and kind = ${Number(kind)} order by key collate "C"`;
        if (copies(conn)) {
          const sql = `copy (${select(`${lit(websiteId)}::uuid`, `array[${models.map(lit).join(',')}]::text[]`)}) to stdout (format binary)`;
          await copyInto(copyOut(db, conn, sql), b);
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

/** The held index of a website's kind, for the bench's report: its rows, keys and bytes (the key bytes apart). */
export function heldSourceIndex(websiteId: string, kind: number) {
  const { index: x, heldBytes } = held.peek(`${websiteId}:${kind}`);
  return x ? { rows: x.rowDay.length, keys: x.keyCount, bytes: x.bytes, keyBytes: x.keyBytes.length, heldBytes } : null;
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
  let allowed: Uint8Array | null = null;
  if (r.models) {
    allowed = new Uint8Array(x.models.length);
    const wanted = new Set(r.models);
    x.models.forEach((m, i) => {
      if (wanted.has(m)) allowed![i] = 1;
    });
  }
  const top = topKeys(x, r.fromDay ?? -(2 ** 31), r.toDay ?? 2 ** 31 - 1, allowed, offset + count);
  const out: SourceCount[] = [];
  for (let i = offset; i < top.size; i++) {
    const k = top.key[i];
    out.push({ key: x.keyBytes.toString('utf8', x.keyStart[k], x.keyStart[k + 1]), retrieved: top.retrieved[i], cited: top.cited[i] });
  }
  return out;
}

/**
 * The best `want` keys over the range and models, best first: a heap of the best so far (its root the worst of them)
 * fed block by block, until the blocks' counts over all rows say no block left can beat the root.
 */
export function topKeys(x: SourceIndex, lo: number, hi: number, allowed: Uint8Array | null, want: number) {
  const cap = Math.min(want, x.keyCount);
  const hKey = new Int32Array(cap);
  const hRetrieved = new Int32Array(cap);
  const hCited = new Int32Array(cap);
  let size = 0;
  /** heap entry i comes after (is worse than) the counts (c, r) of key k */
  const after = (i: number, c: number, r: number, k: number) =>
    hCited[i] < c || (hCited[i] === c && (hRetrieved[i] < r || (hRetrieved[i] === r && hKey[i] > k)));
  const put = (i: number, c: number, r: number, k: number) => {
    hKey[i] = k;
    hRetrieved[i] = r;
    hCited[i] = c;
  };
  /** entry i's place taken by (c, r, k), moved down while a child is worse */
  const siftDown = (i: number, c: number, r: number, k: number) => {
    for (;;) {
      let w = 2 * i + 1;
      if (w >= size) break;
      if (w + 1 < size && after(w + 1, hCited[w], hRetrieved[w], hKey[w])) w++;
      if (!after(w, c, r, k)) break;
      put(i, hCited[w], hRetrieved[w], hKey[w]);
      i = w;
    }
    put(i, c, r, k);
  };
  const { blockStart, blockKey, blockCited, blockRetrieved, rowDay, rowModel, rowRetrieved, rowCited } = x;
  for (let b = 0; b < x.keyCount && cap > 0; b++) {
    if (size === cap) {
      const bc = blockCited[b];
      // every block from here has counts at most this one's: none can enter
      if (bc < hCited[0] || (bc === hCited[0] && blockRetrieved[b] < hRetrieved[0])) break;
    }
    let r = 0;
    let c = 0;
    const end = blockStart[b + 1];
    for (let i = blockStart[b]; i < end; i++) {
      const d = rowDay[i];
      if (d < lo || d > hi) continue;
      if (allowed !== null && allowed[rowModel[i]] === 0) continue;
      r += rowRetrieved[i];
      c += rowCited[i];
    }
    // no row in the range: not a source of it (every row retrieved at least once)
    if (r === 0) continue;
    const k = blockKey[b];
    if (size < cap) {
      // up from the end while the parent is better
      let i = size++;
      while (i > 0) {
        const p = (i - 1) >> 1;
        if (after(p, c, r, k)) break;
        put(i, hCited[p], hRetrieved[p], hKey[p]);
        i = p;
      }
      put(i, c, r, k);
    } else if (after(0, c, r, k)) siftDown(0, c, r, k);
  }
  // the worst out first, to the end
  const n = size;
  const key = new Int32Array(n);
  const retrieved = new Int32Array(n);
  const cited = new Int32Array(n);
  for (let at = n - 1; at >= 0; at--) {
    key[at] = hKey[0];
    retrieved[at] = hRetrieved[0];
    cited[at] = hCited[0];
    size--;
    if (size > 0) siftDown(0, hCited[size], hRetrieved[size], hKey[size]);
  }
  return { size: n, key, retrieved, cited };
}

/**
 * The keys sorted by cited desc, retrieved desc, then the key (its rank below `retrieved.length`): as one exact number
 * each (cited, retrieved and rank packed, ascending in the wanted order) by the typed array's native sort when they
 * fit in 53 bits, else with a comparison.
 */
export function sortedKeys(retrieved: Int32Array, cited: Int32Array, keys: Int32Array): Int32Array {
  let maxC = 0;
  let maxR = 0;
  for (let t = 0; t < keys.length; t++) {
    maxC = Math.max(maxC, cited[keys[t]]);
    maxR = Math.max(maxR, retrieved[keys[t]]);
  }
  const ranks = retrieved.length;
  if ((maxC + 1) * (maxR + 1) * ranks > 2 ** 53)
    return Int32Array.from(keys).sort((a, b) => cited[b] - cited[a] || retrieved[b] - retrieved[a] || a - b);
  const packed = new Float64Array(keys.length);
  for (let t = 0; t < keys.length; t++) {
    const k = keys[t];
    packed[t] = ((maxC - cited[k]) * (maxR + 1) + (maxR - retrieved[k])) * ranks + k;
  }
  packed.sort();
  const out = new Int32Array(keys.length);
  for (let i = 0; i < out.length; i++) out[i] = packed[i] % ranks;
  return out;
}
