import type { Knex } from 'knex';

/**
 * Running caps of a kind of job: at most `perScope` running per scope (a website) and `overall` in all; a job beyond
 * waits queued and starts, oldest first, when a slot frees. Counted in Postgres, so every instance shares the caps.
 */
export interface SlotPool {
  name: string;
  perScope: number;
  overall: number;
}

/** A pool without caps: its jobs start at once (their rows still carry the heartbeats the sweeper reads). */
export const uncapped = (name: string): SlotPool => ({ name, perScope: Number.MAX_SAFE_INTEGER, overall: Number.MAX_SAFE_INTEGER });

export type SlotState = 'queued' | 'running' | 'waiting';

export interface SlotRow {
  pool: string;
  job_id: string;
  stream_id: string;
  scope: string;
  state: SlotState;
}

export interface Admitted {
  /** this job's state after the admission */
  state: SlotState;
  /** other queued jobs that this admission started (slots were free): their workers must be woken */
  promoted: SlotRow[];
}

/** The job slots and the job sweeper's claims (src/workers/job-sweeper.ts). */
export async function migrateSlots(db: Knex): Promise<void> {
  await db.raw(`
    create table if not exists aivis_job_slots (
      job_id text primary key,
      pool text not null,
      stream_id text not null,
      scope text not null,
      state text not null,
      queued_at timestamptz not null default clock_timestamp(),
      started_at timestamptz,
      heartbeat_at timestamptz
    );
    create index if not exists aivis_job_slots_queue on aivis_job_slots (pool, state, queued_at);
    create index if not exists aivis_job_slots_running on aivis_job_slots (pool, scope) where state <> 'queued';
    -- the job sweeper's claims: a lost job is woken once per period by one instance, and failed after too many wakes
    create table if not exists aivis_job_wakes (job_id text primary key, at timestamptz not null, count int not null);`);
}

const lockPool = (trx: Knex.Transaction, pool: string) => trx.raw('select pg_advisory_xact_lock(hashtextextended(?, 0))', [`aivis-slots:${pool}`]);

/**
 * Starts the oldest queued jobs that fit under the caps (a job in the slot it holds while waiting for outside input
 * counts as running). Call under the pool's lock.
 */
async function promote(trx: Knex.Transaction, pool: SlotPool): Promise<SlotRow[]> {
  const r = await trx.raw(
    `with running as (
       select scope, count(*)::int as n from aivis_job_slots where pool = ? and state <> 'queued' group by scope
     ), ranked as (
       select q.job_id, q.queued_at,
              row_number() over (partition by q.scope order by q.queued_at, q.job_id) + coalesce(r.n, 0) as nth
         from aivis_job_slots q left join running r on r.scope = q.scope
        where q.pool = ? and q.state = 'queued'
     ), picked as (
       select job_id from ranked where nth <= ?
        order by queued_at, job_id
        limit greatest(0, ? - (select coalesce(sum(n), 0) from running))
     )
     update aivis_job_slots s set state = 'running', started_at = clock_timestamp(), heartbeat_at = clock_timestamp()
       from picked where s.job_id = picked.job_id
     returning s.pool, s.job_id, s.stream_id, s.scope, s.state`,
    [pool.name, pool.name, pool.perScope, pool.overall],
  );
  return r.rows as SlotRow[];
}

/**
 * A job asks for a slot: queued behind the pool's older jobs, then started if it fits. Idempotent: a job that has its
 * slot (running or waiting) keeps it, a queued one stays in its place in the queue.
 */
export async function admit(db: Knex, pool: SlotPool, job: { job_id: string; stream_id: string; scope: string }): Promise<Admitted> {
  return db.transaction(async (trx) => {
    await lockPool(trx, pool.name);
    const mine = await trx('aivis_job_slots').where('job_id', job.job_id).first('state');
    if (mine && mine.state !== 'queued') return { state: mine.state as SlotState, promoted: [] };
    if (!mine)
      await trx('aivis_job_slots').insert({ job_id: job.job_id, pool: pool.name, stream_id: job.stream_id, scope: job.scope, state: 'queued' });
    const started = await promote(trx, pool);
    const self = started.find((s) => s.job_id === job.job_id);
    return { state: self ? 'running' : 'queued', promoted: started.filter((s) => s.job_id !== job.job_id) };
  });
}

/** A job ended: its slot (and the sweeper's count of its wakes) frees, and the queued jobs that now fit start (their workers must be woken). */
export async function release(db: Knex, pool: SlotPool, jobId: string): Promise<SlotRow[]> {
  return db.transaction(async (trx) => {
    await lockPool(trx, pool.name);
    await trx.raw(`with w as (delete from aivis_job_wakes where job_id = ?) delete from aivis_job_slots where job_id = ?`, [jobId, jobId]);
    return promote(trx, pool);
  });
}

/** Starts what fits now (a sweep: a release whose promotions were lost with its process). */
export async function promoteQueued(db: Knex, pool: SlotPool): Promise<SlotRow[]> {
  return db.transaction(async (trx) => {
    await lockPool(trx, pool.name);
    return promote(trx, pool);
  });
}

/** A job with its slot has nothing to do until outside input arrives: the sweeper leaves it alone meanwhile. */
export async function setState(db: Knex, jobId: string, state: 'running' | 'waiting'): Promise<void> {
  await db('aivis_job_slots')
    .where('job_id', jobId)
    .whereNot('state', 'queued')
    .update({ state, heartbeat_at: db.raw('clock_timestamp()') });
}

/** The workers of one instance say their jobs are alive. */
export async function heartbeat(db: Knex, jobIds: readonly string[]): Promise<void> {
  if (!jobIds.length) return;
  await db('aivis_job_slots')
    .whereIn('job_id', jobIds)
    .where('state', 'running')
    .update({ heartbeat_at: db.raw('clock_timestamp()') });
}
