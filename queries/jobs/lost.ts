import type { Knex } from 'knex';

/** A job as the sweeper sends it again. */
export interface SweptJob {
  job_id: string;
  kind: string;
  stream_id: string;
  organization_id: string;
  website_id: string | null;
}

/**
 * Jobs of `kinds` not moved for `stale` (an SQL interval) that their workers lost: requested and never taken up (only
 * of the kinds not in `busy`, whose queues hold no message), or running with a heartbeat stopped; then ended jobs
 * still holding their slot.
 */
export async function lostJobs(db: Knex, kinds: readonly string[], busy: readonly string[], stale: string, limit: number): Promise<SweptJob[]> {
  const lost = await db.raw(
    `select j.id as job_id, j.kind, j.stream_id, j.organization_id, j.website_id
       from rm_jobs j left join aivis_job_slots s on s.job_id = j.id
      where j.status in ('queued', 'running') and j.kind = any (?::text[]) and j.updated_at < now() - ?::interval
        and ((s.job_id is null and not (j.kind = any (?::text[])))
             or (s.state = 'running' and s.heartbeat_at < now() - ?::interval))
      order by j.updated_at limit ?`,
    [[...kinds], stale, [...busy], stale, limit],
  );
  const ended = await db.raw(
    `select s.job_id, j.kind, j.stream_id, j.organization_id, j.website_id from aivis_job_slots s join rm_jobs j on j.id = s.job_id
      where j.status in ('succeeded', 'failed') and j.finished_at < now() - ?::interval and j.kind = any (?::text[]) limit ?`,
    ['5 seconds', [...kinds], limit],
  );
  return [...(lost.rows as SweptJob[]), ...(ended.rows as SweptJob[])];
}

/** Places held for `stale` (an SQL interval) by holders that are no job the read model has, with their stream. */
export async function orphanHolds(db: Knex, stale: string, limit: number): Promise<{ holder_id: string; subject: string }[]> {
  const orphans = await db.raw(
    `select h.holder_id, h.subject from aivis_limit_holds h
      where h.acquired_at < now() - ?::interval and h.subject is not null and not exists (select 1 from rm_jobs j where j.id = h.holder_id)
      limit ?`,
    [stale, limit],
  );
  return orphans.rows;
}

/** Allowance reservations still reserved whose job ended more than 5 seconds ago. */
export async function unsettledReservations(
  db: Knex,
  limit: number,
): Promise<
  { organization_id: string; allowance: string; period: string; reservation_id: string; status: 'succeeded' | 'failed'; website_id: string | null }[]
> {
  const unsettled = await db.raw(
    `select r.organization_id, r.allowance, r.period, r.reservation_id, j.status, j.website_id from rm_allowance_reservations r
       join rm_jobs j on j.id = r.reservation_id and j.stream_id = r.subject
      where r.state = 'reserved' and j.status in ('succeeded', 'failed') and j.finished_at < now() - ?::interval limit ?`,
    ['5 seconds', limit],
  );
  return unsettled.rows;
}
