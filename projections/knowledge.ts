import type { Knex } from 'knex';
import { recordedFact } from '../commands/knowledge/knowledge';
import { type EventHandlers, handlerProjection, migrateSql } from '../src/eventstore/projection';
import { CREATED_UPDATED, orgRow, updateRow } from './rows';

const handlers: EventHandlers<Knex.Transaction> = {
  PillarCreated: orgRow({
    table: 'rm_kb_pillars',
    id: 'pillar_id',
    columns: ['website_id', 'name', 'description'],
    extra: () => ({ status: 'researching' }),
    stamps: CREATED_UPDATED,
  }),
  PillarUpdated: updateRow({ table: 'rm_kb_pillars', id: 'pillar_id' }),
  async PillarResearched(e, trx) {
    const at = e.metadata.time;
    await trx('rm_kb_pillars')
      .where('id', e.data.pillar_id)
      .update({ status: trx.raw(`case when status = 'researching' then 'draft' else status end`), last_researched_at: at, updated_at: at });
  },
  async FactRecorded(e, trx) {
    const d = e.data;
    // an erased fact arrives without its text on a rebuild: nothing of it is kept
    if (d.text === null) return;
    const at = e.metadata.time;
    await trx('rm_kb_facts')
      .insert({
        ...recordedFact(d),
        organization_id: e.metadata.organization_id,
        website_id: d.website_id,
        created_at: at,
        updated_at: at,
      })
      .onConflict('id')
      .ignore();
  },
  async FactReviewed(e, trx) {
    await trx('rm_kb_facts').where('id', e.data.fact_id).update({ review_status: e.data.review_status, updated_at: e.metadata.time });
  },
  async FactUpdated(e, trx) {
    const d = e.data;
    const set: Record<string, unknown> = { updated_at: e.metadata.time };
    if (d.source_url_cleared) set.source_url = null;
    else if (d.source_url !== undefined) set.source_url = d.source_url;
    if (d.confidence !== undefined) set.confidence = d.confidence;
    await trx('rm_kb_facts').where('id', d.fact_id).update(set);
  },
  async FactArchived(e, trx) {
    await trx('rm_kb_facts').where('id', e.data.fact_id).update({ archived_at: e.metadata.time, updated_at: e.metadata.time });
  },
  async FactsDeleted(e, trx) {
    await trx('rm_kb_facts')
      .whereIn('id', [...e.data.fact_ids, ...e.data.replaced_ids])
      .delete();
  },
};

/**
 * The knowledge base (commands/knowledge): pillars, and facts with a full-text vector of their text for search.
 * Archived facts keep their row (they answer 404, are never listed); deleted facts lose theirs. The search index is
 * updated as facts arrive (fastupdate off): a search never scans a pending list of recent entries.
 */
export const knowledgeProjection = handlerProjection(
  {
    name: 'knowledge',
    version: 1,
    tables: ['rm_kb_pillars', 'rm_kb_facts'],
    migrate: migrateSql(`
        create table if not exists rm_kb_pillars (
          id uuid primary key,
          organization_id uuid not null,
          website_id uuid not null,
          name text not null,
          description text not null,
          status text not null,
          last_researched_at timestamptz,
          created_at timestamptz not null,
          updated_at timestamptz not null
        );
        create index if not exists rm_kb_pillars_site on rm_kb_pillars (website_id, created_at);
        create table if not exists rm_kb_facts (
          id uuid primary key,
          organization_id uuid not null,
          website_id uuid not null,
          pillar_id uuid,
          text text not null,
          source_url text,
          source_quote text,
          confidence text not null,
          review_status text not null,
          source_type text not null,
          response_id uuid,
          duplicate_of uuid,
          replaces uuid,
          archived_at timestamptz,
          created_at timestamptz not null,
          updated_at timestamptz not null,
          tsv tsvector generated always as (to_tsvector('english'::regconfig, text)) stored
        );
        create index if not exists rm_kb_facts_site on rm_kb_facts (website_id, created_at desc, id desc) where archived_at is null;
        create index if not exists rm_kb_facts_pillar on rm_kb_facts (website_id, pillar_id, created_at desc, id desc) where archived_at is null;
        create index if not exists rm_kb_facts_search on rm_kb_facts using gin (tsv) with (fastupdate = off)
          where archived_at is null and duplicate_of is null and review_status = 'approved';`),
  },
  handlers,
);
