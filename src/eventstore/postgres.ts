import type { Knex } from 'knex';
import { HORIZON_SQL, HorizonReads } from './horizon';
import { onConnection, preferLz4Sql, prepared } from '../db';
import { EventMetadata, knownEventTypes, withSchemaVersion } from '../domain/events';
import {
  type AppendOptions,
  type AppendOutcome,
  type AppendResult,
  type EventStore,
  type ExpectedRevision,
  type NewEvent,
  type Position,
  type ReadStreamOptions,
  type RecordedEvent,
  START,
  StoredEventsError,
  type StoreTransaction,
  type StreamAppend,
  WrongExpectedRevisionError,
} from './port';

/**
 * The append function's insert (both the 'any' retry loop and the expected-revision path): the kept events from
 * revision v_start on, in order; v_count is how many went in (fewer when a concurrent writer took a revision),
 * v_position the last one's position.
 */
const INSERT_KEPT = `with ins as (
          insert into aivis_events (stream_id, revision, event_id, type, data, metadata)
          select p_stream, v_start + t.k - 1, p_ids[t.o], p_types[t.o], d.v, m.v
            from unnest(v_keep) with ordinality as t(o, k)
            left join json_array_elements(p_data) with ordinality as d(v, o) on d.o = t.o
            left join json_array_elements(p_metadata) with ordinality as m(v, o) on m.o = t.o
            order by t.k
          on conflict (stream_id, revision) do nothing
          returning aivis_events.position
        ) select count(*), max(ins.position) into v_count, v_position from ins;`;

/**
 * Both append functions' first check: json keeps what jsonb refuses (\u0000, a lone surrogate; JSON.stringify writes
 * both as \u escapes), so such a document fails here as it would have as jsonb (22P05, 22P02), before anything is
 * written. Only a document holding a \u escape is parsed for it.
 */
const REFUSE_UNSTORABLE = `if strpos(p_data::text, '\\u') > 0 then perform p_data::jsonb; end if;
  if strpos(p_metadata::text, '\\u') > 0 then perform p_metadata::jsonb; end if;`;

const SCHEMA = `
create table if not exists aivis_events (
  position bigserial primary key,
  txid xid8 not null default pg_current_xact_id(),
  stream_id text not null,
  revision bigint not null,
  event_id uuid not null unique,
  type text not null,
  data json not null,
  metadata json not null,
  recorded_at timestamptz not null default now(),
  unique (stream_id, revision)
);
create index if not exists aivis_events_txid_position on aivis_events (txid, position);
-- The documents are kept as written (json, not jsonb): an append parses each one once to check it, a read sends the
-- stored text back, and no query looks inside them. A log from before (jsonb) is converted once; the functions' jsonb
-- signatures go with it.
do $json$ begin
  if exists (select 1 from pg_attribute where attrelid = 'aivis_events'::regclass and attname in ('data', 'metadata')
             and atttypid = 'jsonb'::regtype) then
    alter table aivis_events alter column data type json using data::json, alter column metadata type json using metadata::json;
  end if;
end $json$;
drop function if exists aivis_append_batch(text[], text[], int[], uuid[], text[], jsonb, jsonb);
drop function if exists aivis_append_fresh(text, text, uuid[], text[], jsonb, jsonb);
drop function if exists aivis_append_events(text, text, uuid[], text[], jsonb, jsonb);

-- One round trip per append (p_data and p_metadata: json arrays parallel to p_ids): skips already-stored event ids, checks the expected revision, writes. The stream's
-- revision is its last event's: the unique (stream_id, revision) index is the optimistic lock (no stream row to update).
create or replace function aivis_append_events(p_stream text, p_expected text, p_ids uuid[], p_types text[],
  p_data json, p_metadata json)
returns table (o_revision bigint, o_txid text, o_position bigint, o_noop boolean)
language plpgsql as $fn$
declare
  v_keep int[];
  v_n int;
  v_current bigint;
  v_start bigint;
  v_count bigint;
  v_position bigint;
begin
  ${REFUSE_UNSTORABLE}
  loop
    -- a per-event index probe: a NOT EXISTS anti-join may be cached as a hash join over a seq scan of the whole log
    -- (planned while the table was small, kept until the next ANALYZE), O(log size) per append
    select array_agg(t.o order by t.o) into v_keep
      from unnest(p_ids) with ordinality as t(id, o)
      where (select x.position from aivis_events x where x.event_id = t.id) is null;
    v_n := coalesce(array_length(v_keep, 1), 0);
    if v_n = 0 then
      return query select x.revision, x.txid::text, x.position, true
        from aivis_events x
        where x.event_id = any (p_ids)
        order by x.txid desc, x.position desc limit 1;
      return;
    end if;
    if p_expected = 'any' then
      select coalesce(max(x.revision), -1) + 1 into v_start from aivis_events x where x.stream_id = p_stream;
      begin
        ${INSERT_KEPT}
        exit when v_count = v_n;
        -- a concurrent writer took one of the revisions: undo this attempt and go again
        raise exception using errcode = 'AV410';
      exception when sqlstate 'AV410' then
        null;
      end;
    else
      if p_expected = 'no_stream' then
        v_start := 0;
      else
        v_start := p_expected::bigint + 1;
        -- revisions are dense: the expected one must exist, or the append would leave a gap
        perform 1 from aivis_events x where x.stream_id = p_stream and x.revision = v_start - 1;
        if not found then
          v_count := -1;
        end if;
      end if;
      if v_count is null then
        ${INSERT_KEPT}
      end if;
      if v_count <> v_n then
        -- raising rolls back whatever this call inserted: the actual revision leaves those rows (the kept ids) out
        select max(x.revision) into v_current from aivis_events x
          where x.stream_id = p_stream and x.event_id <> all (array(select p_ids[k] from unnest(v_keep) as k));
        raise exception using errcode = 'AV409', message = 'wrong_expected_revision',
          detail = coalesce(v_current::text, 'no_stream');
      end if;
      exit;
    end if;
  end loop;
  return query select v_start + v_n - 1, pg_current_xact_id()::text, v_position, false;
end
$fn$;

-- Several appends in one transaction (one commit, one WAL flush): each runs in its own subtransaction (the exception
-- block is a savepoint), so a failed append writes nothing and leaves the others in; it is reported by its SQLSTATE.
-- p_counts: events per append; p_ids, p_types, p_data and p_metadata are flat (p_data and p_metadata json arrays).
create or replace function aivis_append_batch(p_streams text[], p_expected text[], p_counts int[], p_ids uuid[],
  p_types text[], p_data json, p_metadata json)
returns table (b_revision bigint, b_txid text, b_position bigint, b_noop boolean, b_code text, b_detail text, b_message text)
-- the planner sizes set-returning functions at 1,000 rows, so the statement below would be costed past jit_above_cost
-- and compiled on every call (a third of a second) for a handful of rows
language plpgsql set jit = off set plan_cache_mode = force_generic_plan as $fn$
declare
  v_off int := 0;
  v_n int;
  v_m int := coalesce(array_length(p_streams, 1), 0);
  v_count int;
  v_pos bigint[];
  v_rev bigint[];
  v_txid text;
  r record;
begin
  ${REFUSE_UNSTORABLE}
  -- The usual batch (distinct streams, new ids, expected revisions that hold) goes in as one statement in one
  -- subtransaction; anything else (a stored id, a conflict, a stream twice) undoes it and goes append by append below.
  if v_m > 1 and 0 < all (p_counts) and (select count(distinct s) from unnest(p_streams) as s) = v_m then
    begin
      with app as (
        select i, p_streams[i] as s, p_expected[i] as e, p_counts[i] as n,
               (sum(p_counts[i]) over (order by i) - p_counts[i])::int as off
          from generate_subscripts(p_streams, 1) as i
      ), st as (
        select app.*,
               case when e = 'no_stream' then 0::bigint
                    when e = 'any' then (select coalesce(max(x.revision), -1) + 1 from aivis_events x where x.stream_id = s)
                    else e::bigint + 1 end as start,
               -- revisions are dense: an exact expected revision must exist
               case when e in ('no_stream', 'any') then true
                    else (select x.position from aivis_events x where x.stream_id = s and x.revision = e::bigint) is not null end as dense
          from app
      ), ins as (
        insert into aivis_events (stream_id, revision, event_id, type, data, metadata)
        select st.s, st.start + k - 1, p_ids[st.off + k], p_types[st.off + k], d.v, m.v
          from st cross join lateral generate_series(1, st.n) as k
          -- left joins: a document missing from the arrays is a null, refused by the column as before
          left join json_array_elements(p_data) with ordinality as d(v, o) on d.o = st.off + k
          left join json_array_elements(p_metadata) with ordinality as m(v, o) on m.o = st.off + k
         where st.dense
           -- a per-event index probe, not an anti-join (see aivis_append_events)
           and (select x.position from aivis_events x where x.event_id = p_ids[st.off + k]) is null
         order by st.i, k
        on conflict (stream_id, revision) do nothing
        returning aivis_events.revision, aivis_events.position
      )
      -- positions are drawn in insert order, so sorted by position the rows are in (append, event) order
      select count(*), array_agg(ins.position order by ins.position), array_agg(ins.revision order by ins.position)
        into v_count, v_pos, v_rev from ins;
      if v_count <> coalesce(array_length(p_ids, 1), 0) then
        raise exception using errcode = 'AV410';
      end if;
    exception when others then
      v_count := null;
    end;
    if v_count is not null then
      v_txid := pg_current_xact_id()::text;
      for i in 1 .. v_m loop
        v_off := v_off + p_counts[i];
        b_revision := v_rev[v_off]; b_txid := v_txid; b_position := v_pos[v_off]; b_noop := false;
        b_code := null; b_detail := null; b_message := null;
        return next;
      end loop;
      return;
    end if;
  end if;
  for i in 1 .. v_m loop
    v_n := p_counts[i];
    b_revision := null; b_txid := null; b_position := null; b_noop := null; b_code := null; b_detail := null; b_message := null;
    begin
      select * into strict r from aivis_append_events(p_streams[i], p_expected[i], p_ids[v_off + 1 : v_off + v_n],
        p_types[v_off + 1 : v_off + v_n],
        (select coalesce(json_agg(d.v order by d.o), '[]') from json_array_elements(p_data) with ordinality as d(v, o) where d.o between v_off + 1 and v_off + v_n),
        (select coalesce(json_agg(m.v order by m.o), '[]') from json_array_elements(p_metadata) with ordinality as m(v, o) where m.o between v_off + 1 and v_off + v_n));
      b_revision := r.o_revision; b_txid := r.o_txid; b_position := r.o_position; b_noop := r.o_noop;
    exception when others then
      get stacked diagnostics b_code = returned_sqlstate, b_detail = pg_exception_detail, b_message = message_text;
    end;
    return next;
    v_off := v_off + v_n;
  end loop;
end
$fn$;

-- An append that refuses event ids stored in other streams (AppendOptions storedIds 'refuse'): the append above, then
-- every id must be in this stream; if not, raising undoes the write and names those ids. One statement: an id committed
-- by a concurrent transaction in between is seen here (the check is a later statement) or fails the insert (23505).
create or replace function aivis_append_fresh(p_stream text, p_expected text, p_ids uuid[], p_types text[],
  p_data json, p_metadata json)
returns table (o_revision bigint, o_txid text, o_position bigint, o_noop boolean)
language plpgsql as $fn$
declare
  r record;
  v_elsewhere text;
begin
  select * into strict r from aivis_append_events(p_stream, p_expected, p_ids, p_types, p_data, p_metadata);
  select string_agg(t.id::text, ',') into v_elsewhere
    from unnest(p_ids) as t(id)
    where (select x.stream_id from aivis_events x where x.event_id = t.id) is distinct from p_stream;
  if v_elsewhere is not null then
    raise exception using errcode = 'AV412', message = 'stored_event_ids', detail = v_elsewhere;
  end if;
  return query select r.o_revision, r.o_txid, r.o_position, r.o_noop;
end
$fn$;

-- The same with the events as one jsonb array of {id, type, data, metadata}.
create or replace function aivis_append(p_stream text, p_expected text, p_events jsonb)
returns table (o_revision bigint, o_txid text, o_position bigint, o_noop boolean)
language sql as $fn$
  select * from aivis_append_events(p_stream, p_expected,
    array(select (e->>'id')::uuid from jsonb_array_elements(p_events) with ordinality as t(e, o) order by o),
    array(select e->>'type' from jsonb_array_elements(p_events) with ordinality as t(e, o) order by o),
    (select jsonb_agg(e->'data' order by o) from jsonb_array_elements(p_events) with ordinality as t(e, o))::json,
    (select jsonb_agg(e->'metadata' order by o) from jsonb_array_elements(p_events) with ordinality as t(e, o))::json)
$fn$;
`;

interface EventRow {
  /** the event's other columns as one text (HEAD) */
  head: string;
  /** null: a scanned event the reader does not want (its head is then `position txid`) */
  type: string | null;
  data: unknown;
  metadata: unknown;
}

/**
 * An event's numbers, id and stream as one text: `position txid revision recorded_ms event_id stream_id` (recorded_at
 * in milliseconds; the stream id last, as it may hold spaces). pg makes a string of each column of each row through a
 * native call: a catch-up read spent more node CPU in that than Postgres spent on the whole read, and one text costs
 * Postgres no more than sending the columns.
 */
const HEAD = `concat_ws(' ', position, txid, revision, floor(extract(epoch from recorded_at) * 1000)::bigint, event_id, stream_id)`;
const COLUMNS = `${HEAD} as head, type, data, metadata`;
/** what a read below the horizon sends of its lateral `e` (its order keys stay behind) */
const SENT = 'e.head, e.type, e.data, e.metadata';

const READ_FORWARD = `select ${COLUMNS} from aivis_events where stream_id = $1 and revision >= $2::bigint order by revision limit $3::bigint`;
const READ_BACK = `select ${COLUMNS} from aivis_events where stream_id = $1 and revision <= $2::bigint order by revision desc limit $3::bigint`;
const MAX_REVISION = '9223372036854775807';

/** The catalogue's type names: the log's type, read as a fresh string, is swapped for the interned one every lookup by type then uses. */
const TYPE_NAMES = new Map<string, string>(knownEventTypes().map((t) => [t, t]));

/** the bigint of the last txid read: a batch's events come from a few transactions */
let lastTxid: { text: string; value: bigint } = { text: '', value: 0n };

/** The position of a head (its first two fields). */
function positionOf(head: string, a = head.indexOf(' '), b = head.indexOf(' ', a + 1)): Position {
  const text = b < 0 ? head.slice(a + 1) : head.slice(a + 1, b);
  if (text !== lastTxid.text) lastTxid = { text, value: BigInt(text) };
  return [lastTxid.value, BigInt(head.slice(0, a))];
}

function toRecorded(r: EventRow): RecordedEvent {
  const h = r.head;
  const a = h.indexOf(' ');
  const b = h.indexOf(' ', a + 1);
  const c = h.indexOf(' ', b + 1);
  const d = h.indexOf(' ', c + 1);
  const e = h.indexOf(' ', d + 1);
  const type = r.type!;
  return {
    id: h.slice(d + 1, e),
    type: TYPE_NAMES.get(type) ?? type,
    data: r.data,
    // metadata is checked on the way in; a row written by something else is reported by the decoder downstream
    metadata: r.metadata as EventMetadata,
    streamId: h.slice(e + 1),
    revision: BigInt(h.slice(b + 1, c)),
    position: positionOf(h, a, b),
    recordedAt: new Date(Number(h.slice(c + 1, d))),
  };
}

export async function migrateEventStore(db: Knex): Promise<void> {
  // serialise concurrent starts: CREATE OR REPLACE FUNCTION races with itself
  await db.transaction(async (trx) => {
    await trx.raw('select pg_advisory_xact_lock(7163401)');
    await trx.raw(SCHEMA);
    await trx.raw(HORIZON_SQL);
    await trx.raw(preferLz4Sql('aivis_events', ['data', 'metadata']));
  });
}

export const APPENDED_CHANNEL = 'aivis_events';

/** Commit batching: concurrent appends of this process share one transaction (one WAL flush) instead of one each. */
export interface AppendBatching {
  /** appends (alone or batched) running on the server at once; more wait and go together as the next batch */
  maxInFlight?: number;
  /** appends per batch */
  maxAppends?: number;
  /** events per batch (a batch takes at least one append) */
  maxEvents?: number;
  /**
   * a dispatch running this long (ms; a lock wait, say) stops counting against maxInFlight, so it can't hold up the
   * others (default 20); the next batch then runs beside it, so appends issued later may commit first
   */
  stallMs?: number;
}

const STALL_MS = 20;
// a batch's append that lost a race with another transaction (same event id, a deadlock) is retried alone, as today
const RETRY_ALONE = new Set(['23505', '40P01', '40001']);
const RETRY_TRANSACT = new Set(['40P01', '40001']);

interface Prepared {
  streamId: string;
  expected: ExpectedRevision;
  ids: string[];
  types: string[];
  /** JSON arrays of the events' data and metadata */
  data: string;
  metadata: string;
}

/** The appends' JSON arrays as one flat array (the batch's p_data, parallel to its flat p_ids): each without its brackets. */
function flatJson(arrays: readonly string[]): string {
  let out = '';
  for (const a of arrays) {
    if (a.length <= 2) continue;
    out += out ? `,${a.slice(1, -1)}` : a.slice(1, -1);
  }
  return `[${out}]`;
}

interface Pending {
  p: Prepared;
  resolve(r: AppendResult): void;
  reject(err: unknown): void;
}

type Conn = { query(q: object): Promise<{ rows: unknown[] }> };

function conflict(p: Prepared, detail: string | null | undefined): WrongExpectedRevisionError {
  const actual = detail === 'no_stream' || detail == null || detail === '' ? 'no_stream' : BigInt(detail);
  return new WrongExpectedRevisionError(p.streamId, p.expected, actual);
}

/**
 * The Postgres event store, on a real server or on PGlite (same SQL). With `notify`, appends wake readers in other
 * processes through NOTIFY on APPENDED_CHANNEL, sent by the append's own statement.
 * On a real server (unless `batch: false`), appends that arrive while others are running are committed together.
 */
export async function openPostgresEventStore(db: Knex, options: { notify?: boolean; batch?: boolean | AppendBatching } = {}): Promise<EventStore> {
  await migrateEventStore(db);
  // PGlite has one connection and no WAL flush worth sharing: it keeps one transaction per append
  const batching =
    options.batch === false
      ? null
      : options.batch === undefined && /PGlite/i.test(((await db.raw('select version() as v')).rows[0] as { v: string }).v)
        ? null
        : // one batch in flight, as a single-writer log has: on 2 cores, 8 writers reach ~5.5-6.3k appends/s with one
          // (batches of ~8), ~4.5k with two (batches of ~4 cost twice the CPU per append)
          { maxInFlight: 1, maxAppends: 48, maxEvents: 2000, stallMs: STALL_MS, ...(typeof options.batch === 'object' ? options.batch : {}) };
  const listeners = new Set<() => void>();
  // how far this process's readers have read: their horizon never moves back (horizon.ts)
  const horizon = new HorizonReads();

  // the hot path skips knex's query builder: one prepared statement on a pooled connection
  // with `notify`, the append's own statement wakes the other processes' readers (delivered at commit, once per
  // transaction however many rows ask): no round trip of its own
  const wake = options.notify ? `, pg_notify('${APPENDED_CHANNEL}', '')` : '';
  const APPEND = {
    name: `aivis_append_events${wake ? '_n' : ''}`,
    text: `select o_revision, o_txid, o_position, o_noop${wake} from aivis_append_events($1, $2, $3::uuid[], $4::text[], $5::json, $6::json)`,
  };
  const APPEND_BATCH = {
    name: `aivis_append_batch${wake ? '_n' : ''}`,
    text: `select b_revision, b_txid, b_position, b_noop, b_code, b_detail, b_message${wake} from aivis_append_batch($1::text[], $2::text[], $3::int[], $4::uuid[], $5::text[], $6::json, $7::json)`,
  };

  const APPEND_FRESH = {
    name: `aivis_append_fresh${wake ? '_n' : ''}`,
    text: `select o_revision, o_txid, o_position, o_noop${wake} from aivis_append_fresh($1, $2, $3::uuid[], $4::text[], $5::json, $6::json)`,
  };

  function prepare(streamId: string, events: NewEvent[], expected: ExpectedRevision): Prepared {
    const ids = new Array<string>(events.length);
    const types = new Array<string>(events.length);
    for (let i = 0; i < events.length; i++) {
      EventMetadata.parse(events[i].metadata);
      ids[i] = events[i].id;
      types[i] = events[i].type;
    }
    // data and metadata as two JSON arrays: a jsonb[] parameter would escape every quote of every document
    const data = JSON.stringify(events.map((e) => e.data));
    const metadata = JSON.stringify(events.map((e) => withSchemaVersion(e.type, e.metadata)));
    return { streamId, expected, ids, types, data, metadata };
  }

  const withConnection = <T>(fn: (conn: Conn) => Promise<T>): Promise<T> => onConnection(db, fn);

  /** One stream's append on `conn` (a pooled connection, or a transaction's). */
  async function appendOn(conn: Conn, p: Prepared, fresh = false): Promise<AppendResult> {
    try {
      const r = await conn.query({
        ...(fresh ? APPEND_FRESH : APPEND),
        values: [p.streamId, String(p.expected), p.ids, p.types, p.data, p.metadata],
      });
      const row = r.rows[0] as { o_revision: string; o_txid: string; o_position: string; o_noop: boolean };
      return { revision: BigInt(row.o_revision), position: [BigInt(row.o_txid), BigInt(row.o_position)], noop: row.o_noop };
    } catch (err) {
      const e = err as { code?: string; detail?: string };
      if (e.code === 'AV409') throw conflict(p, e.detail);
      if (e.code === 'AV412') throw new StoredEventsError(p.streamId, (e.detail ?? '').split(',').filter(Boolean));
      throw err;
    }
  }

  const callAppend = (p: Prepared, fresh = false): Promise<AppendResult> => withConnection((conn) => appendOn(conn, p, fresh));

  async function appendAlone(p: Prepared, fresh = false): Promise<AppendResult> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await callAppend(p, fresh);
      } catch (err) {
        // a concurrent append of the same event id lost the unique race: the retry sees it stored and is a no-op
        // (fresh: refused, naming every id stored by then; several writers racing for overlapping ids may take a few)
        const e = err as { code?: string; detail?: string };
        if (e.code !== '23505' || attempt >= (fresh ? 5 : 2)) {
          const id = fresh && e.code === '23505' ? /\(event_id\)=\(([0-9a-f-]{36})\)/.exec(e.detail ?? '')?.[1] : undefined;
          // the id the insert collided with was committed by the other writer (had it rolled back, the insert would go on)
          if (id) throw new StoredEventsError(p.streamId, [id]);
          throw err;
        }
      }
    }
  }

  interface BatchRow {
    b_revision: string | null;
    b_txid: string | null;
    b_position: string | null;
    b_noop: boolean | null;
    b_code: string | null;
    b_detail: string | null;
    b_message: string | null;
  }

  /** One transaction for several appends; each caller gets its own outcome once it has committed. */
  async function runBatch(take: Pending[]): Promise<void> {
    const streams: string[] = [];
    const expected: string[] = [];
    const counts: number[] = [];
    const ids: string[] = [];
    const types: string[] = [];
    const data: string[] = [];
    const metadata: string[] = [];
    for (const { p } of take) {
      streams.push(p.streamId);
      expected.push(String(p.expected));
      counts.push(p.ids.length);
      for (let i = 0; i < p.ids.length; i++) {
        ids.push(p.ids[i]);
        types.push(p.types[i]);
      }
      data.push(p.data);
      metadata.push(p.metadata);
    }
    let rows: BatchRow[];
    try {
      rows = await withConnection(
        async (conn) =>
          (await conn.query({ ...APPEND_BATCH, values: [streams, expected, counts, ids, types, flatJson(data), flatJson(metadata)] }))
            .rows as BatchRow[],
      );
    } catch (err) {
      // the statement failed on an input (a malformed id, say) before anything committed: each append alone, in
      // order, gets the outcome it would have had
      if (/^(22|23|54)/.test((err as { code?: string }).code ?? '')) {
        for (const x of take) await appendAlone(x.p).then(x.resolve, x.reject);
        return;
      }
      // the transaction (or its commit) failed: none of the batch is known to be stored
      for (const x of take) x.reject(err);
      return;
    }
    const retry: Pending[] = [];
    for (let i = 0; i < take.length; i++) {
      const row = rows[i];
      const x = take[i];
      if (row.b_code === null) {
        x.resolve({ revision: BigInt(row.b_revision!), position: [BigInt(row.b_txid!), BigInt(row.b_position!)], noop: row.b_noop! });
      } else if (row.b_code === 'AV409') {
        x.reject(conflict(x.p, row.b_detail));
      } else if (RETRY_ALONE.has(row.b_code)) {
        retry.push(x);
      } else {
        x.reject(Object.assign(new Error(row.b_message ?? row.b_code), { code: row.b_code, detail: row.b_detail ?? undefined }));
      }
    }
    for (const x of retry) await appendAlone(x.p).then(x.resolve, x.reject);
  }

  const queue: Pending[] = [];
  const inFlight = new Set<{ since: number }>();
  // biome-ignore lint/correctness/noUnusedVariables: read by `??=` below, so at most one stall timer is pending
  let stallTimer: ReturnType<typeof setTimeout> | null = null;

  function pump(): void {
    const b = batching!;
    while (queue.length > 0) {
      const now = Date.now();
      let stalled = 0;
      for (const d of inFlight) if (now - d.since >= b.stallMs) stalled++;
      if (inFlight.size >= b.maxInFlight + stalled) {
        stallTimer ??= setTimeout(() => {
          stallTimer = null;
          pump();
        }, b.stallMs);
        return;
      }
      let n = 1;
      let events = queue[0].p.ids.length;
      while (n < queue.length && n < b.maxAppends && events + queue[n].p.ids.length <= b.maxEvents) events += queue[n++].p.ids.length;
      const take = queue.splice(0, n);
      const d = { since: now };
      inFlight.add(d);
      // the slot frees after the callers' continuations have run: the appends they make next go out as one batch
      const done = () =>
        setImmediate(() => {
          inFlight.delete(d);
          pump();
        });
      if (take.length === 1) appendAlone(take[0].p).then(take[0].resolve, take[0].reject).finally(done);
      else runBatch(take).finally(done);
    }
  }

  function enqueue(p: Prepared): Promise<AppendResult> {
    return new Promise<AppendResult>((resolve, reject) => {
      queue.push({ p, resolve, reject });
      pump();
    });
  }

  return {
    name: 'postgres',
    async append(streamId, events, expected, options?: AppendOptions) {
      if (events.length === 0) throw new Error('append needs at least one event');
      const p = prepare(streamId, events, expected);
      // a refusing append goes alone: the batch statement would undo and redo it anyway
      const fresh = options?.storedIds === 'refuse';
      const result = fresh ? await appendAlone(p, true) : batching ? await enqueue(p) : await appendAlone(p);
      if (!result.noop) for (const l of listeners) l();
      return result;
    },

    async appendMany(appends: StreamAppend[]) {
      const outcomes: AppendOutcome[] = new Array(appends.length);
      const take: Pending[] = appends.map((a, i) => {
        if (a.events.length === 0) throw new Error('append needs at least one event');
        return {
          p: prepare(a.streamId, a.events, a.expected),
          resolve: (result) => {
            outcomes[i] = { ok: true, result };
          },
          reject: (error) => {
            outcomes[i] = { ok: false, error };
          },
        };
      });
      // one statement, one transaction: not through the commit-batching queue, whose batches are capped in size
      if (take.length === 1) await appendAlone(take[0].p).then(take[0].resolve, take[0].reject);
      else await runBatch(take);
      if (outcomes.some((o) => o.ok && !o.result.noop)) for (const l of listeners) l();
      return outcomes;
    },

    async transact<T>(work: (tx: StoreTransaction) => Promise<T>): Promise<T> {
      for (let attempt = 1; ; attempt++) {
        let appended = false;
        try {
          const out = await db.transaction((trx) =>
            work({
              trx,
              async append(streamId, events, expected) {
                if (events.length === 0) throw new Error('append needs at least one event');
                // the transaction's own connection (knex's transaction client hands out the one it holds)
                const r = await appendOn((await trx.client.acquireConnection()) as Conn, prepare(streamId, events, expected));
                if (!r.noop) appended = true;
                return r;
              },
            }),
          );
          if (appended) for (const l of listeners) l();
          return out;
        } catch (err) {
          // two transactions that wait on each other's rows: the one Postgres stopped runs again
          if (attempt < 4 && RETRY_TRANSACT.has((err as { code?: string }).code ?? '')) continue;
          throw err;
        }
      }
    },

    async readStream(streamId, options: ReadStreamOptions = {}) {
      const backwards = options.direction === 'backwards';
      // one named statement a direction (prepared() in src/db.ts): no revision bound reads from the first (or the last) revision,
      // no count is LIMIT ALL
      const rows = await prepared<EventRow>(db, backwards ? 'aivis_read_stream_back' : 'aivis_read_stream', backwards ? READ_BACK : READ_FORWARD, [
        streamId,
        options.fromRevision?.toString() ?? (backwards ? MAX_REVISION : '0'),
        options.maxCount ?? null,
      ]);
      return rows.map(toRecorded);
    },

    async readAll(after: Position, maxCount: number) {
      // never read past the oldest running transaction that may append (horizon.ts): a late commit below it can't be
      // skipped. Order by the table's xid8 column (x8, not sent)
      const at = [after[0].toString(), after[1].toString()];
      const rows = await horizon.read<EventRow>(
        db,
        `select ${COLUMNS}, txid as x8, position from aivis_events
            where (txid, position) > (?::text::xid8, ?::bigint) and txid < h.horizon
            order by aivis_events.txid, aivis_events.position limit ?`,
        (floor) => [...at, floor, ...at, maxCount],
        { orderBy: 'e.x8, e.position', columns: SENT },
      );
      return rows.filter((row) => row.head !== null).map(toRecorded);
    },

    async readAllOfTypes(
      after: Position,
      maxCount: number,
      types: readonly string[],
      known: readonly string[],
      streamPrefixes: Readonly<Record<string, string>> = {},
    ) {
      const prefixed = Object.entries(streamPrefixes).filter(([t]) => types.includes(t));
      const at = [after[0].toString(), after[1].toString()];
      const plain = types.filter((t) => !(t in streamPrefixes));
      // one index scan; the payloads of the other types are neither sent nor parsed, only their `position txid` (a
      // join back to the table would need a plan the planner cannot cost: it has no row count for the scanned range)
      const all = await horizon.read<EventRow>(
        db,
        `select txid as x8, position, case when hit then ${HEAD} else concat_ws(' ', position, txid) end as head,
                case when hit then type end as type, case when hit then data end as data, case when hit then metadata end as metadata
           from (select *, (type = any(?::text[]) or type <> all(?::text[])
                            or exists (select 1 from unnest(?::text[], ?::text[]) as p(t, prefix) where p.t = type and starts_with(stream_id, p.prefix))) as hit
                   from aivis_events
                  where (txid, position) > (?::text::xid8, ?::bigint) and txid < h.horizon
                  order by aivis_events.txid, aivis_events.position limit ?) scanned`,
        (floor) => [...at, floor, plain, known as string[], prefixed.map(([t]) => t), prefixed.map(([, p]) => p), ...at, maxCount],
        { orderBy: 'e.x8, e.position', columns: SENT },
      );
      const rows = all.filter((row) => row.head !== null);
      const events: RecordedEvent[] = [];
      for (const row of rows) if (row.type !== null) events.push(toRecorded(row));
      const last = rows[rows.length - 1];
      return { events, scanned: rows.length, scannedTo: last ? positionOf(last.head) : after };
    },

    async headPosition() {
      const rows = await horizon.read<{ txid: string | null; position: string | null }>(
        db,
        `select txid::text as txid, position from aivis_events
          where txid < h.horizon order by aivis_events.txid desc, aivis_events.position desc limit 1`,
        (floor) => ['0', '0', floor],
      );
      const row = rows[0];
      return row?.txid ? ([BigInt(row.txid), BigInt(row.position!)] as const) : START;
    },

    async lastPosition() {
      const r = await db.raw(
        `select txid::text as txid, position from aivis_events order by aivis_events.txid desc, aivis_events.position desc limit 1`,
      );
      const row = r.rows[0] as { txid: string; position: string } | undefined;
      return row ? ([BigInt(row.txid), BigInt(row.position)] as const) : START;
    },

    onAppend(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },

    async ping() {
      await db.raw('select 1 from aivis_events limit 1');
    },

    async close() {
      listeners.clear();
    },
  };
}
