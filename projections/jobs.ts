import type { Knex } from 'knex';
import { type JobKinds, jobOfStream, jobRequestTypes } from '../src/domain/jobs';
import type { TypedEvent } from '../src/eventstore/port';
import { dispatch, type EventHandlers, handledTypes, type Projection, migrateSql } from '../src/eventstore/projection';

interface JobContext {
  trx: Knex.Transaction;
  job: { jobId: string; kind: string };
}

/** A job's request (of any kind): the job is queued. */
async function requested(e: TypedEvent, { trx, job }: JobContext): Promise<void> {
  const at = e.metadata.time;
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

/** The lifecycle's handlers; the requests of every kind are added by jobsProjection. */
const lifecycle: EventHandlers<JobContext> = {
  async JobStarted(e, { trx, job }) {
    const at = e.metadata.time;
    await trx('rm_jobs').where('id', job.jobId).where('status', 'queued').update({ status: 'running', started_at: at, updated_at: at });
  },
  async JobSucceeded(e, { trx, job }) {
    const at = e.metadata.time;
    await trx('rm_jobs').where('id', job.jobId).update({ status: 'succeeded', finished_at: at, updated_at: at });
  },
  async JobFailed(e, { trx, job }) {
    const at = e.metadata.time;
    await trx('rm_jobs')
      .where('id', job.jobId)
      .update({ status: 'failed', error_kind: e.data.error_kind, error: e.data.message, finished_at: at, updated_at: at });
  },
};

/**
 * Every job of every kind and where it stands (queued, running, succeeded, failed): what the job sweeper reads to find
 * jobs their workers lost, and what an area can show as a job's status. An area's own read model holds the rest.
 * `kinds`: every kind of job, from the areas' manifests (the registry builds this read model).
 */
export const jobsProjection = (kinds: JobKinds): Projection => {
  const handlers: EventHandlers<JobContext> = { ...Object.fromEntries(jobRequestTypes(kinds).map((t) => [t, requested])), ...lifecycle };
  return {
    name: 'jobs',
    version: 1,
    tables: ['rm_jobs'],
    handles: handledTypes(handlers),
    migrate: migrateSql(`
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
      create index if not exists rm_jobs_org on rm_jobs (organization_id, kind, requested_at);`),
    async apply(trx, events) {
      for (const e of events) {
        const job = jobOfStream(kinds, e.streamId);
        if (job) await dispatch(handlers, e, { trx, job });
      }
    },
  };
};
