import type { Knex } from 'knex';
import type { EventHandlers } from '../src/eventstore/projection';

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
