import type { Knex } from 'knex';
import { prepared } from '../src/db';
import { RESPONSE_STREAM_PREFIX } from '../src/domain/events';
import { dispatch, type EventHandlers, handledTypes, type Projection, migrateSql } from '../src/eventstore/projection';
import { ASKED_COLUMNS } from './answer-columns';

/** What the handlers of one batch share: units and outcomes are gathered and written together (flush). */
interface RunsBatch {
  trx: Knex.Transaction;
  units: Record<string, unknown>[];
  outcomes: Record<string, unknown>[];
  /** writes the units and outcomes gathered so far */
  flush(): Promise<void>;
}

const handlers: EventHandlers<RunsBatch> = {
  async RunStarted(e, { trx }) {
    const at = e.metadata.time;
    await trx('rm_runs')
      .insert({
        id: e.data.run_id,
        organization_id: e.metadata.organization_id,
        website_id: e.data.website_id,
        schedule_id: e.data.schedule_id,
        trigger: e.data.trigger,
        day: e.data.day,
        models: e.data.models,
        total: e.data.total,
        started_at: at,
        finished_at: e.data.total === 0 ? at : null,
      })
      .onConflict('id')
      .ignore();
  },
  ResponseRequested(e, { units }) {
    units.push({
      request_id: e.data.request_id,
      run_id: e.data.run_id,
      organization_id: e.metadata.organization_id,
      website_id: e.data.website_id,
      prompt_id: e.data.prompt_id,
      model: e.data.model,
      location_id: e.data.location_id,
      persona_id: e.data.persona_id,
      schedule_id: e.data.schedule_id,
      day: e.data.day,
      run_at: e.data.run_at,
      at: e.metadata.time,
    });
  },
  ResponseRecorded(e, { outcomes }) {
    if (e.data.request_id && e.data.run_id)
      outcomes.push({
        request_id: e.data.request_id,
        run_id: e.data.run_id,
        status: 'recorded',
        response_id: e.data.response_id,
        error_kind: null,
        error: null,
        attempts: null,
        at: e.metadata.time,
      });
  },
  ResponseFailed(e, { outcomes }) {
    outcomes.push({
      request_id: e.data.request_id,
      run_id: e.data.run_id,
      status: 'failed',
      response_id: null,
      error_kind: e.data.error_kind,
      error: e.data.message,
      attempts: e.data.attempts,
      at: e.metadata.time,
    });
  },
  async RunSlotTaken(e, { trx, flush }) {
    await flush();
    await trx('rm_run_slots')
      .insert({
        run_id: e.data.run_id,
        organization_id: e.metadata.organization_id,
        website_id: e.data.website_id,
        schedule_id: e.data.schedule_id,
        taken_at: e.metadata.time,
        expires_at: e.data.expires_at,
      })
      .onConflict('run_id')
      .ignore();
  },
  async RunEnded(e, { trx, flush }) {
    const at = e.metadata.time;
    // what came before it in the log settles first: an outcome recorded before the end counts
    await flush();
    await trx('rm_run_slots').where('run_id', e.data.run_id).whereNull('ended_at').update({ ended_at: at, end_reason: e.data.reason });
    if (e.data.reason === 'expired') await expire(trx, e.data.run_id, at);
  },
};

/**
 * Runs and their units of work: what was asked, what was answered, what failed and why. A run is finished when
 * every unit has an outcome; its status says how it went. rm_run_slots: which run holds its schedule's slot, until
 * its end is recorded (what the worker recording ends looks for); a run ended as expired is finished, its units
 * still pending failed as expired.
 */
export const runsProjection: Projection = {
  name: 'runs',
  version: 1,
  tables: ['rm_runs', 'rm_run_units', 'rm_run_slots'],
  handles: handledTypes(handlers),
  // outcomes of units of work only: an imported answer belongs to no run
  streamPrefixes: { ResponseRecorded: RESPONSE_STREAM_PREFIX, ResponseFailed: RESPONSE_STREAM_PREFIX },
  migrate: migrateSql(`
      create table if not exists rm_runs (
        seq bigserial,
        id uuid primary key,
        organization_id uuid not null,
        website_id uuid not null,
        schedule_id uuid,
        trigger text not null,
        day date not null,
        models text[] not null,
        total int not null,
        recorded int not null default 0,
        failed int not null default 0,
        started_at timestamptz not null,
        finished_at timestamptz
      );
      create index if not exists rm_runs_site on rm_runs (website_id, seq);
      create table if not exists rm_run_units (
        request_id uuid primary key,
        run_id uuid not null,
        organization_id uuid not null,
        ${ASKED_COLUMNS},
        day date not null,
        run_at timestamptz,
        status text not null,
        response_id uuid,
        error_kind text,
        error text,
        attempts int,
        requested_at timestamptz not null,
        dispatched_at timestamptz not null,
        dispatches int not null default 1,
        updated_at timestamptz not null
      );
      create index if not exists rm_run_units_run on rm_run_units (run_id, status);
      create index if not exists rm_run_units_pending on rm_run_units (dispatched_at) where status = 'pending';
      create table if not exists rm_run_slots (
        run_id uuid primary key,
        organization_id uuid not null,
        website_id uuid not null,
        schedule_id uuid,
        taken_at timestamptz not null,
        expires_at timestamptz not null,
        ended_at timestamptz,
        end_reason text
      );
      create index if not exists rm_run_slots_held on rm_run_slots (expires_at) where ended_at is null;`),
  async apply(trx, events) {
    const units: Record<string, unknown>[] = [];
    const outcomes: Record<string, unknown>[] = [];
    /** writes the units and outcomes gathered so far */
    const flush = async () => {
      // units first: an outcome in the same batch finds its unit
      if (units.length) {
        await prepared(
          trx,
          'aivis_runs_units',
          `insert into rm_run_units (request_id, run_id, organization_id, website_id, prompt_id, model, location_id, persona_id, schedule_id, day, run_at, status, requested_at, dispatched_at, updated_at)
           select request_id, run_id, organization_id, website_id, prompt_id, model, location_id, persona_id, schedule_id, day, run_at, 'pending', at, at, at
             from json_to_recordset($1::json) as x(request_id uuid, run_id uuid, organization_id uuid, website_id uuid, prompt_id uuid, model text, location_id uuid,
               persona_id uuid, schedule_id uuid, day date, run_at timestamptz, at timestamptz)
           on conflict (request_id) do nothing`,
          [JSON.stringify(units)],
        );
      }
      if (outcomes.length) {
        // only a pending unit takes an outcome (one outcome per unit: the event ids make a second one impossible)
        // the key list makes it index probes: joined to the recordset alone (which the planner sizes at 100 rows) the
        // update hashed it and scanned the whole table per batch. The status is compared with (select 'pending'), not
        // the literal: with the literal the planner may read the units through rm_run_units_pending (the sweeper's index
        // of every pending unit) when its statistics say few are pending, as they do between runs, and a batch then read
        // every pending unit of every run: 9.3 M index entries for the worker bench's 19,800 answers. The runs' counts
        // move in the same statement (one round trip a batch, not one more per run)
        await prepared(
          trx,
          'aivis_runs_outcomes',
          `with x as materialized (
             select * from json_to_recordset($1::json) as x(request_id uuid, run_id uuid, status text, response_id uuid, error_kind text, error text, attempts int, at timestamptz)),
           settled as (
             update rm_run_units u set status = x.status, response_id = x.response_id, error_kind = x.error_kind, error = x.error, attempts = x.attempts, updated_at = x.at
               from x
              where u.request_id = any (array(select x.request_id from x)) and u.request_id = x.request_id and u.status = (select 'pending'::text)
              returning u.run_id, u.status, x.at),
           c as (
             select run_id, (count(*) filter (where status = 'recorded'))::int as recorded, (count(*) filter (where status <> 'recorded'))::int as failed, max(at) as at
               from settled group by run_id)
           update rm_runs r set recorded = r.recorded + c.recorded, failed = r.failed + c.failed,
             finished_at = case when r.recorded + c.recorded + r.failed + c.failed >= r.total then c.at else r.finished_at end
             from c where r.id = c.run_id`,
          [JSON.stringify(outcomes)],
        );
      }
      units.length = 0;
      outcomes.length = 0;
    };
    const batch: RunsBatch = { trx, units, outcomes, flush };
    for (const e of events) {
      const pending = dispatch(handlers, e, batch);
      if (pending) await pending;
    }
    await flush();
  },
};

/** A run whose slot expired: its pending units fail as expired (a late answer no longer counts) and it is finished. */
async function expire(trx: Knex.Transaction, runId: string, at: string): Promise<void> {
  await trx.raw(
    `with expired as (
       update rm_run_units set status = 'failed', error_kind = 'expired', error = 'the run expired before this unit had an outcome', updated_at = ?
        where run_id = ? and status = 'pending'
        returning 1)
     update rm_runs set failed = failed + (select count(*) from expired), finished_at = coalesce(finished_at, ?::timestamptz) where id = ?`,
    [at, runId, at, runId],
  );
}
