import type { Knex } from 'knex';

/** The read horizon: how far a catch-up reader may read without ever skipping a late commit (rules: docs/architecture.md#the-read-horizon) */

/** the advisory-lock class (the key's high 32 bits) of the mark "this transaction appends no events" */
const APPENDS_NONE_CLASS = 1095325267;

/** The marker's call: a transaction's first statement, or part of it (a runner's batch takes it with its lock). */
export const APPENDS_NONE = 'aivis_appends_none()';

/** Declares that `trx` appends no events: the log's readers need not wait for it (it must be long, or they would). */
export async function declareAppendsNone(trx: Knex.Transaction): Promise<void> {
  await trx.raw(`select ${APPENDS_NONE}`);
}

/** The marker, on any database the runners write (the event store's or only the read models'). */
export const APPENDS_NONE_FUNCTION = `
create or replace function aivis_appends_none() returns void language sql as $$
  select set_config('aivis.appends_none', 'on', true);
  select pg_advisory_xact_lock_shared((${APPENDS_NONE_CLASS}::bigint << 32) | (pg_current_xact_id()::text::bigint & 4294967295));
$$;`;

/** The log's side: the horizon function, and the trigger that holds a marked transaction to its word. */
export const HORIZON_SQL = `
create or replace function aivis_refuse_marked_append() returns trigger language plpgsql as $$
begin
  if current_setting('aivis.appends_none', true) = 'on' then
    raise exception 'this transaction declared that it appends no events (aivis_appends_none): the readers have read past it';
  end if;
  return null;
end $$;
create or replace trigger aivis_events_appends_none before insert on aivis_events
  for each statement execute function aivis_refuse_marked_append();

-- stable: it sees the calling statement's snapshot, the one the reader's rows come from. p_floor: a horizon this
-- process found before (safe later too: what ran below it then has ended or never appends), so that a reader's
-- horizon never moves back when a transaction it left out has ended and can no longer be told apart
create or replace function aivis_read_horizon(p_txid xid8, p_position bigint, p_floor xid8) returns xid8 language plpgsql stable as $$
declare
  s pg_snapshot := pg_current_snapshot();
  h xid8 := greatest(pg_snapshot_xmin(s), p_floor);
  lo xid8 := '0';
  hi xid8;
  held boolean := false;
  v_db oid;
begin
  if h >= pg_snapshot_xmax(s) then
    return h;
  end if;
  -- held back only by events past the reader, at or above h, of transactions that ended before the snapshot: probe the
  -- gaps between the running ones. An index scan from h on walks every row they have inserted, each invisible and each
  -- a visibility check: ~800 pages a read while batches of answers were being appended
  for hi in select x from pg_snapshot_xip(s) as x where x >= h union select pg_snapshot_xmax(s) order by 1 loop
    if exists (select 1 from aivis_events
                where txid >= h and txid > lo and txid < hi and (txid, position) > (p_txid, p_position)) then
      held := true;
      exit;
    end if;
    lo := hi;
  end loop;
  if not held then
    return h;
  end if;
  select oid into v_db from pg_database where datname = current_database();
  return coalesce((
    select min(x) from pg_snapshot_xip(s) as x
     where x >= h
       and (x::text::bigint & 4294967295) not in (
             select l.objid::text::bigint from pg_locks l
              where l.locktype = 'advisory' and l.database = v_db and l.classid = ${APPENDS_NONE_CLASS}::oid
                and l.objsubid = 1 and l.granted)
       and (x::text::bigint & 4294967295) not in (
             select a.backend_xid::text::bigint from pg_stat_get_activity(null) a
              where a.backend_xid is not null and a.datid <> v_db)),
    pg_snapshot_xmax(s));
end $$;`;

/**
 * A reader's horizon, as the first column (`horizon`, text) of a query whose rows are a lateral `e` (`rows`, which
 * compares `txid` with `h.horizon`), then `columns` of e (all by default): one row with them null when nothing is below it. The function runs once
 * (`offset 0`: not folded into the query, where each row would call it again). Parameters: the reader's
 * position (txid and position as text, bigint), the process's floor (text), then rows' own.
 *
 * `ended` says the horizon is a transaction that was running in the statement's snapshot and has ended since: the
 * check could not place it (its backend was gone when the backends were read: on a busy server, another database's
 * short transaction), so it held the reader back for nothing. A new statement, with a new snapshot, reads past it.
 */
const belowHorizon = (rows: string, columns = 'e.*') => `select h.horizon::text as horizon, h.ended, ${columns}
  from (select horizon,
               case when horizon < pg_snapshot_xmax(s) and not pg_visible_in_snapshot(horizon, s)
                    then coalesce(pg_xact_status(horizon) <> 'in progress', false) else false end as ended
          from (select aivis_read_horizon(?::text::xid8, ?::bigint, ?::text::xid8) as horizon, pg_current_snapshot() as s
                offset 0) h0) h
  left join lateral (${rows}) e on true`;

/** How many statements a read runs at most while its horizon turns out to be a transaction that has ended. */
const HORIZON_ATTEMPTS = 3;

/**
 * One process's reads below the horizon: it keeps the highest horizon read with (the `p_floor` of the next reads: a
 * reader's horizon never moves back), and reads again when a horizon has ended since the statement's snapshot.
 */
export class HorizonReads {
  private floor = 0n;

  /**
   * Runs `belowHorizon(rows, columns)`; `params(floor)` gives the parameters: the reader's position (txid and position
   * as text, bigint), `floor`, then rows' own. `orderBy`: the order of the result (`e.` columns, which need not be
   * among those sent; the lateral's own order is not the result's). Its rows all carry the same `horizon`.
   */
  async read<R>(
    db: Knex,
    rows: string,
    params: (floor: string) => readonly unknown[],
    { orderBy, columns }: { orderBy?: string; columns?: string } = {},
  ): Promise<(R & { horizon: string })[]> {
    const sql = orderBy ? `${belowHorizon(rows, columns)} order by ${orderBy}` : belowHorizon(rows, columns);
    for (let attempt = 1; ; attempt++) {
      const r = await db.raw(sql, params(this.floor.toString()) as Knex.RawBinding[]);
      const got = r.rows as (R & { horizon: string; ended: boolean })[];
      const h = got.length ? BigInt(got[0].horizon) : 0n;
      if (h > this.floor) this.floor = h;
      if (!got[0]?.ended || attempt === HORIZON_ATTEMPTS) return got;
    }
  }
}
