import type { Knex } from 'knex';
import type { EventOf } from '../src/domain/events';
import type { TypedEvent } from '../src/eventstore/port';
import { dispatch, type EventHandlers, handledTypes, type Projection, migrateSql } from '../src/eventstore/projection';
import { deletePipelineRows, migratePipeline, PIPELINE_STREAM_PREFIXES, PIPELINE_TABLES, pipelineHandlers } from './content-pipeline';

type Tracked = TypedEvent<EventOf<'ContentTracked'>>;

interface ContentBatch {
  trx: Knex.Transaction;
  /** items tracked and not written yet: written together before the next event of another type (which may concern them) */
  tracked: Tracked[];
}

/** Tracked items in one statement (a track call makes up to 500). */
async function writeTracked(trx: Knex.Transaction, tracked: Tracked[]): Promise<void> {
  if (!tracked.length) return;
  // an erased item (its title null: a rebuild) is not written; its delete follows in the log
  const rows = tracked.flatMap((e) => {
    const d = e.data;
    if (d.title === null) return [];
    return {
      content_id: d.content_id,
      organization_id: e.metadata.organization_id,
      website_id: d.website_id,
      title: d.title,
      url: d.url,
      normalized_url: d.normalized_url,
      type: d.type,
      sheet_id: d.sheet_id,
      fields: d.fields ?? {},
      created_at: e.metadata.time,
      updated_at: e.metadata.time,
    };
  });
  tracked.length = 0;
  if (!rows.length) return;
  await trx.raw(
    `insert into rm_content (content_id, organization_id, website_id, title, url, normalized_url, type, sheet_id, fields, created_at, updated_at)
     select content_id, organization_id, website_id, title, url, normalized_url, type, sheet_id, fields, created_at, updated_at
       from json_to_recordset(?::json) as x(content_id uuid, organization_id uuid, website_id uuid, title text, url text, normalized_url text,
         type text, sheet_id uuid, fields jsonb, created_at timestamptz, updated_at timestamptz)
     on conflict (content_id) do nothing`,
    [JSON.stringify(rows)],
  );
}

const at = (e: TypedEvent) => e.metadata.time;

/**
 * The content hub's read models (commands/content):
 * - rm_content: one row per item with every field of CONTRACT's content item (sealed parts null once erased);
 * - rm_content_sheets, rm_content_columns: a website's tabs and their customer columns (multi-select options in order);
 * The answers' side of the citation join (rm_content_answers, rm_content_cites) is written by the answers projection
 * from its own analysis of each answer (projections/answers/), never analyzed a second time here.
 * Pipeline events (generation, versions, publish) add their handlers here.
 */
const handlers: EventHandlers<ContentBatch> = {
  ContentTracked(e, { tracked }) {
    tracked.push(e);
  },
  async ContentTitleChanged(e, { trx }) {
    if (e.data.title === null) return;
    await trx('rm_content')
      .where('content_id', e.data.content_id)
      .update({ title: e.data.title, updated_at: at(e) });
  },
  async ContentDeleted(e, { trx }) {
    await trx('rm_content').where('content_id', e.data.content_id).delete();
    await deletePipelineRows(trx, e.data.content_id);
  },
  async ContentSheetCreated(e, { trx }) {
    await trx.raw('insert into rm_content_sheets (sheet_id, website_id, name, type, created_at) values (?, ?, ?, ?, ?) on conflict do nothing', [
      e.data.sheet_id,
      e.data.website_id,
      e.data.name,
      e.data.type,
      at(e),
    ]);
  },
  async ContentColumnCreated(e, { trx }) {
    const d = e.data;
    await trx.raw(
      `insert into rm_content_columns (column_id, website_id, sheet_id, name, type, options, created_at)
       values (?, ?, ?, ?, ?, ?::jsonb, ?) on conflict do nothing`,
      [d.column_id, d.website_id, d.sheet_id, d.name, d.type, JSON.stringify(d.options), at(e)],
    );
  },
  async ContentColumnOptionsAdded(e, { trx }) {
    await trx.raw('update rm_content_columns set options = options || ?::jsonb where column_id = ?', [
      JSON.stringify(e.data.options),
      e.data.column_id,
    ]);
  },
  ...pipelineHandlers,
};

export const contentProjection: Projection = {
  name: 'content',
  version: 2,
  tables: ['rm_content', 'rm_content_sheets', 'rm_content_columns', ...PIPELINE_TABLES],
  handles: handledTypes(handlers),
  streamPrefixes: PIPELINE_STREAM_PREFIXES,
  migrate: migrateSql(
    `
      create table if not exists rm_content (
        content_id uuid primary key,
        organization_id uuid not null,
        website_id uuid not null,
        title text not null,
        url text,
        normalized_url text,
        type text not null,
        sheet_id uuid,
        topic_id uuid,
        stage text,
        pipeline_status text,
        pipeline_error text,
        brief text,
        body text,
        meta_description text,
        cited_urls jsonb not null default '[]',
        internal_links jsonb not null default '[]',
        fields jsonb not null default '{}',
        version_number int not null default 0,
        mark_as_done_time timestamptz,
        created_at timestamptz not null,
        updated_at timestamptz not null
      );
      alter table rm_content add column if not exists pipeline_error text;
      create index if not exists rm_content_site_time on rm_content (website_id, created_at desc, content_id);
      create index if not exists rm_content_site_url on rm_content (website_id, normalized_url);
      create table if not exists rm_content_sheets (
        sheet_id uuid primary key,
        website_id uuid not null,
        name text not null,
        type text not null,
        created_at timestamptz not null
      );
      create index if not exists rm_content_sheets_site on rm_content_sheets (website_id, created_at);
      create table if not exists rm_content_columns (
        column_id uuid primary key,
        website_id uuid not null,
        sheet_id uuid not null,
        name text not null,
        type text not null,
        options jsonb not null,
        created_at timestamptz not null
      );
      create index if not exists rm_content_columns_sheet on rm_content_columns (sheet_id, created_at);
      -- the answers' rows moved to the answers projection (one analysis per answer); the brand copy is gone
      drop table if exists rm_content_brands;`,
    migratePipeline,
  ),
  async apply(trx, events) {
    const batch: ContentBatch = { trx, tracked: [] };
    for (const e of events) {
      if (batch.tracked.length && e.type !== 'ContentTracked') await writeTracked(trx, batch.tracked);
      const pending = dispatch(handlers, e, batch);
      if (pending) await pending;
    }
    await writeTracked(trx, batch.tracked);
  },
};
