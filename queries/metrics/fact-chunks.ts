import type { Knex } from 'knex';
import type { FactDictionaries } from '../../src/analysis/facts';
import { type CopyConn, copies, copyOut } from '../copy-out';

/**
 * Reading a website's stored fact chunks (rm_fact_chunks) for FactsCache. A SELECT answers in text, where a bytea
 * column is hex: Postgres encodes twice the bytes, and node receives them as a string and decodes them again (on the
 * 1.2 M-answer website, 90 days are 12 MB of chunks, 24 MB of hex; decoding it took a fifth of a first load). So on a
 * Postgres server the rows are read with COPY … TO STDOUT (FORMAT binary), whose fields arrive as their bytes; on PGlite
 * (no COPY stream) with the usual SELECT. Both give the same rows.
 */

export interface ChunkRow {
  day: string;
  part: number;
  meta: FactDictionaries & { n: number };
  data: Buffer;
}

/** Which chunks: a website's days [lo, hi] (infinite: open), and with `since` only those written after that version. */
export interface ChunkQuery {
  websiteId: string;
  lo: string | null;
  hi: string | null;
  since: bigint | null;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const DAY = /^\d{4}-\d{2}-\d{2}$/;

/** The COPY statement of a query (COPY takes no parameters: every value is checked, then written in). */
export function copySql(q: ChunkQuery): string {
  if (!UUID.test(q.websiteId)) throw new Error(`fact chunks: not a website id: ${JSON.stringify(q.websiteId)}`);
  const where = [`website_id = '${q.websiteId}'`];
  for (const [op, day] of [
    ['>=', q.lo],
    ['<=', q.hi],
  ] as const) {
    if (day === null) continue;
    if (!DAY.test(day)) throw new Error(`fact chunks: not a day: ${JSON.stringify(day)}`);
    where.push(`day ${op} '${day}'`);
  }
  if (q.since !== null) where.push(`version > ${BigInt(q.since).toString()}`);
  return `copy (select day::text, part, meta::text, data from rm_fact_chunks where ${where.join(' and ')}) to stdout (format binary)`;
}

const SIGNATURE = Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1');

/** The rows of a COPY … (FORMAT binary) of copySql's four columns (day text, part int4, meta text, data bytea). */
export function parseCopy(buf: Buffer): ChunkRow[] {
  const bad = (why: string) => new Error(`fact chunks: unexpected COPY data (${why})`);
  if (buf.length < 19 || !buf.subarray(0, 11).equals(SIGNATURE)) throw bad('no signature');
  let o = 15;
  o += 4 + buf.readInt32BE(o);
  const rows: ChunkRow[] = [];
  const field = (): number => {
    const len = buf.readInt32BE(o);
    o += 4;
    if (len < 0 || o + len > buf.length) throw bad(len < 0 ? 'a null field' : 'a field past the end');
    return len;
  };
  for (;;) {
    const fields = buf.readInt16BE(o);
    o += 2;
    if (fields === -1) break;
    if (fields !== 4) throw bad(`${fields} fields`);
    let len = field();
    const day = buf.toString('latin1', o, o + len);
    o += len;
    if (field() !== 4) throw bad('part is not an int4');
    const part = buf.readInt32BE(o);
    o += 4;
    len = field();
    const meta = JSON.parse(buf.toString('utf8', o, o + len));
    o += len;
    len = field();
    const data = buf.subarray(o, o + len);
    o += len;
    rows.push({ day, part, meta, data });
  }
  return rows;
}

/** The rows by COPY; null when the connection is not a socket to a Postgres server (PGlite). */
async function copyChunks(db: Knex, q: ChunkQuery): Promise<ChunkRow[] | null> {
  const conn = (await db.client.acquireConnection()) as CopyConn;
  try {
    if (!copies(conn)) return null;
    const parts: Buffer[] = [];
    await new Promise<void>((resolve, reject) => {
      const stream = copyOut(db, conn, copySql(q));
      stream.on('data', (b: Buffer) => parts.push(b));
      stream.on('error', reject);
      stream.on('end', resolve);
    });
    return parseCopy(parts.length === 1 ? parts[0] : Buffer.concat(parts));
  } finally {
    await db.client.releaseConnection(conn);
  }
}

/** The chunks a query asks for (in no particular order). */
export async function readChunks(db: Knex, q: ChunkQuery): Promise<ChunkRow[]> {
  const copied = await copyChunks(db, q);
  if (copied !== null) return copied;
  const s = db('rm_fact_chunks').where('website_id', q.websiteId).select(db.raw('day::text as day'), 'part', 'meta', 'data');
  if (q.lo !== null) s.andWhere('day', '>=', q.lo);
  if (q.hi !== null) s.andWhere('day', '<=', q.hi);
  if (q.since !== null) s.andWhere('version', '>', q.since.toString());
  return (await s) as ChunkRow[];
}
