import {
  ANY,
  BACKWARDS,
  END,
  ErrorType,
  EventStoreDBClient,
  FORWARDS,
  NO_STREAM,
  START as ESDB_START,
  StreamNotFoundError,
  WrongExpectedVersionError,
  type AllStreamResolvedEvent,
  type AppendExpectedRevision,
  type EventData,
  type JSONType,
  type ReadPosition,
  type ReadRevision,
  type ResolvedEvent,
  type StreamingRead,
} from '@eventstore/db-client';
import { EventMetadata, withSchemaVersion } from '../domain/events';
import type { AppendResult, EventStore, ExpectedRevision, NewEvent, Position, ReadStreamOptions, RecordedEvent } from './port';
import { START, WrongExpectedRevisionError, comparePositions } from './port';

/** Events of one stream are scanned backwards in pages of this size when looking for already-stored ids. */
const STREAM_PAGE = 256;
/** Page size when walking $all (which also holds system events that are filtered out here). */
const ALL_PAGE_MIN = 64;
const ALL_PAGE_MAX = 4096;

type EsdbRecorded = NonNullable<ResolvedEvent['event']> | NonNullable<AllStreamResolvedEvent['event']>;

const isSystem = (e: { type: string; streamId: string }): boolean => e.type.startsWith('$') || e.streamId.startsWith('$');

function isWrongExpectedVersion(err: unknown): err is WrongExpectedVersionError {
  return (
    err instanceof WrongExpectedVersionError ||
    (typeof err === 'object' && err !== null && (err as { type?: unknown }).type === ErrorType.WRONG_EXPECTED_VERSION)
  );
}

function isStreamNotFound(err: unknown): boolean {
  return (
    err instanceof StreamNotFoundError || (typeof err === 'object' && err !== null && (err as { type?: unknown }).type === ErrorType.STREAM_NOT_FOUND)
  );
}

const NO_POSITION = 0xffff_ffff_ffff_ffffn;

/**
 * The event's $all position. Events appended through gRPC are written as implicitly committed prepares,
 * whose $all position is [log position, log position]; a stream read may report the write's transaction
 * (first prepare) position as the commit part instead, so a commit below the prepare is normalised to the
 * prepare. A commit above the prepare (a legacy explicit transaction) is kept as it is.
 */
function positionOf(e: EsdbRecorded): Position {
  const p = e.position;
  if (!p || p.commit === NO_POSITION || p.prepare === NO_POSITION) {
    // stream reads carry positions only on servers newer than 22.6
    throw new Error(`EventStoreDB returned event ${e.id} without a position (server older than 22.6?)`);
  }
  return p.commit < p.prepare ? [p.prepare, p.prepare] : [p.commit, p.prepare];
}

/** JSON as stored; an event written elsewhere as binary is decoded as JSON when it is JSON, else kept as text. */
function decode(value: unknown): unknown {
  if (!(value instanceof Uint8Array)) return value;
  const text = Buffer.from(value).toString('utf8');
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function toRecorded(e: EsdbRecorded, position: Position = positionOf(e)): RecordedEvent {
  return {
    id: e.id,
    type: e.type,
    data: decode(e.data),
    // checked on the way in; an event written by something else is reported by the decoder downstream
    metadata: decode(e.metadata) as EventMetadata,
    streamId: e.streamId,
    revision: e.revision,
    position,
    recordedAt: e.created,
  };
}

async function collect<T>(read: StreamingRead<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of read) out.push(item as T);
  return out;
}

/** The EventStoreDB event store (gRPC client). Position = [commit, prepare]; system events are hidden. */
export async function openEsdbEventStore(connectionString: string): Promise<EventStore> {
  const client = EventStoreDBClient.connectionString(connectionString);
  const listeners = new Set<() => void>();

  async function readStreamRaw(
    streamId: string,
    options: { direction: typeof FORWARDS | typeof BACKWARDS; fromRevision: ReadRevision; maxCount?: number | bigint },
  ): Promise<RecordedEvent[]> {
    try {
      const resolved = await collect(client.readStream(streamId, options));
      const out: RecordedEvent[] = [];
      for (const r of resolved) if (r.event) out.push(toRecorded(r.event));
      return out;
    } catch (err) {
      if (isStreamNotFound(err)) return [];
      throw err;
    }
  }

  /** A page of $all with each entry's position; system events are kept here (callers skip them unconverted). */
  async function readAllRaw(from: ReadPosition, direction: typeof FORWARDS | typeof BACKWARDS, maxCount: number) {
    const resolved = await collect(client.readAll({ fromPosition: from, direction, maxCount }));
    const out: { position: Position; system: boolean; event: EsdbRecorded }[] = [];
    for (const r of resolved) {
      if (r.event) out.push({ position: positionOf(r.event), system: isSystem(r.event), event: r.event });
    }
    return out;
  }

  /**
   * Looks for the given event ids in the stream, newest first, stopping once all are found.
   * EventStoreDB's own idempotency is per stream and best-effort (and does not say whether a write was a
   * duplicate), so the adapter checks itself to report `noop` reliably.
   */
  async function findStored(streamId: string, ids: string[]): Promise<Map<string, RecordedEvent>> {
    const found = new Map<string, RecordedEvent>();
    const wanted = new Set(ids.map((i) => i.toLowerCase()));
    let from: ReadRevision = END;
    for (;;) {
      const page = await readStreamRaw(streamId, { direction: BACKWARDS, fromRevision: from, maxCount: STREAM_PAGE });
      for (const e of page) {
        const key = e.id.toLowerCase();
        if (wanted.has(key) && !found.has(key)) found.set(key, e);
      }
      if (found.size === wanted.size || page.length < STREAM_PAGE) return found;
      const oldest = page[page.length - 1].revision;
      if (oldest === 0n) return found;
      from = oldest - 1n;
    }
  }

  /** The result a re-append gets: the stored copy of its last event, as the first append reported it. */
  function noopResult(events: NewEvent[], found: Map<string, RecordedEvent>): AppendResult {
    const last = found.get(events[events.length - 1].id.toLowerCase())!;
    return { revision: last.revision, position: last.position, noop: true };
  }

  const toEsdbExpected = (expected: ExpectedRevision): AppendExpectedRevision =>
    expected === 'no_stream' ? NO_STREAM : expected === 'any' ? ANY : expected;

  const toEventData = (e: NewEvent): EventData =>
    ({
      id: e.id,
      contentType: 'application/json',
      type: e.type,
      data: e.data as JSONType,
      metadata: withSchemaVersion(e.type, e.metadata) as unknown as JSONType,
    }) as EventData;

  async function positionAt(streamId: string, revision: bigint, fallback: Position | undefined): Promise<Position> {
    const [e] = await readStreamRaw(streamId, { direction: FORWARDS, fromRevision: revision, maxCount: 1 });
    if (e && e.revision === revision) return e.position;
    if (fallback) return fallback;
    throw new Error(`stream ${streamId}: appended revision ${revision} could not be read back`);
  }

  const store: EventStore = {
    name: 'eventstoredb',

    // AppendOptions.storedIds 'refuse' is honoured within the stream only: EventStoreDB keeps no index of event ids
    // across streams (an id stored in another stream is written again, as with 'skip')
    async append(streamId, events, expected) {
      if (events.length === 0) throw new Error('append needs at least one event');
      for (const e of events) EventMetadata.parse(e.metadata);
      const ids = events.map((e) => e.id);
      const stored = await findStored(streamId, ids);
      if (stored.size === events.length) return noopResult(events, stored);
      // as in the Postgres store: already-stored ids are skipped, the rest is checked against `expected`
      const fresh = events.filter((e) => !stored.has(e.id.toLowerCase()));

      let written: Awaited<ReturnType<typeof client.appendToStream>>;
      try {
        written = await client.appendToStream(streamId, fresh.map(toEventData), {
          expectedRevision: toEsdbExpected(expected),
        });
      } catch (err) {
        if (!isWrongExpectedVersion(err)) throw err;
        // a retried command whose first attempt landed in between: report the stored copy, not a conflict
        const again = await findStored(streamId, ids);
        if (again.size === events.length) return noopResult(events, again);
        const actual = err.actualVersion;
        throw new WrongExpectedRevisionError(streamId, expected, typeof actual === 'bigint' ? actual : 'no_stream');
      }
      const revision = written.nextExpectedRevision;
      const fallback: Position | undefined = written.position ? [written.position.commit, written.position.prepare] : undefined;
      // the append response's position is the commit's; read the last event back for its own position
      const position = await positionAt(streamId, revision, fallback);
      for (const l of listeners) {
        try {
          l();
        } catch {
          // a listener is only a wake-up hint
        }
      }
      return { revision, position, noop: false };
    },

    async readStream(streamId, options: ReadStreamOptions = {}) {
      const direction = options.direction === 'backwards' ? BACKWARDS : FORWARDS;
      const fromRevision: ReadRevision = options.fromRevision ?? (direction === BACKWARDS ? END : ESDB_START);
      if (options.maxCount !== undefined && options.maxCount <= 0) return [];
      return readStreamRaw(streamId, { direction, fromRevision, maxCount: options.maxCount });
    },

    async readAll(after: Position, maxCount: number) {
      if (maxCount <= 0) return [];
      const out: RecordedEvent[] = [];
      // $all has no server-side filter on reads in this client, so system events are dropped here
      const pageSize = Math.min(Math.max(maxCount + 1, ALL_PAGE_MIN), ALL_PAGE_MAX);
      let cursor: Position = after;
      for (;;) {
        const from: ReadPosition = comparePositions(cursor, START) <= 0 ? ESDB_START : { commit: cursor[0], prepare: cursor[1] };
        const page = await readAllRaw(from, FORWARDS, pageSize);
        for (const e of page) {
          // reading from a position includes the event at it: strictly after
          if (comparePositions(e.position, cursor) <= 0) continue;
          cursor = e.position;
          if (e.system) continue;
          out.push(toRecorded(e.event, e.position));
          if (out.length >= maxCount) return out;
        }
        if (page.length < pageSize) return out;
      }
    },

    async headPosition() {
      // newest first; positions are exclusive upper bounds when reading backwards, filtered here anyway
      let before: Position | null = null;
      for (;;) {
        const from: ReadPosition = before ? { commit: before[0], prepare: before[1] } : END;
        const page = await readAllRaw(from, BACKWARDS, ALL_PAGE_MIN);
        let progressed = false;
        for (const e of page) {
          if (before && comparePositions(e.position, before) >= 0) continue;
          progressed = true;
          before = e.position;
          if (!e.system) return e.position;
        }
        if (!progressed || page.length < ALL_PAGE_MIN) return START;
      }
    },

    // EventStoreDB has no visibility horizon: what is committed is readable
    lastPosition() {
      return store.headPosition();
    },

    onAppend(listener) {
      listeners.add(listener);
      return () => {
        listeners.delete(listener);
      };
    },

    async ping() {
      await collect(client.readAll({ fromPosition: END, direction: BACKWARDS, maxCount: 1 }));
    },

    async close() {
      listeners.clear();
      await client.dispose();
    },
  };
  return store;
}
