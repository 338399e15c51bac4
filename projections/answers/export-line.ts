import type { AnswerAnalysis } from '../../src/analysis/answer';
import { scheduleValue } from '../../src/domain/filters';
import type { StoredRetrieved } from './evidence';
import { queriesOf } from './evidence';
import type { Recorded } from './handlers';
import type { StoredMatched } from './schema';
import type { TrackedEntity } from './writers';

/**
 * An answer's export line, kept ready (CONTRACT.md, Answer evidence: the export's record is the answers listing's item).
 * `export_json` holds the fields fixed when the answer is recorded, from `,"model"` to the retrieved pages;
 * `export_entities` those the website's entities decide (mentioned, cited, position, competitors), rewritten by a
 * re-derivation. The id, prompt and response text are joined when read (EXPORT_LINE_SQL): the prompt's text can change,
 * and text is not duplicated.
 */
const s = JSON.stringify;
const uuid = (v: string | null) => (v === null ? 'null' : s(v.toLowerCase()));

/** A source's JSON in the listing's shape, once per source: the analysis shares a URL's frozen source between answers. */
const sourceJsons = new WeakMap<AnswerAnalysis['sources'][number], string>();
function sourceJson(x: AnswerAnalysis['sources'][number]): string {
  let j = sourceJsons.get(x);
  if (j === undefined) sourceJsons.set(x, (j = s({ url: x.url, root_domain: x.root_domain, normalized_url: x.normalized_url, suffix: x.suffix })));
  return j;
}

/**
 * The recorded fields of an answer, in the listing's shapes; the listing reads its sources, retrieved pages and search
 * queries from here (recordedFields). `citations` and `products`: their JSON, when the caller has it already.
 */
export function exportJson(
  d: Recorded['data'],
  a: AnswerAnalysis,
  retrieved: StoredRetrieved[],
  citations = s(d.citations),
  products = s(d.products),
): string {
  const sources = `[${a.sources.map(sourceJson).join(',')}]`;
  const pages = retrieved.map(([url, normalized_url, cited]) => ({ url, normalized_url, cited }));
  return `,"model":${s(d.model)},"created_at":${s(new Date(d.run_at).toISOString())},"schedule":${s(scheduleValue(d.schedule_id?.toLowerCase() ?? null))},"location_id":${uuid(d.location_id)},"persona_id":${uuid(d.persona_id)},"run_id":${uuid(d.run_id)},"external_id":${d.external_id === null ? 'null' : s(d.external_id)},"citations":${citations},"products":${products},"search_queries":${s(queriesOf(d.search_queries))},"sample_index":${d.sample_index ?? 0},"sources":${sources},"retrieved":${s(pages)}`;
}

/** What the listing shows of an answer that only its export line stores (the analysis' sources, the retrieved pages, the queries). */
export interface RecordedFields {
  sources: { url: string; root_domain: string; normalized_url: string; suffix: string }[];
  retrieved: { url: string; normalized_url: string; cited: boolean }[];
  search_queries: string[];
}

/** An export line's recorded fields (exportJson) read back; a line without them (none stored) has none. */
export function recordedFields(exportJson: string): RecordedFields {
  const f = exportJson ? (JSON.parse(`{${exportJson.slice(1)}}`) as Partial<RecordedFields>) : {};
  return { sources: f.sources ?? [], retrieved: f.retrieved ?? [], search_queries: f.search_queries ?? [] };
}

/** The entities' part of a website's export lines (the brand and competitors as analyzed, brand first). */
export function entitiesJson(websiteId: string, entities: readonly TrackedEntity[]): (m: StoredMatched) => string {
  const self = new Set(entities.filter((e) => e.is_self).map((e) => e.id));
  const competitor = new Map(
    entities.filter((e) => !e.is_self).map((e) => [e.id, `{"id":${s(e.id)},"name":${s(e.name)},"url":${s(e.url)},"position":`]),
  );
  return (m) => {
    let position: number | null = null;
    let competitors = '';
    for (const [id, at] of m.m) {
      if (self.has(id)) position = at;
      else {
        const c = competitor.get(id);
        if (c) competitors += `${competitors ? ',' : ''}${c}${at}}`;
      }
    }
    return `,"mentioned":${position !== null},"cited":${m.c.includes(websiteId)},"position":${position},"competitors":[${competitors}]`;
  };
}

/**
 * An export line (with its newline) in SQL over rm_responses `r` and rm_prompts `p` (left joined): one concat, so
 * Postgres copies the ready text once.
 */
export const EXPORT_LINE_SQL = `concat('{"id":"', r.id, '","website_id":"', r.website_id, '","prompt_id":"', r.prompt_id, '","prompt":',
  coalesce(to_json(p.text)::text, 'null'), ',"response":', to_json(r.text)::text, r.export_json, r.export_entities, e'}\\n')`;
