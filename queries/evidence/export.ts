import type { Knex } from 'knex';
import { ANSWER_SELECT, type AnswerRow, answerShaper, trackedEntities } from '../responses/list';
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

/**
 * The same items as NDJSON lines: Postgres writes the stored fields as JSON text, node adds what the website's
 * current entities decide (mentioned, cited, position, competitors), so no stored list is parsed and written again.
 */
export async function* exportNdjson(db: Knex, websiteId: string, plan: Plan): AsyncGenerator<string> {
  const entities = await trackedEntities(db, websiteId);
  const byId = new Map(entities.map((e) => [e.id, e]));
  const competitorJson = new Map(
    entities
      .filter((e) => !e.is_self)
      .map((e) => [e.id, `{"id":${JSON.stringify(e.id)},"name":${JSON.stringify(e.name)},"url":${JSON.stringify(e.url)},"position":`]),
  );
  const stored = db.raw(`json_build_object(
      'id', r.id, 'website_id', r.website_id, 'prompt_id', r.prompt_id, 'prompt', p.text, 'model', r.model, 'response', r.text,
      'created_at', to_char(r.run_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
      'sources', (select coalesce(json_agg(json_build_object('url', e->>0, 'root_domain', e->>1, 'normalized_url', e->>2, 'suffix', e->>3) order by i), '[]')
                    from jsonb_array_elements(r.sources) with ordinality x(e, i)),
      'schedule', coalesce(r.schedule_id::text, 'default'), 'location_id', r.location_id, 'persona_id', r.persona_id, 'run_id', r.run_id,
      'external_id', r.external_id, 'citations', r.citations, 'products', r.products,
      'retrieved', (select coalesce(json_agg(json_build_object('url', e->>0, 'normalized_url', e->>1, 'cited', (e->2)::boolean) order by i), '[]')
                      from jsonb_array_elements(r.retrieved) with ordinality x(e, i)),
      'search_queries', r.search_queries, 'sample_index', r.sample_index)::text as j`);
  type Row = { id: string; changed: string; j: string; matched: StoredMatched };
  for await (const rows of plannedRows<Row>(db, websiteId, plan, [stored, 'r.matched'])) {
    let out = '';
    for (const r of rows) {
      let position: number | null = null;
      let competitors = '';
      for (const [id, at] of r.matched.m) {
        if (byId.get(id)?.is_self) position = at;
        else {
          const c = competitorJson.get(id);
          if (c) competitors += `${competitors ? ',' : ''}${c}${at}}`;
        }
      }
      out += `${r.j.slice(0, -1)},"mentioned":${position !== null},"cited":${r.matched.c.includes(websiteId)},"position":${position},"competitors":[${competitors}]}\n`;
    }
    yield out;
  }
}
