import type { Knex } from 'knex';
import { type AnswerAnalysis, analyzeAnswer, analyzeProducts, type CompiledEntities } from '../src/analysis/answer';
import { compiledEntities } from '../src/analysis/entity-cache';
import { dayAndTime, decodeFacts, encodeFacts, type FactChunk, FactChunkBuilder, type FactDictionaries } from '../src/analysis/facts';
import type { EventOf } from '../src/domain/events';
import type { TypedEvent } from '../src/eventstore/port';
import { dispatch, type EventHandlers, handledTypes, type Projection, migrateSql } from '../src/eventstore/projection';
import { preferLz4Sql } from '../src/db';
import { declareAppendsNone } from '../src/eventstore/horizon';
import { ANSWER_COLUMNS, ASKED_COLUMNS } from './answer-columns';
import { outOfLine, sameEntities, type SiteEntity, siteEntities, siteEntityIdsSql } from './site-entities';

type Recorded = TypedEvent<EventOf<'ResponseRecorded'>>;

/** Answers read per round trip when a website's history is re-derived. */
const REDERIVE_PAGE = 5000;
/** Answers re-analyzed between two turns of the event loop (a few milliseconds). */
const REDERIVE_SLICE = 250;
/** Answers per stored part of a day's facts. */
export const PART_ROWS = 1024;

/** What the handlers of one batch share: the websites to re-derive, and the answers recorded (written together). */
interface AnswersBatch {
  trx: Knex.Transaction;
  dirty: Set<string>;
  recorded: Recorded[];
}

const handlers: EventHandlers<AnswersBatch> = {
  async WebsiteCreated(e, { trx, dirty }) {
    await trx.raw(
      `insert into rm_analysis_entities (website_id, entity_id, slot, is_self, name, identifiers, url) values (?, ?, 0, true, ?, '{}', ?) on conflict do nothing`,
      [e.data.website_id, e.data.website_id, e.data.name, e.data.url],
    );
    // the site row, for the website's list as it stands; a provisioned website's competitors (its catalogue stream)
    // may have been applied before it, leaving a row (and facts) laid out without the brand: those are derived again
    // for the list with the brand
    const r = await trx.raw(
      `insert into rm_fact_sites (website_id, version, generation, entities) select ?, 0, 0, ${siteEntityIdsSql('?::uuid')}
       on conflict (website_id) do nothing returning website_id`,
      [e.data.website_id, e.data.website_id],
    );
    if (!r.rows.length) dirty.add(e.data.website_id);
  },
  async CompetitorAdded(e, { trx, dirty }) {
    const w = websiteOf(e);
    await trx.raw(
      `insert into rm_analysis_entities (website_id, entity_id, slot, is_self, name, identifiers, url)
       select ?, ?, coalesce(max(slot), 0) + 1, false, ?, ?, ? from rm_analysis_entities where website_id = ?
       on conflict do nothing`,
      [w, e.data.competitor_id, e.data.name, e.data.identifiers, e.data.url, w],
    );
    dirty.add(w);
  },
  async CompetitorRenamed(e, { trx, dirty }) {
    await trx('rm_analysis_entities')
      .where({ website_id: websiteOf(e), entity_id: e.data.competitor_id })
      .update({ name: e.data.name });
    dirty.add(websiteOf(e));
  },
  async CompetitorIdentifiersChanged(e, { trx, dirty }) {
    await trx('rm_analysis_entities')
      .where({ website_id: websiteOf(e), entity_id: e.data.competitor_id })
      .update({ identifiers: e.data.identifiers });
    dirty.add(websiteOf(e));
  },
  async CompetitorRemoved(e, { trx, dirty }) {
    await trx('rm_analysis_entities')
      .where({ website_id: websiteOf(e), entity_id: e.data.competitor_id })
      .update({ removed: true });
    dirty.add(websiteOf(e));
  },
  ResponseRecorded(e, { recorded }) {
    recorded.push(e);
  },
};

/**
 * The answers and what analysis derives from them (CONTRACT.md, Analysis):
 * - rm_responses: every answer as recorded (text, citations, product cards), the listing's source;
 * - rm_fact_chunks: per website and UTC day, in parts of at most PART_ROWS answers (a new answer rewrites one part,
 *   never a whole day), the metric facts (src/analysis/facts.ts): positions and citations of each tracked entity in
 *   each answer, with the answer's prompt, model, location and schedule;
 * - rm_fact_sites: per website, the tracked entities the chunks are laid out for, and a version that moves with
 *   every write (readers reload what changed) and a generation that moves with every re-derivation;
 * - rm_response_products: product cards with the entity each belongs to;
 * - rm_analysis_entities: the brand and competitors analysis matches, kept from the events themselves.
 * A change of a website's entities (a competitor added, renamed, re-identified or removed) re-derives its whole
 * history in the same transaction: readers see the old derivation or the new one, never a mix.
 */
export const answersProjection: Projection = {
  name: 'answers',
  version: 3,
  tables: [
    'rm_responses',
    'rm_fact_chunks',
    'rm_fact_sites',
    'rm_response_products',
    'rm_analysis_entities',
    'rm_content_answers',
    'rm_content_cites',
  ],
  handles: handledTypes(handlers),
  migrate: migrateSql(`
      create table if not exists rm_analysis_entities (
        website_id uuid not null,
        entity_id uuid not null,
        slot int not null,
        is_self boolean not null,
        name text not null,
        identifiers text[] not null,
        url text,
        removed boolean not null default false,
        primary key (website_id, entity_id)
      );
      create table if not exists rm_responses (
        id uuid primary key,
        ${ASKED_COLUMNS},
        run_id uuid,
        external_id text,
        run_at timestamptz not null,
        text text not null,
        citations jsonb not null,
        products jsonb not null,
        source text not null,
        provider_model text,
        latency_ms int,
        sources jsonb not null default '[]',
        matched jsonb not null default '{"m": [], "c": []}'
      );
      ${preferLz4Sql('rm_responses', ['text', 'citations', 'products'])}
      create index if not exists rm_responses_site_time on rm_responses (website_id, run_at, id);
      create index if not exists rm_responses_external on rm_responses (website_id, external_id) where external_id is not null;
      create table if not exists rm_fact_chunks (
        website_id uuid not null,
        day date not null,
        part int not null,
        version bigint not null,
        n int not null,
        schedule_keys text[] not null,
        meta jsonb not null,
        data bytea not null,
        primary key (website_id, day, part)
      );
      -- written whole on every change: compressing it each time would cost more than the bytes saved
      alter table rm_fact_chunks alter column data set storage external;
      create index if not exists rm_fact_chunks_version on rm_fact_chunks (website_id, version);
      create table if not exists rm_fact_sites (
        website_id uuid primary key,
        version bigint not null,
        generation bigint not null,
        entities jsonb not null
      );
      create sequence if not exists rm_fact_version;
      create table if not exists rm_response_products (
        response_id uuid not null,
        idx int not null,
        website_id uuid not null,
        ${ANSWER_COLUMNS},
        position int not null,
        name text not null,
        brand text,
        merchant text,
        merchant_key text,
        price double precision,
        currency text,
        url text,
        normalized_url text,
        entity_id uuid,
        matched_by text,
        is_own boolean not null,
        product_key text not null,
        primary key (response_id, idx)
      );
      create index if not exists rm_response_products_site_time on rm_response_products (website_id, run_at);
      create table if not exists rm_content_answers (
        response_id uuid primary key,
        website_id uuid not null,
        ${ANSWER_COLUMNS},
        mentioned boolean not null
      );
      -- covering: a count of a date range is an index-only scan
      create index if not exists rm_content_answers_site_time on rm_content_answers (website_id, run_at) include (prompt_id, model, location_id, schedule_id, mentioned);
      create table if not exists rm_content_cites (
        response_id uuid not null,
        website_id uuid not null,
        normalized_url text not null,
        ${ANSWER_COLUMNS},
        mentioned boolean not null,
        primary key (response_id, normalized_url)
      );
      create index if not exists rm_content_cites_url on rm_content_cites (website_id, normalized_url, run_at) include (prompt_id, model, location_id, schedule_id, mentioned);`),
  async apply(trx, events) {
    const dirty = new Set<string>();
    const recorded: Recorded[] = [];
    const batch: AnswersBatch = { trx, dirty, recorded };
    for (const e of events) {
      const pending = dispatch(handlers, e, batch);
      if (pending) await pending;
    }
    // each answer analyzed once, here: its facts, its stored analysis (the answers listing) and the content hub's rows
    // all come from this one analysis (a website re-derived below is analyzed again with its new entities)
    const tracked = await siteEntities(trx, [...new Set(recorded.map((e) => e.data.website_id))]);
    const analyses = new Map<string, AnswerAnalysis>();
    for (const e of recorded)
      analyses.set(e.data.response_id, analyzeAnswer(compile(e.data.website_id, tracked.get(e.data.website_id) ?? []), e.data));
    const fresh = await insertResponses(trx, recorded, analyses);
    const version = await nextVersion(trx);
    if (fresh.length) {
      await insertContentRows(trx, fresh, analyses, tracked);
      const appendable = fresh.filter((e) => !dirty.has(e.data.website_id));
      const mismatched = await appendFacts(trx, appendable, tracked, version, analyses);
      for (const w of mismatched) dirty.add(w);
      await insertProducts(
        trx,
        fresh.filter((e) => e.data.products.length > 0),
        tracked,
      );
    }
    for (const w of dirty) await rederive(trx, w, version);
  },
};

const websiteOf = (e: TypedEvent): string =>
  e.streamId.startsWith('catalog-') ? e.streamId.slice('catalog-'.length) : (e.metadata.website_id ?? '');

async function nextVersion(trx: Knex.Transaction): Promise<string> {
  const r = await trx.raw(`select nextval('rm_fact_version')::text as v`);
  return r.rows[0].v as string;
}

type TrackedEntity = SiteEntity;

/** The website's site row, locked until the transaction ends: every writer of a website's facts takes it first. */
async function lockSite(trx: Knex.Transaction, websiteId: string): Promise<{ entities: string[] } | undefined> {
  return trx('rm_fact_sites').where('website_id', websiteId).forUpdate().first('entities');
}

const compile = (websiteId: string, entities: TrackedEntity[]): CompiledEntities => compiledEntities(websiteId, entities);

/** An answer's sources as stored (rm_responses.sources): [url, root_domain, normalized_url, suffix] each, in order. */
export type StoredSource = [string, string, string, string];
/** An answer's entity matches as stored (rm_responses.matched): mentions [entity_id, position] in order, cited entity ids. */
export interface StoredMatched {
  m: [string, number][];
  c: string[];
}

const storedSources = (a: AnswerAnalysis): StoredSource[] => a.sources.map((x) => [x.url, x.root_domain, x.normalized_url, x.suffix]);
const storedMatched = (a: AnswerAnalysis): StoredMatched => ({ m: a.mentions.map((x) => [x.entity_id, x.position]), c: a.cited_entity_ids });

/** Whether an analysis mentions the website's brand (its is_self entity): the answers listing's `mentioned`. */
const brandMentioned = (a: AnswerAnalysis, brandId: string | undefined) => brandId !== undefined && a.mentions.some((m) => m.entity_id === brandId);
const brandOf = (entities: readonly TrackedEntity[] | undefined) => entities?.find((e) => e.is_self)?.id;

/** Inserts the answers not stored yet (a replayed event is skipped), each with its analysis; returns those it inserted. */
async function insertResponses(trx: Knex.Transaction, recorded: Recorded[], analyses: Map<string, AnswerAnalysis>): Promise<Recorded[]> {
  if (!recorded.length) return [];
  const rows = recorded.map((e) => {
    const d = e.data;
    return {
      id: d.response_id,
      website_id: d.website_id,
      prompt_id: d.prompt_id,
      model: d.model,
      location_id: d.location_id,
      persona_id: d.persona_id,
      schedule_id: d.schedule_id,
      run_id: d.run_id,
      external_id: d.external_id,
      run_at: d.run_at,
      text: d.text,
      citations: d.citations,
      products: d.products,
      source: d.source,
      provider_model: d.provider_model,
      latency_ms: d.latency_ms === null ? null : Math.round(d.latency_ms),
      sources: storedSources(analyses.get(d.response_id)!),
      matched: storedMatched(analyses.get(d.response_id)!),
    };
  });
  const r = await trx.raw(
    `insert into rm_responses (id, website_id, prompt_id, model, location_id, persona_id, schedule_id, run_id, external_id, run_at, text, citations, products, source, provider_model, latency_ms, sources, matched)
     select id, website_id, prompt_id, model, location_id, persona_id, schedule_id, run_id, external_id, run_at, text, citations, products, source, provider_model, latency_ms, sources, matched
       from json_to_recordset(?::json) as x(id uuid, website_id uuid, prompt_id uuid, model text, location_id uuid, persona_id uuid, schedule_id uuid,
         run_id uuid, external_id text, run_at timestamptz, text text, citations jsonb, products jsonb, source text, provider_model text, latency_ms int,
         sources jsonb, matched jsonb)
     on conflict (id) do nothing
     returning id`,
    [JSON.stringify(rows)],
  );
  const inserted = new Set((r.rows as { id: string }[]).map((x) => x.id));
  return recorded.filter((e) => inserted.delete(e.data.response_id));
}

/**
 * The content hub's rows of new answers (queries/content): per answer what its figures select on and whether it
 * mentions the brand (rm_content_answers), and per cited normalized URL (engine citations and URLs in the text, as
 * analysis normalizes them) one row (rm_content_cites): the citation join by URL. `mentioned` is the answers
 * listing's brand mention (the same analysis), kept in line by every re-derivation.
 */
async function insertContentRows(
  trx: Knex.Transaction,
  fresh: Recorded[],
  analyses: Map<string, AnswerAnalysis>,
  tracked: Map<string, TrackedEntity[]>,
): Promise<void> {
  const answers: unknown[][] = [[], [], [], [], [], [], [], []];
  const cites: unknown[][] = [[], [], [], [], [], [], [], [], []];
  for (const e of fresh) {
    const d = e.data;
    const a = analyses.get(d.response_id)!;
    const mentioned = brandMentioned(a, brandOf(tracked.get(d.website_id)));
    const row = [d.response_id, d.website_id, d.run_at, d.prompt_id, d.model, d.location_id, d.schedule_id, mentioned];
    for (let i = 0; i < row.length; i++) answers[i].push(row[i]);
    for (const s of a.sources) {
      const c = [d.response_id, d.website_id, s.normalized_url, d.run_at, d.prompt_id, d.model, d.location_id, d.schedule_id, mentioned];
      for (let i = 0; i < c.length; i++) cites[i].push(c[i]);
    }
  }
  await trx.raw(
    `insert into rm_content_answers (response_id, website_id, run_at, prompt_id, model, location_id, schedule_id, mentioned)
     select * from unnest(?::uuid[], ?::uuid[], ?::timestamptz[], ?::uuid[], ?::text[], ?::uuid[], ?::uuid[], ?::boolean[])
     on conflict (response_id) do nothing`,
    answers as unknown as readonly Knex.RawBinding[],
  );
  if (cites[0].length) {
    await trx.raw(
      `insert into rm_content_cites (response_id, website_id, normalized_url, run_at, prompt_id, model, location_id, schedule_id, mentioned)
       select * from unnest(?::uuid[], ?::uuid[], ?::text[], ?::timestamptz[], ?::uuid[], ?::text[], ?::uuid[], ?::uuid[], ?::boolean[])
       on conflict (response_id, normalized_url) do nothing`,
      cites as unknown as readonly Knex.RawBinding[],
    );
  }
}

interface AnswerFacts {
  run_at: string | Date;
  prompt_id: string;
  model: string;
  location_id: string | null;
  schedule_id: string | null;
  text: string;
  citations: readonly string[];
}

/** One answer's metric facts from its analysis: its mentions and citations by entity slot. */
function factRow(analysis: AnswerAnalysis, slots: Map<string, number>, a: Omit<AnswerFacts, 'text' | 'citations'>) {
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

const slotsOf = (entities: TrackedEntity[]) => new Map(entities.map((e, i) => [e.id, i]));

const scheduleKeys = (c: FactDictionaries) => [...new Set(c.schedules.map((s) => s ?? 'default'))];

interface PartOut {
  day: string;
  part: number;
  chunk: FactChunk;
}

async function writeParts(trx: Knex.Transaction, websiteId: string, parts: PartOut[], version: string): Promise<void> {
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
function intoParts(ids: string[], day: string, first: number, from: FactChunk | undefined, rows: ReturnType<typeof factRow>[]): PartOut[] {
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
async function appendFacts(
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

function productRows(
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

async function insertProducts(trx: Knex.Transaction, withProducts: Recorded[], tracked: Map<string, TrackedEntity[]>): Promise<void> {
  const rows = withProducts.flatMap((e) => productRows(compile(e.data.website_id, tracked.get(e.data.website_id) ?? []), e.data));
  for (let i = 0; i < rows.length; i += 2000) {
    await trx.raw(`insert into rm_response_products select * from json_to_recordset(?::json) as x(${PRODUCT_COLUMNS}) on conflict do nothing`, [
      JSON.stringify(rows.slice(i, i + 2000)),
    ]);
  }
}

/**
 * Stores the analyses a re-derivation changed: the answers' entity matches, and the content hub's `mentioned` of the
 * answers whose brand mention changed.
 */
async function writeRederived(
  trx: Knex.Transaction,
  matched: { id: string; matched: StoredMatched }[],
  mentioned: { id: string; mentioned: boolean }[],
) {
  if (matched.length) {
    await trx.raw(`update rm_responses r set matched = x.matched from json_to_recordset(?::json) as x(id uuid, matched jsonb) where r.id = x.id`, [
      JSON.stringify(matched),
    ]);
  }
  if (mentioned.length) {
    const ids = mentioned.map((x) => x.id);
    const values = mentioned.map((x) => x.mentioned);
    for (const table of ['rm_content_answers', 'rm_content_cites']) {
      await trx.raw(
        `update ${table} t set mentioned = x.mentioned from unnest(?::uuid[], ?::boolean[]) as x(id, mentioned) where t.response_id = x.id`,
        [ids, values],
      );
    }
  }
}

/**
 * Re-analyzes a website's whole history with its current entities: every chunk, every product card, the stored
 * entity matches of each answer and the content hub's brand mention.
 */
export async function rederive(trx: Knex.Transaction, websiteId: string, version: string): Promise<void> {
  await lockSite(trx, websiteId);
  const entities = (await siteEntities(trx, [websiteId])).get(websiteId)!;
  const ids = entities.map((e) => e.id);
  const compiled = compile(websiteId, entities);
  const slots = slotsOf(entities);
  await trx('rm_fact_chunks').where('website_id', websiteId).delete();
  const brand = brandOf(entities);
  let byDay = new Map<string, ReturnType<typeof factRow>[]>();
  type Page = Array<AnswerFacts & { id: string; run_at: Date; matched: StoredMatched }>;
  const fetchPage = (after: { run_at: Date; id: string } | null): Promise<Page> => {
    const q = trx('rm_responses')
      .where('website_id', websiteId)
      .orderBy([{ column: 'run_at' }, { column: 'id' }])
      .limit(REDERIVE_PAGE)
      .select('id', 'run_at', 'prompt_id', 'model', 'location_id', 'schedule_id', 'text', 'citations', 'matched');
    if (after) q.andWhereRaw('(run_at, id) > (?, ?)', [after.run_at, after.id]);
    return q;
  };
  const flush = async (days: [string, ReturnType<typeof factRow>[]][]) =>
    writeParts(
      trx,
      websiteId,
      days.flatMap(([day, list]) => intoParts(ids, day, 0, undefined, list)),
      version,
    );
  // the next page is asked for before this one is analyzed: Postgres reads while node analyzes
  let pending: Promise<Page> | null = fetchPage(null);
  while (pending) {
    const page: Page = await pending;
    const last = page[page.length - 1];
    pending = page.length === REDERIVE_PAGE ? fetchPage({ run_at: last.run_at, id: last.id }) : null;
    const changed: { id: string; matched: StoredMatched }[] = [];
    const mentionChanged: { id: string; mentioned: boolean }[] = [];
    for (let i = 0; i < page.length; i++) {
      // the server shares this process: a whole page analyzed at once kept its requests waiting for ~150 ms
      if (i > 0 && i % REDERIVE_SLICE === 0) await new Promise((r) => setImmediate(r));
      const a = page[i];
      const { day } = dayAndTime(a.run_at);
      let list = byDay.get(day);
      if (!list) byDay.set(day, (list = []));
      const analysis = analyzeAnswer(compiled, a);
      list.push(factRow(analysis, slots, a));
      const matched = storedMatched(analysis);
      // compared part by part: jsonb gives its keys back in its own order
      if (JSON.stringify(matched.m) !== JSON.stringify(a.matched.m) || JSON.stringify(matched.c) !== JSON.stringify(a.matched.c)) {
        changed.push({ id: a.id, matched });
        const mentioned = brandMentioned(analysis, brand);
        if (mentioned !== a.matched.m.some(([id]) => id === brand)) mentionChanged.push({ id: a.id, mentioned });
      }
    }
    await writeRederived(trx, changed, mentionChanged);
    if (!last) break;
    // answers come in time order: every day before the last one seen is complete
    const lastDay = dayAndTime(last.run_at).day;
    const done = [...byDay].filter(([day]) => day !== lastDay);
    if (done.length) {
      await flush(done);
      byDay = new Map([...byDay].filter(([day]) => day === lastDay));
    }
  }
  await flush([...byDay]);

  const products = await trx('rm_responses')
    .where('website_id', websiteId)
    .whereIn('id', trx('rm_response_products').where('website_id', websiteId).distinct('response_id'))
    .select('id as response_id', 'products', 'run_at', 'prompt_id', 'model', 'location_id', 'schedule_id');
  const rows = products.flatMap(
    (p: {
      response_id: string;
      products: Recorded['data']['products'];
      run_at: Date;
      prompt_id: string;
      model: string;
      location_id: string | null;
      schedule_id: string | null;
    }) => productRows(compiled, { ...p, website_id: websiteId, run_at: p.run_at.toISOString() }),
  );
  for (let i = 0; i < rows.length; i += 2000) {
    await trx.raw(
      `update rm_response_products p set entity_id = x.entity_id, matched_by = x.matched_by, is_own = x.is_own
         from json_to_recordset(?::json) as x(response_id uuid, idx int, entity_id uuid, matched_by text, is_own boolean)
        where p.response_id = x.response_id and p.idx = x.idx`,
      [
        JSON.stringify(
          rows
            .slice(i, i + 2000)
            .map((r) => ({ response_id: r.response_id, idx: r.idx, entity_id: r.entity_id, matched_by: r.matched_by, is_own: r.is_own })),
        ),
      ],
    );
  }
  await trx('rm_fact_sites')
    .insert({ website_id: websiteId, version, generation: 1, entities: JSON.stringify(ids) })
    .onConflict('website_id')
    .merge({ version, generation: trx.raw('rm_fact_sites.generation + 1'), entities: JSON.stringify(ids) });
}

/**
 * Re-derives a website whose facts are out of line with its entity list (outOfLine), outside the projection's
 * batches: it locks the site row as every writer of the website's facts does, checks again under the lock, and
 * derives the whole history from the stored answers with the current list (what the projection itself would write).
 * Returns what was out of line, or null when nothing was (any more).
 */
export async function realignSite(db: Knex, websiteId: string): Promise<string | null> {
  return db.transaction(async (trx) => {
    // long (the website's whole history), and it appends no events
    await declareAppendsNone(trx);
    await lockSite(trx, websiteId);
    const why = await outOfLine(trx, websiteId);
    if (why === null) return null;
    await rederive(trx, websiteId, await nextVersion(trx));
    return why;
  });
}
