import type { Knex } from 'knex';
import { type EventHandlers, type Projection, handlerProjection, migrateSql } from '../src/eventstore/projection';
import { CREATED_UPDATED, catalogWebsiteOf, insertRow, updateRow } from './rows';

/** A new catalogue row: the website's, its columns as the event has them. */
const catalogRow: typeof insertRow = (spec) => insertRow({ ...spec, extra: (e) => ({ website_id: catalogWebsiteOf(e), ...spec.extra?.(e) }) });

const handlers: EventHandlers<Knex.Transaction> = {
  CompetitorAdded: catalogRow({
    table: 'rm_competitors',
    id: 'competitor_id',
    columns: ['name', 'url', 'normalized_url', 'identifiers'],
    stamps: CREATED_UPDATED,
  }),
  async CompetitorRenamed(e, trx) {
    await trx('rm_competitors').where('id', e.data.competitor_id).update({ name: e.data.name, updated_at: e.metadata.time });
  },
  async CompetitorIdentifiersChanged(e, trx) {
    await trx('rm_competitors').where('id', e.data.competitor_id).update({ identifiers: e.data.identifiers, updated_at: e.metadata.time });
  },
  async CompetitorRemoved(e, trx) {
    const at = e.metadata.time;
    await trx('rm_competitors').where('id', e.data.competitor_id).update({ removed_at: at, updated_at: at });
  },
  TopicCreated: catalogRow({ table: 'rm_topics', id: 'topic_id', columns: ['name'], stamps: CREATED_UPDATED }),
  async TopicDeleted(e, trx) {
    const at = e.metadata.time;
    await trx('rm_topics').where('id', e.data.topic_id).update({ deleted_at: at, updated_at: at });
    if (e.data.soft_deleted_prompt_ids.length) {
      await trx('rm_prompts').whereIn('id', e.data.soft_deleted_prompt_ids).update({ soft_deleted_at: at, updated_at: at });
    }
  },
  async TopicRestored(e, trx) {
    const at = e.metadata.time;
    await trx('rm_topics').where('id', e.data.topic_id).update({ deleted_at: null, updated_at: at });
    if (e.data.restored_prompt_ids.length) {
      await trx('rm_prompts').whereIn('id', e.data.restored_prompt_ids).update({ soft_deleted_at: null, updated_at: at });
    }
  },
  PromptCreated: catalogRow({
    table: 'rm_prompts',
    id: 'prompt_id',
    columns: ['text', 'topic_id', 'type', 'status', 'tags'],
    stamps: CREATED_UPDATED,
  }),
  PromptUpdated: updateRow({ table: 'rm_prompts', id: 'prompt_id' }),
  async PromptDeleted(e, trx) {
    const at = e.metadata.time;
    if (e.data.soft_deleted) await trx('rm_prompts').where('id', e.data.prompt_id).update({ soft_deleted_at: at, updated_at: at });
    else await trx('rm_prompts').where('id', e.data.prompt_id).delete();
  },
  async PromptAnswered(e, trx) {
    await trx('rm_prompts').where('id', e.data.prompt_id).update({ has_answers: true });
  },
  PersonaCreated: catalogRow({ table: 'rm_personas', id: 'persona_id', columns: ['name', 'description'] }),
  LocationCreated: catalogRow({ table: 'rm_locations', id: 'location_id', columns: ['location', 'country', 'region', 'city'] }),
  PromptScheduleCreated: catalogRow({
    table: 'rm_prompt_schedules',
    id: 'schedule_id',
    columns: ['name', 'models', 'starts_on', 'ends_on', 'frequency', 'is_active'],
    extra: (e) => ({ samples_per_prompt: e.data.samples_per_prompt ?? 1 }),
    stamps: CREATED_UPDATED,
  }),
  PromptScheduleUpdated: updateRow({ table: 'rm_prompt_schedules', id: 'schedule_id' }),
  async PromptScheduleArchived(e, trx) {
    const at = e.metadata.time;
    await trx('rm_prompt_schedules').where('id', e.data.schedule_id).update({ archived_at: at, updated_at: at });
  },
  SavedViewCreated: catalogRow({
    table: 'rm_saved_views',
    id: 'view_id',
    columns: ['name'],
    extra: (e) => ({ filters: JSON.stringify(e.data.filters) }),
    stamps: CREATED_UPDATED,
  }),
  async SavedViewUpdated(e, trx) {
    await trx('rm_saved_views')
      .where('id', e.data.view_id)
      .update({
        ...(e.data.name !== undefined && { name: e.data.name }),
        ...(e.data.filters !== undefined && { filters: JSON.stringify(e.data.filters) }),
        updated_at: e.metadata.time,
      });
  },
  AttributeCreated: catalogRow({ table: 'rm_attributes', id: 'attribute_id', columns: ['name', 'description'] }),
};

/**
 * The table of a website's named items with an optional description, listed in creation order: personas and attributes
 * are one kind of row (id, name, description; commands/catalog/catalog-input.ts describedItem).
 */
const describedItems = (table: string) => `create table if not exists ${table} (
          seq bigserial,
          id uuid primary key,
          website_id uuid not null,
          name text not null,
          description text,
          created_at timestamptz not null
        );
        create index if not exists ${table}_site on ${table} (website_id, seq);`;

/**
 * The catalogue of every website: competitors, topics, prompts, personas, locations, prompt schedules, saved views
 * and attributes. Soft-deleted topics and prompts keep their rows (metrics and history still join them); a
 * hard-deleted prompt's row is removed. `seq` keeps listings in the order things were created.
 */
export const catalogProjection: Projection = handlerProjection(
  {
    name: 'catalog',
    version: 2,
    tables: ['rm_competitors', 'rm_topics', 'rm_prompts', 'rm_personas', 'rm_locations', 'rm_prompt_schedules', 'rm_saved_views', 'rm_attributes'],
    migrate: migrateSql(`
        create table if not exists rm_competitors (
          seq bigserial,
          id uuid primary key,
          website_id uuid not null,
          name text not null,
          url text not null,
          normalized_url text not null,
          identifiers text[] not null,
          removed_at timestamptz,
          created_at timestamptz not null,
          updated_at timestamptz not null
        );
        create index if not exists rm_competitors_site on rm_competitors (website_id, seq);
        create table if not exists rm_topics (
          seq bigserial,
          id uuid primary key,
          website_id uuid not null,
          name text not null,
          deleted_at timestamptz,
          created_at timestamptz not null,
          updated_at timestamptz not null
        );
        create index if not exists rm_topics_site on rm_topics (website_id, seq);
        create table if not exists rm_prompts (
          seq bigserial,
          id uuid primary key,
          website_id uuid not null,
          text text not null,
          topic_id uuid,
          type text not null,
          status text not null,
          tags text[] not null,
          has_answers boolean not null default false,
          soft_deleted_at timestamptz,
          created_at timestamptz not null,
          updated_at timestamptz not null
        );
        create index if not exists rm_prompts_site on rm_prompts (website_id, seq);
        ${describedItems('rm_personas')}
        create table if not exists rm_locations (
          seq bigserial,
          id uuid primary key,
          website_id uuid not null,
          location text not null,
          country text not null,
          region text,
          city text,
          created_at timestamptz not null
        );
        create index if not exists rm_locations_site on rm_locations (website_id, seq);
        create table if not exists rm_prompt_schedules (
          seq bigserial,
          id uuid primary key,
          website_id uuid not null,
          name text not null,
          models text[] not null,
          starts_on text,
          ends_on text,
          frequency text not null,
          is_active boolean not null,
          samples_per_prompt int not null default 1,
          archived_at timestamptz,
          created_at timestamptz not null,
          updated_at timestamptz not null
        );
        create index if not exists rm_prompt_schedules_site on rm_prompt_schedules (website_id, seq);
        create table if not exists rm_saved_views (
          seq bigserial,
          id uuid primary key,
          website_id uuid not null,
          name text not null,
          filters jsonb not null,
          created_at timestamptz not null,
          updated_at timestamptz not null
        );
        create index if not exists rm_saved_views_site on rm_saved_views (website_id, seq);
        ${describedItems('rm_attributes')}`),
  },
  handlers,
);
