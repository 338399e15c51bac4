import type { Knex } from 'knex';
import { jobOfStream, jobRequestTypes, JOB_LIFECYCLE_TYPES } from '../src/domain/jobs';
import type { Projection } from '../src/eventstore/projection';

/**
 * Every job of every kind and where it stands (queued, running, succeeded, failed): what the job sweeper reads to find
 * jobs their workers lost, and what an area can show as a job's status. An area's own read model holds the rest.
 */
export const jobsProjection: Projection = {
  name: 'jobs',
  version: 1,
  tables: ['rm_jobs'],
  handles: [...jobRequestTypes(), ...JOB_LIFECYCLE_TYPES],
  async migrate(db: Knex) {
    await db.raw(`
      create table if not exists rm_jobs (
        id text primary key,
        kind text not null,
        stream_id text not null,
        organization_id uuid not null,
        website_id uuid,
        status text not null,
        error_kind text,
        error text,
        requested_at timestamptz not null,
        started_at timestamptz,
        finished_at timestamptz,
        updated_at timestamptz not null
      );
      create index if not exists rm_jobs_open on rm_jobs (kind, updated_at) where status in ('queued', 'running');
      create index if not exists rm_jobs_org on rm_jobs (organization_id, kind, requested_at);`);
  },
  async apply(trx, events) {
    for (const e of events) {
      const job = jobOfStream(e.streamId);
      if (!job) continue;
      const at = e.metadata.time;
      switch (e.type) {
        case 'JobStarted':
          await trx('rm_jobs').where('id', job.jobId).where('status', 'queued').update({ status: 'running', started_at: at, updated_at: at });
          break;
        case 'JobSucceeded':
          await trx('rm_jobs').where('id', job.jobId).update({ status: 'succeeded', finished_at: at, updated_at: at });
          break;
        case 'JobFailed':
          await trx('rm_jobs')
            .where('id', job.jobId)
            .update({ status: 'failed', error_kind: e.data.error_kind, error: e.data.message, finished_at: at, updated_at: at });
          break;
        default:
          await trx('rm_jobs')
            .insert({
              id: job.jobId,
              kind: job.kind,
              stream_id: e.streamId,
              organization_id: e.metadata.organization_id,
              website_id: e.metadata.website_id ?? null,
              status: 'queued',
              requested_at: at,
              updated_at: at,
            })
            .onConflict('id')
            .ignore();
      }
    }
  },
};
