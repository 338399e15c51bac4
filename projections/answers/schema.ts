import { preferLz4Sql } from '../../src/db';
import { ANSWER_COLUMNS, ASKED_COLUMNS } from '../answer-columns';

/** The answers read model's tables besides the content hub's two (./content-tables.ts). */
export const ANSWERS_SQL = `
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
        -- the analysis' sources, the retrieved pages and the search queries are in the export line only (recordedFields)
        matched jsonb not null default '{"m": [], "c": []}',
        changed bigint not null default 0,
        sample_index int not null default 0,
        export_json text not null,
        export_entities text not null
      -- an answer with its export line is 3-5 KB: kept whole in its page rather than compressed into TOAST, which cost
      -- the answers' writes a fifth more CPU
      ) with (toast_tuple_target = 8160);
      -- every answer stored before samples existed is its unit's only sample
      alter table rm_responses add column if not exists sample_index int not null default 0;
      ${preferLz4Sql('rm_responses', ['text', 'citations', 'products', 'export_json'])}
      create index if not exists rm_responses_site_time on rm_responses (website_id, run_at, id);
      create index if not exists rm_responses_changed on rm_responses (website_id, changed, id);
      create index if not exists rm_responses_site_id on rm_responses (website_id, id);
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
        entities jsonb not null,
        -- the version of the last re-derivation of the website's history: the export hands every answer out again past it
        rederived bigint not null default 0
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
      create index if not exists rm_response_products_site_time on rm_response_products (website_id, run_at);`;

/** An answer's entity matches as stored (rm_responses.matched): mentions [entity_id, position] in order, cited entity ids. */
export interface StoredMatched {
  m: [string, number][];
  c: string[];
}
