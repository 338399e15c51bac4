import type { Knex } from 'knex';
import { jobRowHandlers, jobStreamPrefixes, queuedJobRow } from './job-rows';
import { type EventHandlers, handlerProjection, type Projection, migrateSql } from '../src/eventstore/projection';

const DISCOVERY_STREAM = 'discovery-';

const handlers: EventHandlers<Knex.Transaction> = {
  ...jobRowHandlers('rm_discovery_runs'),
  PromptDiscoveryRequested: queuedJobRow({
    table: 'rm_discovery_runs',
    id: 'run_id',
    columns: ['website_id', 'name', 'sources', 'locale', 'country', 'prompt_count_min', 'prompt_count_max'],
  }),
  async PromptDiscoveryCompleted(e, trx) {
    await trx('rm_discovery_runs')
      .where('id', e.data.run_id)
      .update({ prompts: JSON.stringify(e.data.prompts), unavailable_sources: JSON.stringify(e.data.unavailable_sources) });
  },
  async PromptDiscoveryAccepted(e, trx) {
    await trx.raw(
      `update rm_discovery_runs set accepted = (select jsonb_agg(distinct x order by x) from jsonb_array_elements(accepted || ?::jsonb) x) where id = ?`,
      [JSON.stringify(e.data.indices), e.data.run_id],
    );
  },
};

/** Prompt discovery runs: their inputs, where each stands, its suggestions and which were accepted. */
export const discoveryProjection: Projection = {
  ...handlerProjection(
    {
      name: 'discovery',
      version: 1,
      tables: ['rm_discovery_runs'],
      migrate: migrateSql(`
          create table if not exists rm_discovery_runs (
            id text primary key,
            organization_id uuid not null,
            website_id uuid not null,
            name text not null,
            status text not null,
            sources text[] not null,
            locale text not null,
            country text not null,
            prompt_count_min int not null,
            prompt_count_max int not null,
            prompts jsonb not null default '[]',
            unavailable_sources jsonb not null default '[]',
            accepted jsonb not null default '[]',
            error text,
            created_at timestamptz not null,
            completed_at timestamptz
          );
          create index if not exists rm_discovery_runs_site on rm_discovery_runs (website_id, created_at desc);`),
    },
    handlers,
  ),
  streamPrefixes: jobStreamPrefixes(DISCOVERY_STREAM),
};
