import type { Knex } from 'knex';
import type { EntityInput } from '../../src/analysis/answer';
import { scheduleValue } from '../../src/domain/filters';
import type { Selection } from '../filters';
import type { Answer, AnswerPage, DateRange } from './views';
import { recordedFields } from '../../projections/answers/export-line';
import type { StoredMatched } from '../../projections/answers/schema';
import { siteEntitiesOf } from '../../projections/site-entities';
import { newestFirst, onePageAndMore, type PageRequest, pageInfo, pageRows } from '../paging';

export interface TrackedEntity extends EntityInput {
  url: string | null;
}

/** The brand and competitors the answers are analyzed against (the analysis projection's own copy), brand first. */
export async function trackedEntities(db: Knex, websiteId: string): Promise<TrackedEntity[]> {
  return (await siteEntitiesOf(db, websiteId)).map((e) => ({ id: e.id, is_self: e.is_self, name: e.name, identifiers: e.identifiers, url: e.url }));
}

/** The answers a selection holds, in a query builder (the caller picks columns, order and paging). */
export function selectAnswers(db: Knex, s: Selection) {
  const q = db('rm_responses as r').where('r.website_id', s.websiteId).whereRaw('r.schedule_id is not distinct from ?', [s.scheduleId]);
  q.whereRaw('r.prompt_id = any(?::uuid[])', [s.promptIds]);
  if (s.start) q.where('r.run_at', '>=', s.start);
  if (s.end) q.where('r.run_at', '<=', s.end);
  if (s.models) q.whereIn('r.model', s.models);
  if (s.locationIds) q.whereRaw('r.location_id = any(?::uuid[])', [s.locationIds]);
  return q;
}

/** A page of answers: page_num from 0, page_size rows. */
export type Page = PageRequest;

export interface AnswerRow {
  id: string;
  website_id: string;
  prompt_id: string;
  prompt: string | null;
  model: string;
  location_id: string | null;
  persona_id: string | null;
  schedule_id: string | null;
  run_id: string | null;
  external_id: string | null;
  run_at: Date;
  text: string;
  citations: string[];
  products: Record<string, unknown>[];
  matched: StoredMatched;
  /** the export line's recorded fields: the sources, retrieved pages and search queries are read from it */
  export_json: string;
  sample_index: number;
}

/** The columns of rm_responses (as `r`, the prompt as `p`) an answer is shaped from (toAnswer). */
export const ANSWER_SELECT = [
  'r.id',
  'r.website_id',
  'r.prompt_id',
  'p.text as prompt',
  'r.model',
  'r.location_id',
  'r.persona_id',
  'r.schedule_id',
  'r.run_id',
  'r.external_id',
  'r.run_at',
  'r.text',
  'r.citations',
  'r.products',
  'r.matched',
  'r.export_json',
  'r.sample_index',
];

/** Shapes stored answers with the website's current entities (`shown`: the competitors a request selects, null = all). */
export function answerShaper(websiteId: string, entities: TrackedEntity[], shown: Set<string> | null) {
  const byId = new Map(entities.map((e) => [e.id, e]));
  return (r: AnswerRow): Answer => {
    const recorded = recordedFields(r.export_json);
    const mentions = r.matched.m.map(([entity_id, position]) => ({ entity_id, position }));
    const brand = mentions.find((m) => byId.get(m.entity_id)?.is_self);
    const competitors = mentions
      .filter((m) => !byId.get(m.entity_id)?.is_self && (!shown || shown.has(m.entity_id)))
      .map((m) => {
        const e = byId.get(m.entity_id)!;
        return { id: e.id, name: e.name, url: e.url, position: m.position };
      });
    return {
      id: r.id,
      website_id: r.website_id,
      prompt_id: r.prompt_id,
      prompt: r.prompt,
      model: r.model,
      response: r.text,
      mentioned: brand !== undefined,
      cited: r.matched.c.includes(websiteId),
      position: brand?.position ?? null,
      created_at: r.run_at.toISOString(),
      sources: recorded.sources,
      competitors,
      schedule: scheduleValue(r.schedule_id),
      location_id: r.location_id,
      persona_id: r.persona_id,
      run_id: r.run_id,
      external_id: r.external_id,
      citations: r.citations,
      products: r.products,
      retrieved: recorded.retrieved,
      search_queries: recorded.search_queries,
      sample_index: r.sample_index,
    };
  };
}

/**
 * A page of answers, newest first, each with what analysis finds in it with the website's current entities: whether
 * it mentions and cites the brand and at which position, the competitors it mentions, and its sources. Read as the
 * answers projection stored them (its one analysis per answer, done again when the website's entities change).
 */
export async function listResponses(db: Knex, s: Selection, page: Page): Promise<AnswerPage> {
  const rows: AnswerRow[] = await onePageAndMore(
    selectAnswers(db, s).leftJoin('rm_prompts as p', 'p.id', 'r.prompt_id').orderBy(newestFirst('r.run_at', 'r.id')),
    page,
  ).select(ANSWER_SELECT);
  const shape = answerShaper(s.websiteId, await trackedEntities(db, s.websiteId), s.competitorIds ? new Set(s.competitorIds) : null);
  const responses = pageRows(rows, page).map(shape);
  return { responses, ...pageInfo(rows, page) };
}

/** The external ids among `ids` the website already has answers for. */
export async function importedExternalIds(db: Knex, websiteId: string, ids: string[]): Promise<Set<string>> {
  if (!ids.length) return new Set();
  // one index probe per id: planned as a filter (the table's statistics lag behind an import), `external_id = any(…)`
  // became a scan of the website's whole history on every call
  const r = await db.raw(
    `select e from unnest(?::text[]) as e
      where (select true from rm_responses x where x.website_id = ? and x.external_id = e and x.external_id is not null limit 1)`,
    [ids, websiteId],
  );
  const rows = (r.rows as { e: string }[]).map((x) => x.e);
  return new Set(rows);
}

/** The first and last UTC day with answers for a schedule selection; nulls when there are none. */
export async function dateRange(db: Knex, websiteId: string, scheduleId: string | null): Promise<DateRange> {
  const r = await db('rm_fact_chunks')
    .where('website_id', websiteId)
    .whereRaw('? = any(schedule_keys)', [scheduleValue(scheduleId)])
    .first(db.raw('min(day)::text as start_date'), db.raw('max(day)::text as end_date'));
  return {
    start_date: (r?.start_date as string | null) ?? null,
    end_date: (r?.end_date as string | null) ?? null,
    schedule: scheduleValue(scheduleId),
  };
}

/** Each prompt's latest `perPrompt` answers (of `promptIds`) with the entities they mention, as the answers projection stored them. */
export async function latestMatched(
  db: Knex,
  websiteId: string,
  promptIds: readonly string[],
  perPrompt: number,
): Promise<{ prompt_id: string; matched: StoredMatched }[]> {
  const r = await db.raw(
    `select prompt_id, matched from (
       select prompt_id, matched, row_number() over (partition by prompt_id order by run_at desc) as n
         from rm_responses where website_id = ? and prompt_id = any(?::uuid[])
     ) r where n <= ?`,
    [websiteId, [...promptIds], perPrompt],
  );
  return r.rows;
}

/** The website's latest `limit` answers' texts, newest first. */
export async function latestAnswerTexts(db: Knex, websiteId: string, limit: number): Promise<{ id: string; text: string }[]> {
  return db('rm_responses').where('website_id', websiteId).orderBy(newestFirst('run_at', 'id')).limit(limit).select('id', 'text');
}

/** The URLs cited by the website's latest 20,000 answers, each once (5,000 at most). */
export async function recentCitedUrls(db: Knex, websiteId: string): Promise<string[]> {
  const cited = await db.raw(
    `select distinct c as url from (select citations from rm_responses where website_id = ? order by run_at desc limit 20000) r, jsonb_array_elements_text(r.citations) c limit 5000`,
    [websiteId],
  );
  return (cited.rows as { url: string }[]).map((x) => x.url);
}
