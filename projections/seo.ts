import type { Knex } from 'knex';
import { jobRowHandlers, jobStreamPrefixes, queuedJobRow } from './job-rows';
import { type EventHandlers, handlerProjection, type Projection, migrateSql } from '../src/eventstore/projection';

const SEO_STREAM = 'seo-';

const handlers: EventHandlers<Knex.Transaction> = {
  ...jobRowHandlers('rm_seo_jobs'),
  SeoRecommendationsRequested: queuedJobRow({ table: 'rm_seo_jobs', id: 'job_id', columns: ['website_id', 'request_id', 'source', 'url'] }),
  async SeoRecommendationsProduced(e, trx) {
    await trx('rm_seo_jobs')
      .where('id', e.data.job_id)
      .update({ recommendations: JSON.stringify(e.data.recommendations) });
  },
};

/** SEO recommendation jobs: where each stands and, once it succeeded, its recommendations. */
export const seoProjection: Projection = {
  ...handlerProjection(
    {
      name: 'seo',
      version: 1,
      tables: ['rm_seo_jobs'],
      migrate: migrateSql(`
          create table if not exists rm_seo_jobs (
            id text primary key,
            organization_id uuid not null,
            website_id uuid not null,
            request_id text not null,
            source text not null,
            url text,
            status text not null,
            recommendations jsonb,
            error text,
            created_at timestamptz not null,
            completed_at timestamptz
          );
          create index if not exists rm_seo_jobs_site on rm_seo_jobs (website_id, created_at);`),
    },
    handlers,
  ),
  streamPrefixes: jobStreamPrefixes(SEO_STREAM),
};
