import type { Knex } from 'knex';
import { EventMetadata } from '../domain/events';
import {
  type AppendResult,
  type EventStore,
  type ExpectedRevision,
  type NewEvent,
  type Position,
  type ReadStreamOptions,
  type RecordedEvent,
  START,
  WrongExpectedRevisionError,
} from './port';

const SCHEMA = `
create table if not exists aivis_events (
  position bigserial primary key,
  txid xid8 not null default pg_current_xact_id(),
  stream_id text not null,
  revision bigint not null,
  event_id uuid not null unique,
  type text not null,
  data jsonb not null,
  metadata jsonb not null,
  recorded_at timestamptz not null default now(),
  unique (stream_id, revision)
);
create index if not exists aivis_events_txid_position on aivis_events (txid, position);

-- One round trip per append (p_data and p_metadata: jsonb arrays parallel to p_ids): skips already-stored event ids, checks the expected revision, writes. The stream's
-- revision is its last event's: the unique (stream_id, revision) index is the optimistic lock (no stream row to update).
create or replace function aivis_append_events(p_stream text, p_expected text, p_ids uuid[], p_types text[],
  p_data jsonb, p_metadata jsonb)
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
        with ins as (
          insert into aivis_events (stream_id, revision, event_id, type, data, metadata)
          select p_stream, v_start + t.k - 1, p_ids[t.o], p_types[t.o], p_data->(t.o - 1), p_metadata->(t.o - 1)
            from unnest(v_keep) with ordinality as t(o, k)
            order by t.k
          on conflict (stream_id, revision) do nothing
          returning aivis_events.position
        ) select count(*), max(ins.position) into v_count, v_position from ins;
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
        with ins as (
          insert into aivis_events (stream_id, revision, event_id, type, data, metadata)
          select p_stream, v_start + t.k - 1, p_ids[t.o], p_types[t.o], p_data->(t.o - 1), p_metadata->(t.o - 1)
            from unnest(v_keep) with ordinality as t(o, k)
            order by t.k
          on conflict (stream_id, revision) do nothing
          returning aivis_events.position
        ) select count(*), max(ins.position) into v_count, v_position from ins;
      end if;
      if v_count <> v_n then
        -- raising rolls back whatever this call inserted
        select max(x.revision) into v_current from aivis_events x where x.stream_id = p_stream;
        raise exception using errcode = 'AV409', message = 'wrong_expected_revision',
          detail = coalesce(v_current::text, 'no_stream');
      end if;
      exit;
    end if;
  end loop;
  return query select v_start + v_n - 1, pg_current_xact_id()::text, v_position, false;
end
$fn$;

-- The same with the events as one jsonb array of {id, type, data, metadata}.
create or replace function aivis_append(p_stream text, p_expected text, p_events jsonb)
returns table (o_revision bigint, o_txid text, o_position bigint, o_noop boolean)
language sql as $fn$
  select * from aivis_append_events(p_stream, p_expected,
    array(select (e->>'id')::uuid from jsonb_array_elements(p_events) with ordinality as t(e, o) order by o),
    array(select e->>'type' from jsonb_array_elements(p_events) with ordinality as t(e, o) order by o),
    (select jsonb_agg(e->'data' order by o) from jsonb_array_elements(p_events) with ordinality as t(e, o)),
    (select jsonb_agg(e->'metadata' order by o) from jsonb_array_elements(p_events) with ordinality as t(e, o)))
$fn$;
`;

interface EventRow {
  position: string;
  txid: string;
  stream_id: string;
  revision: string;
  event_id: string;
  type: string;
  data: unknown;
  metadata: unknown;
  recorded_at: Date;
}

const COLUMNS = 'position, txid::text as txid, stream_id, revision, event_id, type, data, metadata, recorded_at';

function toRecorded(r: EventRow): RecordedEvent {
  return {
    id: r.event_id,
    type: r.type,
    data: r.data,
    // metadata is checked on the way in; a row written by something else is reported by the decoder downstream
    metadata: r.metadata as EventMetadata,
    streamId: r.stream_id,
    revision: BigInt(r.revision),
    position: [BigInt(r.txid), BigInt(r.position)],
    recordedAt: r.recorded_at,
  };
}

export async function migrateEventStore(db: Knex): Promise<void> {
  // serialise concurrent starts: CREATE OR REPLACE FUNCTION races with itself
  await db.transaction(async (trx) => {
    await trx.raw('select pg_advisory_xact_lock(7163401)');
    await trx.raw(SCHEMA);
  });
}

export const APPENDED_CHANNEL = 'aivis_events';

/**
 * The Postgres event store, on a real server or on PGlite (same SQL). With `notify`, appends wake readers in other
 * processes through NOTIFY on APPENDED_CHANNEL, coalesced to at most one in flight so it stays off the hot path.
 */
export async function openPostgresEventStore(db: Knex, options: { notify?: boolean } = {}): Promise<EventStore> {
  await migrateEventStore(db);
  const listeners = new Set<() => void>();
  let notifying = false;
  let notifyAgain = false;
  const notify = () => {
    if (!options.notify) return;
    if (notifying) {
      notifyAgain = true;
      return;
    }
    notifying = true;
    db.raw('select pg_notify(?, ?)', [APPENDED_CHANNEL, ''])
      .catch(() => undefined)
      .finally(() => {
        notifying = false;
        if (notifyAgain) {
          notifyAgain = false;
          notify();
        }
      });
  };

  // the hot path skips knex's query builder: one prepared statement on a pooled connection
  const APPEND = {
    name: 'aivis_append_events',
    text: 'select o_revision, o_txid, o_position, o_noop from aivis_append_events($1, $2, $3::uuid[], $4::text[], $5::jsonb, $6::jsonb)',
  };
  async function callAppend(streamId: string, events: NewEvent[], expected: ExpectedRevision): Promise<AppendResult> {
    const ids = new Array<string>(events.length);
    const types = new Array<string>(events.length);
    for (let i = 0; i < events.length; i++) {
      EventMetadata.parse(events[i].metadata);
      ids[i] = events[i].id;
      types[i] = events[i].type;
    }
    // data and metadata as two JSON arrays: a jsonb[] parameter would escape every quote of every document
    const data = JSON.stringify(events.map((e) => e.data));
    const metadata = JSON.stringify(events.map((e) => e.metadata));
    const conn = (await db.client.acquireConnection()) as { query(q: object): Promise<{ rows: unknown[] }> };
    try {
      const r = await conn.query({ ...APPEND, values: [streamId, String(expected), ids, types, data, metadata] });
      const row = r.rows[0] as { o_revision: string; o_txid: string; o_position: string; o_noop: boolean };
      return { revision: BigInt(row.o_revision), position: [BigInt(row.o_txid), BigInt(row.o_position)], noop: row.o_noop };
    } catch (err) {
      const e = err as { code?: string; detail?: string };
      if (e.code === 'AV409') {
        const actual = e.detail === 'no_stream' || e.detail == null || e.detail === '' ? 'no_stream' : BigInt(e.detail);
        throw new WrongExpectedRevisionError(streamId, expected, actual);
      }
      throw err;
    } finally {
      await db.client.releaseConnection(conn);
    }
  }

  return {
    name: 'postgres',
    async append(streamId, events, expected) {
      if (events.length === 0) throw new Error('append needs at least one event');
      let result: AppendResult;
      try {
        result = await callAppend(streamId, events, expected);
      } catch (err) {
        // a concurrent append of the same event id lost the unique race: the retry sees it stored and is a no-op
        if ((err as { code?: string }).code !== '23505') throw err;
        result = await callAppend(streamId, events, expected);
      }
      if (!result.noop) {
        for (const l of listeners) l();
        notify();
      }
      return result;
    },

    async readStream(streamId, options: ReadStreamOptions = {}) {
      const backwards = options.direction === 'backwards';
      const q = db('aivis_events').select(db.raw(COLUMNS)).where('stream_id', streamId);
      if (options.fromRevision !== undefined) q.where('revision', backwards ? '<=' : '>=', options.fromRevision.toString());
      q.orderBy('revision', backwards ? 'desc' : 'asc');
      if (options.maxCount !== undefined) q.limit(options.maxCount);
      return ((await q) as EventRow[]).map(toRecorded);
    },

    async readAll(after: Position, maxCount: number) {
      // never read past the oldest running transaction: a late commit below it can't be skipped.
      // order by the table's xid8 column, not the `txid` text alias of the select list (text order, and no index)
      const r = await db.raw(
        `select ${COLUMNS} from aivis_events
          where (txid, position) > (?::text::xid8, ?::bigint)
            and txid < pg_snapshot_xmin(pg_current_snapshot())
          order by aivis_events.txid, aivis_events.position limit ?`,
        [after[0].toString(), after[1].toString(), maxCount],
      );
      return (r.rows as EventRow[]).map(toRecorded);
    },

    async headPosition() {
      const r = await db.raw(
        `select txid::text as txid, position from aivis_events
          where txid < pg_snapshot_xmin(pg_current_snapshot())
          order by aivis_events.txid desc, aivis_events.position desc limit 1`,
      );
      const row = r.rows[0] as { txid: string; position: string } | undefined;
      return row ? ([BigInt(row.txid), BigInt(row.position)] as const) : START;
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
