import type { Knex } from 'knex';
import type { EventData, EventOf, EventType } from '../src/domain/events';
import type { TypedEvent } from '../src/eventstore/port';
import type { EventHandlers } from '../src/eventstore/projection';
import { insertRow } from './rows';

/**
 * A job's own row in an area's read model (`table`, keyed by the job id), following the job: queued to running when
 * it starts, then succeeded or failed (with the message) and completed_at when it ends. The projection names the
 * job's stream prefix in its streamPrefixes, so that only its own jobs' events reach these handlers.
 */
export const jobRowHandlers = (table: string): EventHandlers<Knex.Transaction> => ({
  async JobStarted(e, trx) {
    await trx(table).where({ id: e.data.job_id, status: 'queued' }).update({ status: 'running' });
  },
  async JobSucceeded(e, trx) {
    await trx(table).where('id', e.data.job_id).update({ status: 'succeeded', completed_at: e.metadata.time });
  },
  async JobFailed(e, trx) {
    await trx(table).where('id', e.data.job_id).update({ status: 'failed', completed_at: e.metadata.time, error: e.data.message });
  },
});

/**
 * The handler of a job's request: the job's row (`id` from the event's id field, the `columns` copied as they are),
 * in the organization, queued; a request delivered again leaves the row as it is.
 */
export const queuedJobRow = <T extends EventType>(spec: {
  table: string;
  id: keyof EventData<T> & string;
  columns: readonly (keyof EventData<T> & string)[];
}): ((e: TypedEvent<EventOf<T>>, trx: Knex.Transaction) => Promise<void>) =>
  insertRow<T>({ ...spec, extra: (e) => ({ organization_id: e.metadata.organization_id, status: 'queued' }), idempotent: true });

/** A job-row projection's streamPrefixes: the job events of its own jobs' streams (`prefix`) alone reach it. */
export const jobStreamPrefixes = (prefix: string) => ({ JobStarted: prefix, JobSucceeded: prefix, JobFailed: prefix });
