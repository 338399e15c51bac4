import type { Knex } from 'knex';
import { copyable, copyRows } from '../../src/eventstore/projection';
import { type AnswerAnalysis, analyzeProducts, type CompiledEntities } from '../../src/analysis/answer';
import { compiledEntities } from '../../src/analysis/entity-cache';
import { dayAndTime, decodeFacts, encodeFacts, type FactChunk, FactChunkBuilder, type FactDictionaries } from '../../src/analysis/facts';
import { sameEntities, type SiteEntity } from '../site-entities';
import type { StoredRetrieved } from './evidence';
import { entitiesJson, exportJson } from './export-line';
import type { Recorded } from './handlers';
import type { StoredMatched } from './schema';

/** Answers per stored part of a day's facts. */
export const PART_ROWS = 1024;

export async function nextVersion(trx: Knex.Transaction): Promise<string> {
  const r = await trx.raw(`select nextval('rm_fact_version')::text as v`);
  return r.rows[0].v as string;
}

export type TrackedEntity = SiteEntity;

/** The website's site row, locked until the transaction ends: every writer of a website's facts takes it first. */
export async function lockSite(trx: Knex.Transaction, websiteId: string): Promise<{ entities: string[] } | undefined> {
  return trx('rm_fact_sites').where('website_id', websiteId).forUpdate().first('entities');
}

export const compile = (websiteId: string, entities: TrackedEntity[]): CompiledEntities => compiledEntities(websiteId, entities);

export const storedMatched = (a: AnswerAnalysis): StoredMatched => ({ m: a.mentions.map((x) => [x.entity_id, x.position]), c: a.cited_entity_ids });

const json = JSON.stringify;
const orNull = (v: string | number | null | undefined) => (v === null || v === undefined ? 'null' : json(v));

/** An answer's row as staged for the insert, each column with its type (all but `changed`, the batch's version). */
const STAGED: readonly (readonly [string, string])[] = [
  ['id', 'uuid'],
  ['website_id', 'uuid'],
  ['prompt_id', 'uuid'],
  ['model', 'text'],
  ['location_id', 'uuid'],
  ['persona_id', 'uuid'],
  ['schedule_id', 'uuid'],
  ['run_id', 'uuid'],
  ['external_id', 'text'],
  ['run_at', 'timestamptz'],
  ['text', 'text'],
  ['citations', 'jsonb'],
  ['products', 'jsonb'],
  ['source', 'text'],
  ['provider_model', 'text'],
  ['latency_ms', 'int'],
  ['matched', 'jsonb'],
  ['sample_index', 'int'],
  ['export_json', 'text'],
  ['export_entities', 'text'],
];
const STAGED_NAMES = STAGED.map(([name]) => name);
const typed = (columns: readonly (readonly [string, string])[]) => columns.map(([name, type]) => `${name} ${type}`).join(', ');
/** Where a batch's rows are copied before the insert that skips the stored ones (one per connection, emptied at commit). */
const STAGE_SQL = `create temp table if not exists rm_responses_in (${typed(STAGED)}) on commit delete rows`;
/** The JSON path's record: the export line arrives as a JSON object (`export`), sliced back to its text by Postgres. */
const JSON_RECORD = typed(STAGED.map((c) => (c[0] === 'export_json' ? ['export', 'json'] : c)));
const JSON_SELECT = STAGED_NAMES.map((n) => (n === 'export_json' ? `',' || substr(export::text, 2, length(export::text) - 2)` : n)).join(', ');

/** One answer's row: its values, each part's JSON written once (the citations' and products' serve the export line too). */
interface Row {
  d: Recorded['data'];
  citations: string;
  products: string;
  matched: string;
  /** the export line: its fields, each after a comma (the export appends them to the fields it writes first) */
  line: string;
  entities: string;
}

const stagedValues = ({ d, citations, products, matched, line, entities }: Row): (string | null)[] => [
  d.response_id,
  d.website_id,
  d.prompt_id,
  d.model,
  d.location_id ?? null,
  d.persona_id ?? null,
  d.schedule_id ?? null,
  d.run_id ?? null,
  d.external_id ?? null,
  d.run_at,
  d.text,
  citations,
  products,
  d.source,
  d.provider_model ?? null,
  d.latency_ms === null || d.latency_ms === undefined ? null : String(Math.round(d.latency_ms)),
  matched,
  String(d.sample_index ?? 0),
  line,
  entities,
];

/** The same row as JSON, for json_to_recordset where there is no COPY (PGlite): the export line goes in as a JSON object. */
const jsonRow = ({ d, citations, products, matched, line, entities }: Row) =>
  `{"id":${json(d.response_id)},"website_id":${json(d.website_id)},"prompt_id":${json(d.prompt_id)},"model":${json(d.model)},"location_id":${orNull(d.location_id)},"persona_id":${orNull(d.persona_id)},"schedule_id":${orNull(d.schedule_id)},"run_id":${orNull(d.run_id)},"external_id":${orNull(d.external_id)},"run_at":${json(d.run_at)},"text":${json(d.text)},"citations":${citations},"products":${products},"source":${json(d.source)},"provider_model":${orNull(d.provider_model)},"latency_ms":${orNull(d.latency_ms === null || d.latency_ms === undefined ? null : Math.round(d.latency_ms))},"matched":${matched},"sample_index":${d.sample_index ?? 0},"export":{${line.slice(1)}},"export_entities":${json(entities)}}`;

/**
 * Inserts the answers not stored yet (a replayed event is skipped), each with its analysis; returns those it inserted.
 * On a Postgres server the rows are copied (COPY's text format, far less for Postgres to parse than one JSON document
 * of every row) into a temporary table, then inserted from it; on PGlite (no COPY) they go in as JSON.
 */
export async function insertResponses(
  trx: Knex.Transaction,
  recorded: Recorded[],
  analyses: Map<string, AnswerAnalysis>,
  retrieved: Map<string, StoredRetrieved[]>,
  version: string,
  tracked: Map<string, TrackedEntity[]>,
): Promise<Recorded[]> {
  if (!recorded.length) return [];
  const entitiesOf = new Map<string, ReturnType<typeof entitiesJson>>();
  const rows: Row[] = recorded.map((e) => {
    const d = e.data;
    const analysis = analyses.get(d.response_id)!;
    const matched = storedMatched(analysis);
    let entities = entitiesOf.get(d.website_id);
    if (!entities) entitiesOf.set(d.website_id, (entities = entitiesJson(d.website_id, tracked.get(d.website_id) ?? [])));
    const citations = json(d.citations);
    const products = json(d.products);
    const line = exportJson(d, analysis, retrieved.get(d.response_id) ?? [], citations, products);
    return { d, citations, products, matched: json(matched), line, entities: entities(matched) };
  });
  const into = `insert into rm_responses (${STAGED_NAMES.join(', ')}, changed)`;
  let r: { rows: { id: string }[] };
  if (await copyable(trx)) {
    await trx.raw(STAGE_SQL);
    await copyRows(trx, 'rm_responses_in', STAGED_NAMES, rows.map(stagedValues));
    r = await trx.raw(`${into} select ${STAGED_NAMES.join(', ')}, ?::bigint from rm_responses_in on conflict (id) do nothing returning id`, [
      version,
    ]);
  } else {
    r = await trx.raw(
      `${into} select ${JSON_SELECT}, ?::bigint from json_to_recordset(?::json) as x(${JSON_RECORD}) on conflict (id) do nothing returning id`,
      [version, `[${rows.map(jsonRow).join(',')}]`],
    );
  }
  const inserted = new Set(r.rows.map((x) => x.id));
  return recorded.filter((e) => inserted.delete(e.data.response_id));
}

export interface AnswerFacts {
  run_at: string | Date;
  prompt_id: string;
  model: string;
  location_id: string | null;
  schedule_id: string | null;
  text: string;
  citations: readonly string[];
}

/** One answer's metric facts from its analysis: its mentions and citations by entity slot. */
export function factRow(analysis: AnswerAnalysis, slots: Map<string, number>, a: Omit<AnswerFacts, 'text' | 'citations'>) {
  const { t } = dayAndTime(a.run_at instanceof Date ? a.run_at : new Date(a.run_at));
  return {
    t,
    prompt_id: a.prompt_id,
    location_id: a.location_id,
    schedule_id: a.schedule_id,
    model: a.model,
    mentions: analysis.mentions.map((m) => [slots.get(m.entity_id)!, m.position] as const),
    cited: analysis.cited_entity_ids.map((id) => slots.get(id)!),
  };
}

export const slotsOf = (entities: TrackedEntity[]) => new Map(entities.map((e, i) => [e.id, i]));

const scheduleKeys = (c: FactDictionaries) => [...new Set(c.schedules.map((s) => s ?? 'default'))];

interface PartOut {
  day: string;
  part: number;
  chunk: FactChunk;
}

export async function writeParts(trx: Knex.Transaction, websiteId: string, parts: PartOut[], version: string): Promise<void> {
  for (let i = 0; i < parts.length; i += 50) {
    const some = parts.slice(i, i + 50);
    const values: unknown[] = [];
    for (const { day, part, chunk } of some) {
      const { meta, data } = encodeFacts(chunk);
      values.push(websiteId, day, part, version, chunk.n, scheduleKeys(chunk), JSON.stringify(meta), data);
    }
    await trx.raw(
      `insert into rm_fact_chunks (website_id, day, part, version, n, schedule_keys, meta, data)
       values ${some.map(() => '(?, ?, ?, ?, ?, ?, ?, ?)').join(', ')}
       on conflict (website_id, day, part) do update set version = excluded.version, n = excluded.n, schedule_keys = excluded.schedule_keys, meta = excluded.meta, data = excluded.data`,
      values as Knex.RawBinding[],
    );
  }
}

/** Rows of a day as parts of at most PART_ROWS, numbered from `first`; `from` is the stored part being continued. */
export function intoParts(ids: string[], day: string, first: number, from: FactChunk | undefined, rows: ReturnType<typeof factRow>[]): PartOut[] {
  const out: PartOut[] = [];
  let part = first;
  let b = new FactChunkBuilder(ids, from);
  for (const r of rows) {
    if (b.size >= PART_ROWS) {
      out.push({ day, part, chunk: b.build() });
      part++;
      b = new FactChunkBuilder(ids);
    }
    b.add(r);
  }
  if (b.size > 0) out.push({ day, part, chunk: b.build() });
  return out;
}

/**
 * Appends new answers to their days' last parts (new parts once full). A website whose stored facts were laid out
 * for other entities (only possible if a re-derivation was lost) is returned, to be re-derived instead.
 */
export async function appendFacts(
  trx: Knex.Transaction,
  fresh: Recorded[],
  tracked: Map<string, TrackedEntity[]>,
  version: string,
  analyses: Map<string, AnswerAnalysis>,
): Promise<string[]> {
  const groups = new Map<string, Map<string, Recorded[]>>();
  for (const e of fresh) {
    const { day } = dayAndTime(new Date(e.data.run_at));
    let byDay = groups.get(e.data.website_id);
    if (!byDay) groups.set(e.data.website_id, (byDay = new Map()));
    let list = byDay.get(day);
    if (!list) byDay.set(day, (list = []));
    list.push(e);
  }
  const mismatched: string[] = [];
  for (const [websiteId, byDay] of groups) {
    const entities = tracked.get(websiteId) ?? [];
    const ids = entities.map((e) => e.id);
    // a site row laid out for other entities (or none): the whole history is derived again instead
    const site = await lockSite(trx, websiteId);
    if (!site || !sameEntities(site.entities, ids)) {
      mismatched.push(websiteId);
      continue;
    }
    const slots = slotsOf(entities);
    // each day's last part: the one new answers continue
    const last: { day: string; part: number; meta: FactDictionaries & { n: number }; data: Buffer }[] = await trx
      .raw(
        `select distinct on (day) day::text as day, part, meta, data from rm_fact_chunks
        where website_id = ? and day = any(?::date[]) order by day, part desc`,
        [websiteId, [...byDay.keys()]],
      )
      .then((r: { rows: never[] }) => r.rows);
    const lastOf = new Map(last.map((r) => [r.day, r]));
    const out: PartOut[] = [];
    let ok = true;
    for (const [day, list] of byDay) {
      const stored = lastOf.get(day);
      const chunk = stored ? decodeFacts(stored.meta, stored.data) : undefined;
      if (chunk && !sameEntities(chunk.entities, ids)) {
        ok = false;
        break;
      }
      const rows = list.map((e) => factRow(analyses.get(e.data.response_id)!, slots, e.data));
      if (chunk && chunk.n >= PART_ROWS) out.push(...intoParts(ids, day, stored!.part + 1, undefined, rows));
      else out.push(...intoParts(ids, day, stored?.part ?? 0, chunk, rows));
    }
    if (!ok) {
      mismatched.push(websiteId);
      continue;
    }
    await writeParts(trx, websiteId, out, version);
    await trx('rm_fact_sites').where('website_id', websiteId).update({ version });
  }
  return mismatched;
}

export function productRows(
  compiled: CompiledEntities,
  e: Pick<Recorded['data'], 'response_id' | 'website_id' | 'run_at' | 'prompt_id' | 'model' | 'location_id' | 'schedule_id' | 'products'>,
) {
  return analyzeProducts(compiled, e.products).map((p, idx) => ({
    response_id: e.response_id,
    idx,
    website_id: e.website_id,
    run_at: e.run_at,
    prompt_id: e.prompt_id,
    model: e.model,
    location_id: e.location_id,
    schedule_id: e.schedule_id,
    position: p.position,
    name: p.name,
    brand: p.brand,
    merchant: p.merchant,
    merchant_key: p.merchant_key,
    price: p.price,
    currency: p.currency,
    url: p.url,
    normalized_url: p.normalized_url,
    entity_id: p.entity_id,
    matched_by: p.matched_by,
    is_own: p.is_own,
    product_key: productKey(p.name, p.brand),
  }));
}

/** What groups cards into one product: name and brand, trimmed, whitespace runs collapsed, lower case. */
const keyPart = (s: string | null) => (s ?? '').normalize('NFC').trim().replace(/\s+/g, ' ').toLowerCase();
const productKey = (name: string, brand: string | null) => `${keyPart(name)}\u001f${keyPart(brand)}`;

const PRODUCT_COLUMNS =
  'response_id uuid, idx int, website_id uuid, run_at timestamptz, prompt_id uuid, model text, location_id uuid, schedule_id uuid, position int, name text, brand text, merchant text, merchant_key text, price double precision, currency text, url text, normalized_url text, entity_id uuid, matched_by text, is_own boolean, product_key text';

export async function insertProducts(trx: Knex.Transaction, withProducts: Recorded[], tracked: Map<string, TrackedEntity[]>): Promise<void> {
  const rows = withProducts.flatMap((e) => productRows(compile(e.data.website_id, tracked.get(e.data.website_id) ?? []), e.data));
  for (let i = 0; i < rows.length; i += 2000) {
    await trx.raw(`insert into rm_response_products select * from json_to_recordset(?::json) as x(${PRODUCT_COLUMNS}) on conflict do nothing`, [
      JSON.stringify(rows.slice(i, i + 2000)),
    ]);
  }
}
