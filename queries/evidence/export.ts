import { type Readable, Transform } from 'node:stream';
import { finished } from 'node:stream/promises';
import type { Knex } from 'knex';
import { type CopyConn, copies, copyOut } from '../copy-out';
import { EXPORT_LINE_SQL } from '../../projections/answers/export-line';
import { ANSWER_SELECT, type AnswerRow, answerShaper, trackedEntities } from '../responses/list';
import type { Answer } from '../responses/views';

/**
 * The answers export (CONTRACT.md, Answer evidence): every answer of a website in a stable order, from a cursor.
 * An answer's place is (changed, id): `changed` is the answers projection's version when it was recorded, the order
 * the rows were written in, so the export reads the table about as it lies on disk. A re-derivation of the website's
 * history (rm_fact_sites.rederived, the epoch) re-derives every answer: a cursor from an earlier epoch starts over.
 */
export interface ExportCursor {
  /** the epoch the cursor was handed out in; null: a cursor of the earlier form `v.id` (legacy) */
  r: number | null;
  /** the last answer's (changed, id); a legacy cursor with v = the epoch: the last id of the epoch's answers in id order */
  v: number;
  id: string;
}

export const START: ExportCursor = { r: -1, v: -1, id: '' };
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const LAST_UUID = 'ffffffff-ffff-ffff-ffff-ffffffffffff';

export const encodeCursor = (c: ExportCursor) => Buffer.from(c.r === null ? `${c.v}.${c.id}` : `${c.r}.${c.v}.${c.id}`).toString('base64url');

/** The cursor a client sent back, or null when it is not one of ours. */
export function decodeCursor(s: string): ExportCursor | null {
  if (!/^[A-Za-z0-9_-]{1,200}$/.test(s)) return null;
  const n = '(-1|0|[1-9][0-9]{0,15})';
  const m = new RegExp(`^${n}\\.(?:${n}\\.)?(.*)$`).exec(Buffer.from(s, 'base64url').toString('utf8'));
  if (!m || (m[3] !== '' && !UUID.test(m[3]))) return null;
  return m[2] === undefined ? { r: null, v: Number(m[1]), id: m[3] } : { r: Number(m[1]), v: Number(m[2]), id: m[3] };
}

/** Rows per round trip while streaming. */
const PAGE = 500;

interface Key {
  v: number;
  id: string;
}

interface Plan {
  rederived: number;
  /** a legacy cursor inside its epoch's id-ordered answers: the ids after `after` up to `end` (changed <= rederived) */
  legacy: { after: string; end: string } | null;
  /** then the answers in (changed, id) order after `from` (null = from the first) up to `end` */
  from: Key | null;
  end: Key | null;
  next: ExportCursor;
}

const keyAfter = (c: Key | null) => (c === null ? ['true', []] : ['(changed, id) > (?, ?::uuid)', [c.v, c.id]]) as [string, Knex.RawBinding[]];

/** Which answers this call returns (at most `limit`), and the cursor after the last of them. */
export async function planExport(db: Knex, websiteId: string, after: ExportCursor, limit: number): Promise<Plan> {
  const site = await db('rm_fact_sites').where('website_id', websiteId).first('rederived');
  const rederived = Number(site?.rederived ?? 0);
  let left = limit;
  // a cursor of another epoch (or the start) starts over: every answer was re-derived since
  let from: Key | null = null;
  let legacy: Plan['legacy'] = null;
  if (after.id !== '' && (after.r === rederived || (after.r === null && after.v > rederived))) from = { v: after.v, id: after.id };
  else if (after.r === null && after.v === rederived) {
    // a cursor handed out in the epoch's former id order finishes the epoch's answers in that order
    const [cond, b] = after.id === '' ? ['true', []] : ['id > ?::uuid', [after.id]];
    const r = await db.raw(
      `select count(*)::int as n, (array_agg(id order by id desc))[1]::text as last from (
         select id from rm_responses where website_id = ? and changed <= ? and ${cond} order by id limit ?) s`,
      [websiteId, rederived, ...b, left],
    );
    const { n, last } = r.rows[0] as { n: number; last: string | null };
    left -= n;
    if (last) legacy = { after: after.id, end: last };
    from = { v: rederived, id: LAST_UUID };
  }
  let end: Key | null = null;
  if (left > 0) {
    const [cond, b] = keyAfter(from);
    const r = await db.raw(
      `select changed::text as v, id::text from (
         select changed, id from rm_responses where website_id = ? and ${cond} order by changed, id limit ?
       ) s order by changed desc, id desc limit 1`,
      [websiteId, ...b, left],
    );
    const last = r.rows[0] as { v: string; id: string } | undefined;
    if (last) end = { v: Number(last.v), id: last.id };
  }
  const next: ExportCursor =
    legacy && left === 0 ? { r: null, v: rederived, id: legacy.end } : { r: rederived, ...(end ?? from ?? { v: -1, id: '' }) };
  return { rederived, legacy, from, end, next };
}

/** The planned rows, `columns` of each (with `r.id` and `r.changed`), a page per read (the next read while this one is used). */
async function* plannedRows<R extends { id: string; changed: string }>(db: Knex, websiteId: string, plan: Plan, columns: (string | Knex.Raw)[]) {
  const base = () =>
    db('rm_responses as r')
      .leftJoin('rm_prompts as p', 'p.id', 'r.prompt_id')
      .where('r.website_id', websiteId)
      .select([...columns, 'r.id', 'r.changed']);
  const pages = async function* (read: (after: R | null) => Promise<R[]>) {
    let pending: Promise<R[]> | null = read(null);
    while (pending) {
      const rows: R[] = await pending;
      pending = rows.length === PAGE ? read(rows[rows.length - 1]) : null;
      // a client gone mid-stream ends this generator with a read still under way: its failure is nobody's then
      pending?.catch(() => {});
      yield rows;
    }
  };
  if (plan.legacy !== null) {
    const legacy = plan.legacy;
    const readLegacy = async (after: R | null): Promise<R[]> => {
      const from = after ? after.id : legacy.after;
      const q = base().where('r.changed', '<=', plan.rederived).whereRaw('r.id <= ?::uuid', [legacy.end]);
      if (from !== '') q.whereRaw('r.id > ?::uuid', [from]);
      return q.orderBy('r.id').limit(PAGE) as unknown as Promise<R[]>;
    };
    yield* pages(readLegacy);
  }
  if (plan.end !== null) {
    const end = plan.end;
    const read = async (after: R | null): Promise<R[]> => {
      const [cond, b] = keyAfter(after ? { v: Number(after.changed), id: after.id } : plan.from);
      return base()
        .whereRaw(`${cond.replace('(changed, id)', '(r.changed, r.id)')} and (r.changed, r.id) <= (?, ?::uuid)`, [...b, end.v, end.id])
        .orderBy(['r.changed', 'r.id'])
        .limit(PAGE) as unknown as Promise<R[]>;
    };
    yield* pages(read);
  }
}

/** The planned answers, shaped like the answers listing's items. */
export async function* exportAnswers(db: Knex, websiteId: string, plan: Plan): AsyncGenerator<Answer> {
  const shape = answerShaper(websiteId, await trackedEntities(db, websiteId), null);
  for await (const rows of plannedRows<AnswerRow & { changed: string }>(db, websiteId, plan, ANSWER_SELECT)) for (const row of rows) yield shape(row);
}

/** The planned answers' NDJSON lines, a page per read (PGlite, which has no COPY): the lines kept ready, joined. */
export async function* exportNdjson(db: Knex, websiteId: string, plan: Plan): AsyncGenerator<string> {
  type Row = { id: string; changed: string; line: string };
  for await (const rows of plannedRows<Row>(db, websiteId, plan, [db.raw(`${EXPORT_LINE_SQL} as line`)])) {
    let out = '';
    for (const r of rows) out += r.line;
    yield out;
  }
}

/** The signature, flags and header extension length a binary COPY starts with. */
const COPY_HEADER = 19;
/** Bytes of lines passed on at once: COPY sends a message per row, and a write per row cost node more than the row. */
const BATCH = 128 * 1024;

/** Parser states: the file header, its extension, a tuple's field count, the field's length, the field's bytes. */
const SIG = 0;
const SKIP = 1;
const COUNT = 2;
const LEN = 3;
const DATA = 4;

/**
 * Binary COPY rows of one text column (one or more COPY statements one after the other) to the columns' bytes, each
 * row's text as it is: no escaping on either side, only the framing dropped. Each row's bytes are copied once, straight
 * from the chunk they came in into a batch of BATCH bytes (no joining of chunks, no object per row); a batch is passed
 * on when full, the last one at the end.
 */
export function copyBinaryText(): Transform {
  /** the bytes of a header or length that straddles two chunks */
  const scratch = Buffer.alloc(COPY_HEADER);
  let have = 0;
  let state = SIG;
  /** bytes of the extension still to skip, or of the field still to copy */
  let left = 0;
  let out = Buffer.allocUnsafe(BATCH);
  let outLen = 0;
  return new Transform({
    // a few batches in flight on each side, so Postgres keeps sending while the reply is written
    highWaterMark: 4 * BATCH,
    transform(chunk: Buffer, _enc, done) {
      const end = chunk.length;
      let at = 0;
      while (at < end) {
        if (state === DATA) {
          const n = Math.min(left, end - at, BATCH - outLen);
          chunk.copy(out, outLen, at, at + n);
          outLen += n;
          at += n;
          left -= n;
          if (outLen === BATCH) {
            this.push(out);
            out = Buffer.allocUnsafe(BATCH);
            outLen = 0;
          }
          if (left === 0) state = COUNT;
          continue;
        }
        if (state === SKIP) {
          const n = Math.min(left, end - at);
          at += n;
          left -= n;
          if (left === 0) state = COUNT;
          continue;
        }
        const need = state === SIG ? COPY_HEADER : state === COUNT ? 2 : 4;
        let src = chunk;
        let pos = at;
        if (have === 0 && end - at >= need) at += need;
        else {
          const n = Math.min(need - have, end - at);
          chunk.copy(scratch, have, at, at + n);
          have += n;
          at += n;
          if (have < need) break;
          src = scratch;
          pos = 0;
          have = 0;
        }
        if (state === SIG) {
          left = src.readUInt32BE(pos + 15);
          state = left > 0 ? SKIP : COUNT;
        } else if (state === COUNT) {
          const fields = src.readInt16BE(pos);
          // the trailer (-1): a next statement starts with its own header
          if (fields === -1) state = SIG;
          else if (fields === 1) state = LEN;
          else return done(new Error(`export COPY: a row of ${fields} columns, expected 1`));
        } else {
          // -1 is NULL, which the line's concat never is
          left = Math.max(src.readInt32BE(pos), 0);
          state = left > 0 ? DATA : COUNT;
        }
      }
      done();
    },
    flush(done) {
      done(null, outLen ? out.subarray(0, outLen) : undefined);
    },
  });
}

/**
 * The planned answers' NDJSON lines streamed by COPY, one statement per part of the plan, on one connection held until
 * the stream ends, at the reader's pace: Postgres joins each answer's ready line (EXPORT_LINE_SQL) and sends it in
 * binary, node drops the framing. Null when the connection is not a socket to a Postgres server (PGlite).
 */
export async function copyNdjson(db: Knex, websiteId: string, plan: Plan): Promise<Readable | null> {
  const conn = (await db.client.acquireConnection()) as CopyConn;
  if (!copies(conn)) {
    await db.client.releaseConnection(conn);
    return null;
  }
  const lit = (v: string | number) => (typeof v === 'number' ? String(v) : conn.escapeLiteral(v));
  const select = `select ${EXPORT_LINE_SQL} from rm_responses r left join rm_prompts p on p.id = r.prompt_id
    where r.website_id = ${lit(websiteId)}::uuid`;
  const parts: string[] = [];
  if (plan.legacy !== null) {
    const from = plan.legacy.after === '' ? '' : `and r.id > ${lit(plan.legacy.after)}::uuid`;
    parts.push(`${select} and r.changed <= ${lit(plan.rederived)} ${from} and r.id <= ${lit(plan.legacy.end)}::uuid order by r.id`);
  }
  if (plan.end !== null) {
    const f = plan.from;
    const from = f === null ? '' : `and (r.changed, r.id) > (${lit(f.v)}, ${lit(f.id)}::uuid)`;
    parts.push(`${select} ${from} and (r.changed, r.id) <= (${lit(plan.end.v)}, ${lit(plan.end.id)}::uuid) order by r.changed, r.id`);
  }
  const out = copyBinaryText();
  let current: Readable | null = null;
  out.on('close', () => {
    // the reader went away: what is still coming is read and dropped, so the connection goes back clean
    if (current && !current.readableEnded) {
      current.unpipe(out);
      current.resume();
    }
  });
  void (async () => {
    try {
      // the order comes from the indexes: a sort of whole lines would spill to disk
      await conn.query('set enable_sort = off');
      for (const sql of parts) {
        if (out.destroyed) break;
        const copy = copyOut(db, conn, `copy (${sql}) to stdout with (format binary)`);
        current = copy;
        copy.pipe(out, { end: false });
        await finished(copy);
      }
      if (!out.destroyed) out.end();
    } catch (err) {
      out.destroy(err as Error);
    } finally {
      await Promise.resolve(conn.query('reset enable_sort')).catch(() => {});
      await db.client.releaseConnection(conn);
    }
  })();
  return out;
}
