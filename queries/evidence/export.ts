import { type Readable, Transform } from 'node:stream';
import { finished } from 'node:stream/promises';
import type { Knex } from 'knex';
import { to as copyTo } from 'pg-copy-streams';
import { ANSWER_SELECT, type AnswerRow, answerShaper, retrievedItems, sourceItems, type TrackedEntity, trackedEntities } from '../responses/list';
import type { Answer } from '../responses/views';
import type { StoredMatched } from '../../projections/answers/schema';

/**
 * The answers export (CONTRACT.md, Answer evidence): every answer of a website in a stable order, from a cursor.
 * An answer's place is (changed, id): `changed` is the answers projection's version when it was recorded, raised for
 * the whole history to the version of the website's last re-derivation (rm_fact_sites.rederived), so an incremental
 * sync gets every re-derived answer again. Answers at the re-derivation's version come in id order, then newer ones.
 */
export interface ExportCursor {
  v: number;
  id: string;
}

export const START: ExportCursor = { v: -1, id: '' };
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export const encodeCursor = (c: ExportCursor) => Buffer.from(`${c.v}.${c.id}`).toString('base64url');

/** The cursor a client sent back, or null when it is not one of ours. */
export function decodeCursor(s: string): ExportCursor | null {
  if (!/^[A-Za-z0-9_-]{1,200}$/.test(s)) return null;
  const m = /^(-1|0|[1-9][0-9]{0,15})\.(.*)$/.exec(Buffer.from(s, 'base64url').toString('utf8'));
  if (!m || (m[2] !== '' && !UUID.test(m[2]))) return null;
  return { v: Number(m[1]), id: m[2] };
}

/** Rows per round trip while streaming. */
const PAGE = 500;

interface Plan {
  rederived: number;
  /** the answers at the re-derivation's version still to come: ids after `afterA` ('' = from the first) up to `endA` */
  afterA: string;
  endA: string | null;
  /** then the newer ones after `afterB` (null = from the first) up to `endB` */
  afterB: ExportCursor | null;
  endB: ExportCursor | null;
  next: ExportCursor;
}

const idAfter = (id: string) => (id === '' ? ['true', []] : ['id > ?::uuid', [id]]) as [string, Knex.RawBinding[]];
const keyAfter = (c: ExportCursor | null) =>
  (c === null ? ['true', []] : ['(changed, id) > (?, ?::uuid)', [c.v, c.id]]) as [string, Knex.RawBinding[]];

/** Which answers this call returns (at most `limit`), and the cursor after the last of them. */
export async function planExport(db: Knex, websiteId: string, after: ExportCursor, limit: number): Promise<Plan> {
  const site = await db('rm_fact_sites').where('website_id', websiteId).first('rederived');
  const rederived = Number(site?.rederived ?? 0);
  let left = limit;
  let next = after;
  const afterA = after.v === rederived ? after.id : '';
  let endA: string | null = null;
  if (after.v <= rederived) {
    const [cond, b] = idAfter(afterA);
    const r = await db.raw(
      `select count(*)::int as n, (array_agg(id order by id desc))[1]::text as last from (
         select id from rm_responses where website_id = ? and changed <= ? and ${cond} order by id limit ?) s`,
      [websiteId, rederived, ...b, left],
    );
    const { n, last } = r.rows[0] as { n: number; last: string | null };
    left -= n;
    if (last) {
      endA = last;
      next = { v: rederived, id: last };
    }
  }
  const afterB = after.v > rederived ? after : null;
  let endB: ExportCursor | null = null;
  if (left > 0) {
    const [cond, b] = keyAfter(afterB);
    const r = await db.raw(
      `select changed::text as v, id::text from (
         select changed, id from rm_responses where website_id = ? and changed > ? and ${cond} order by changed, id limit ?
       ) s order by changed desc, id desc limit 1`,
      [websiteId, rederived, ...b, left],
    );
    const last = r.rows[0] as { v: string; id: string } | undefined;
    if (last) next = endB = { v: Number(last.v), id: last.id };
  }
  return { rederived, afterA, endA, afterB, endB, next };
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
  if (plan.endA !== null) {
    const endA = plan.endA;
    const readA = async (after: R | null): Promise<R[]> => {
      const [cond, b] = idAfter(after ? after.id : plan.afterA);
      return base()
        .where('r.changed', '<=', plan.rederived)
        .whereRaw(`${cond.replace('id', 'r.id')} and r.id <= ?::uuid`, [...b, endA])
        .orderBy('r.id')
        .limit(PAGE) as unknown as Promise<R[]>;
    };
    yield* pages(readA);
  }
  if (plan.endB !== null) {
    const endB = plan.endB;
    const readB = async (after: R | null): Promise<R[]> => {
      const [cond, b] = keyAfter(after ? { v: Number(after.changed), id: after.id } : plan.afterB);
      return base()
        .where('r.changed', '>', plan.rederived)
        .whereRaw(`${cond.replace('(changed, id)', '(r.changed, r.id)')} and (r.changed, r.id) <= (?, ?::uuid)`, [...b, endB.v, endB.id])
        .orderBy(['r.changed', 'r.id'])
        .limit(PAGE) as unknown as Promise<R[]>;
    };
    yield* pages(readB);
  }
}

/** The planned answers, shaped like the answers listing's items. */
export async function* exportAnswers(db: Knex, websiteId: string, plan: Plan): AsyncGenerator<Answer> {
  const shape = answerShaper(websiteId, await trackedEntities(db, websiteId), null);
  for await (const rows of plannedRows<AnswerRow & { changed: string }>(db, websiteId, plan, ANSWER_SELECT)) for (const row of rows) yield shape(row);
}

/** The stored fields of an answer (`r`, its prompt `p`) as a JSON object's text, written by Postgres. */
const STORED_JSON = `json_build_object(
      'id', r.id, 'website_id', r.website_id, 'prompt_id', r.prompt_id, 'prompt', p.text, 'model', r.model, 'response', r.text,
      'created_at', to_char(r.run_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
      'sources', (select coalesce(json_agg(json_build_object('url', e->>0, 'root_domain', e->>1, 'normalized_url', e->>2, 'suffix', e->>3) order by i), '[]')
                    from jsonb_array_elements(r.sources) with ordinality x(e, i)),
      'schedule', coalesce(r.schedule_id::text, 'default'), 'location_id', r.location_id, 'persona_id', r.persona_id, 'run_id', r.run_id,
      'external_id', r.external_id, 'citations', r.citations, 'products', r.products,
      'retrieved', (select coalesce(json_agg(json_build_object('url', e->>0, 'normalized_url', e->>1, 'cited', (e->2)::boolean) order by i), '[]')
                      from jsonb_array_elements(r.retrieved) with ordinality x(e, i)),
      'search_queries', r.search_queries, 'sample_index', r.sample_index)::text`;

/** An NDJSON line's end from an answer's mentions: mentioned, cited, position and competitors with the current entities, and `}`. */
function entitiesTail(entities: TrackedEntity[]) {
  const self = new Set(entities.filter((e) => e.is_self).map((e) => e.id));
  const competitorJson = new Map(
    entities
      .filter((e) => !e.is_self)
      .map((e) => [e.id, `{"id":${JSON.stringify(e.id)},"name":${JSON.stringify(e.name)},"url":${JSON.stringify(e.url)},"position":`]),
  );
  return (mentions: [string, number][], cited: boolean) => {
    let position: number | null = null;
    let competitors = '';
    for (const [id, at] of mentions) {
      if (self.has(id)) position = at;
      else {
        const c = competitorJson.get(id);
        if (c) competitors += `${competitors ? ',' : ''}${c}${at}}`;
      }
    }
    return `,"mentioned":${position !== null},"cited":${cited},"position":${position},"competitors":[${competitors}]}`;
  };
}

/**
 * The same items as NDJSON lines: Postgres writes the stored fields as JSON text, node adds what the website's
 * current entities decide (mentioned, cited, position, competitors), so no stored list is parsed and written again.
 */
export async function* exportNdjson(db: Knex, websiteId: string, plan: Plan): AsyncGenerator<string> {
  const tail = entitiesTail(await trackedEntities(db, websiteId));
  type Row = { id: string; changed: string; j: string; matched: StoredMatched };
  for await (const rows of plannedRows<Row>(db, websiteId, plan, [db.raw(`${STORED_JSON} as j`), 'r.matched'])) {
    let out = '';
    for (const r of rows) out += `${r.j.slice(0, -1)}${tail(r.matched.m, r.matched.c.includes(websiteId))}\n`;
    yield out;
  }
}

interface CopyConn {
  connection?: { stream?: { write?: unknown } };
  escapeLiteral(s: string): string;
  query(q: object): Readable;
}

/** Column separator of the COPY rows: a JSON text never holds a raw control character. */
const SEP = 1;

/**
 * An answer's COPY row: the scalar fields and stored JSON lists as one JSON object's text without its `}`, then the
 * sources, the retrieved pages and the mentions as stored, and whether it cites the brand (t or f).
 */
const COPY_ROW = (websiteId: string) => `left(json_build_object(
      'id', r.id, 'website_id', r.website_id, 'prompt_id', r.prompt_id, 'prompt', p.text, 'model', r.model, 'response', r.text,
      'created_at', to_char(r.run_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
      'schedule', coalesce(r.schedule_id::text, 'default'), 'location_id', r.location_id, 'persona_id', r.persona_id, 'run_id', r.run_id,
      'external_id', r.external_id, 'citations', r.citations, 'products', r.products,
      'search_queries', r.search_queries, 'sample_index', r.sample_index)::text, -1),
    r.sources, r.retrieved, r.matched->'m', r.matched->'c' ? ${websiteId}`;

/** COPY rows (COPY_ROW) to NDJSON lines: the lists reshaped as the listing shows them, the entities' part added. */
function copyRowsToLines(tail: (m: [string, number][], cited: boolean) => string): Transform {
  let carry: Buffer | null = null;
  const lines = (buf: Buffer, out: Buffer[]) => {
    let start = 0;
    for (;;) {
      const nl = buf.indexOf(10, start);
      if (nl === -1) break;
      const a = buf.indexOf(SEP, start);
      const b = buf.indexOf(SEP, a + 1);
      const c = buf.indexOf(SEP, b + 1);
      const d = buf.indexOf(SEP, c + 1);
      const sources = sourceItems(JSON.parse(buf.toString('utf8', a + 1, b)));
      const retrieved = retrievedItems(JSON.parse(buf.toString('utf8', b + 1, c)));
      const mentions = JSON.parse(buf.toString('utf8', c + 1, d));
      out.push(
        buf.subarray(start, a),
        Buffer.from(`,"sources":${JSON.stringify(sources)},"retrieved":${JSON.stringify(retrieved)}${tail(mentions, buf[d + 1] === 0x74)}\n`),
      );
      start = nl + 1;
    }
    return start;
  };
  return new Transform({
    transform(chunk: Buffer, _enc, done) {
      try {
        const out: Buffer[] = [];
        let buf = chunk;
        if (carry) {
          const nl = chunk.indexOf(10);
          if (nl === -1) {
            carry = Buffer.concat([carry, chunk]);
            return done();
          }
          lines(Buffer.concat([carry, chunk.subarray(0, nl + 1)]), out);
          buf = chunk.subarray(nl + 1);
          carry = null;
        }
        const used = lines(buf, out);
        if (used < buf.length) carry = Buffer.from(buf.subarray(used));
        done(null, out.length ? Buffer.concat(out) : undefined);
      } catch (err) {
        done(err as Error);
      }
    },
  });
}

/**
 * The planned answers' NDJSON lines streamed by COPY, one statement per part of the plan, on one connection held until
 * the stream ends, at the reader's pace: Postgres writes the stored fields as JSON text, node reshapes the lists and adds
 * the entities' part (JSON.parse and stringify cost node less than json_agg costs Postgres). Null when the connection
 * is not a socket to a Postgres server (PGlite).
 */
export async function copyNdjson(db: Knex, websiteId: string, plan: Plan): Promise<Readable | null> {
  const tail = entitiesTail(await trackedEntities(db, websiteId));
  const conn = (await db.client.acquireConnection()) as CopyConn;
  if (typeof conn.connection?.stream?.write !== 'function') {
    await db.client.releaseConnection(conn);
    return null;
  }
  const lit = (v: string | number) => (typeof v === 'number' ? String(v) : conn.escapeLiteral(v));
  const select = `select ${COPY_ROW(lit(websiteId))} from rm_responses r left join rm_prompts p on p.id = r.prompt_id
    where r.website_id = ${lit(websiteId)}::uuid`;
  const parts: string[] = [];
  if (plan.endA !== null) {
    const from = plan.afterA === '' ? '' : `and r.id > ${lit(plan.afterA)}::uuid`;
    parts.push(`${select} and r.changed <= ${lit(plan.rederived)} ${from} and r.id <= ${lit(plan.endA)}::uuid order by r.id`);
  }
  if (plan.endB !== null) {
    const b = plan.afterB;
    const from = b === null ? '' : `and (r.changed, r.id) > (${lit(b.v)}, ${lit(b.id)}::uuid)`;
    parts.push(
      `${select} and r.changed > ${lit(plan.rederived)} ${from} and (r.changed, r.id) <= (${lit(plan.endB.v)}, ${lit(plan.endB.id)}::uuid) order by r.changed, r.id`,
    );
  }
  const out = copyRowsToLines(tail);
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
      for (const sql of parts) {
        if (out.destroyed) break;
        // CSV with control characters as delimiter and quote writes each JSON text as it is
        const copy = conn.query(copyTo(`copy (${sql}) to stdout with (format csv, delimiter e'\\x01', quote e'\\x02')`));
        current = copy;
        copy.pipe(out, { end: false });
        await finished(copy);
      }
      if (!out.destroyed) out.end();
    } catch (err) {
      out.destroy(err as Error);
    } finally {
      await db.client.releaseConnection(conn);
    }
  })();
  return out;
}
