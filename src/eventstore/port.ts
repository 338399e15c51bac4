import type { Knex } from 'knex';
import type { DomainEvent, EventMetadata } from '../domain/events';

/**
 * A global position, totally ordered. Postgres: [transaction id, position]; EventStoreDB: [commit, prepare].
 * Serialised as "a:b" for checkpoints and for callers that wait on it.
 */
export type Position = readonly [bigint, bigint];
export const START: Position = [0n, 0n];

export const comparePositions = (a: Position, b: Position): number => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0);
export const positionToString = (p: Position): string => `${p[0]}:${p[1]}`;
export function positionFromString(s: string): Position {
  const m = /^(\d+):(\d+)$/.exec(s);
  if (!m) throw new Error(`not a position: ${s}`);
  return [BigInt(m[1]), BigInt(m[2])];
}
export const maxPosition = (a: Position, b: Position): Position => (comparePositions(a, b) >= 0 ? a : b);

/** The revision the writer expects the stream to be at: no stream yet, any, or its last event's revision (0-based). */
export type ExpectedRevision = 'no_stream' | 'any' | bigint;

export interface NewEvent {
  id: string;
  type: string;
  data: unknown;
  metadata: EventMetadata;
}

export interface RecordedEvent {
  id: string;
  type: string;
  data: unknown;
  metadata: EventMetadata;
  streamId: string;
  revision: bigint;
  position: Position;
  recordedAt: Date;
}

/** A recorded event whose data has been validated against the catalogue. */
export type TypedEvent<E extends DomainEvent = DomainEvent> = Omit<RecordedEvent, 'type' | 'data'> & E;

export interface AppendResult {
  /** revision of the stream's last event after the append */
  revision: bigint;
  /** global position of the last event written (or of the already-stored event on a no-op) */
  position: Position;
  /** true when every event id was already stored: nothing was written */
  noop: boolean;
}

/**
 * `storedIds: 'skip'` (the default): an event whose id is already stored anywhere is left out and the rest is written
 * (a retried append is a no-op). `'refuse'`: if any event's id is already stored in another stream, nothing is written
 * and StoredEventsError names those ids, so a caller that counts what it wrote can decide again without them (on
 * Postgres the check and the write are one statement: of two appends racing for an id, exactly one writes it).
 */
export interface AppendOptions {
  storedIds?: 'skip' | 'refuse';
}

/** An append with `storedIds: 'refuse'` found these event ids already stored (in other streams): nothing was written. */
export class StoredEventsError extends Error {
  readonly kind = 'stored_events';
  constructor(
    readonly streamId: string,
    readonly ids: readonly string[],
  ) {
    super(`stream ${streamId}: ${ids.length} event id(s) already stored elsewhere`);
  }
}

export class WrongExpectedRevisionError extends Error {
  readonly kind = 'wrong_expected_revision';
  constructor(
    readonly streamId: string,
    readonly expected: ExpectedRevision,
    readonly actual: bigint | 'no_stream',
  ) {
    super(`stream ${streamId}: expected revision ${String(expected)}, actual ${String(actual)}`);
  }
}

export interface ReadStreamOptions {
  direction?: 'forwards' | 'backwards';
  /** inclusive start revision (forwards default 0, backwards default end) */
  fromRevision?: bigint;
  maxCount?: number;
}

/** A catch-up read: the events returned, how many were scanned and the position of the last one scanned. */
export interface ScannedBatch {
  events: RecordedEvent[];
  scanned: number;
  scannedTo: Position;
}

/** One stream's part of a multi-stream append (appendMany). */
export interface StreamAppend {
  streamId: string;
  events: NewEvent[];
  expected: ExpectedRevision;
}

/** What one append of appendMany came to: its result, or the error it would have thrown alone. */
export type AppendOutcome = { ok: true; result: AppendResult } | { ok: false; error: unknown };

/** EventStore.transact's transaction: the caller's writes go through `trx`, its events through `append`. */
export interface StoreTransaction {
  trx: Knex.Transaction;
  append(streamId: string, events: NewEvent[], expected: ExpectedRevision): Promise<AppendResult>;
}

export interface EventStore {
  readonly name: string;
  append(streamId: string, events: NewEvent[], expected: ExpectedRevision, options?: AppendOptions): Promise<AppendResult>;
  /**
   * Optional: appends to many streams in one go, each with the outcome it would have alone (a failed one writes
   * nothing, the others go in; stored event ids are skipped). Postgres commits them in one transaction: a reader sees
   * all of them or none. Call it through `appendMany(store, ...)`, which appends side by side where the store has
   * no such call (EventStoreDB commits per stream).
   */
  appendMany?(appends: StreamAppend[]): Promise<AppendOutcome[]>;
  /**
   * Optional (Postgres): runs `work` in one transaction of the store's database, where the caller's own writes (on
   * `trx`) and the events it appends with `append` commit together or not at all. `work` may run again after a deadlock
   * or serialization failure, so it writes nothing outside the transaction.
   */
  transact?<T>(work: (tx: StoreTransaction) => Promise<T>): Promise<T>;
  /** Events of one stream; an empty array when the stream does not exist. */
  readStream(streamId: string, options?: ReadStreamOptions): Promise<RecordedEvent[]>;
  /** Catch-up read: up to maxCount events strictly after `after`, in global order, never skipping a late commit. */
  readAll(after: Position, maxCount: number): Promise<RecordedEvent[]>;
  /**
   * Optional catch-up read of the events of some types only: scans up to maxCount events after `after` like readAll,
   * returns those of `types`, and those whose type is not in `known` (so that the reader can report them), with the
   * position of the last event scanned (where the reader's checkpoint may move even when nothing matched). A type in
   * `streamPrefixes` is returned only from streams whose id starts with its prefix. Lets a reader skip payloads it
   * would drop anyway.
   */
  readAllOfTypes?(
    after: Position,
    maxCount: number,
    types: readonly string[],
    known: readonly string[],
    streamPrefixes?: Readonly<Record<string, string>>,
  ): Promise<ScannedBatch>;
  /** Position of the last event a catch-up reader can currently see: a safe place for a new reader to start. */
  headPosition(): Promise<Position>;
  /**
   * Position of the last committed event, which a reader may not see yet (Postgres hides events above the oldest
   * running write transaction for a moment). "Caught up" means having passed this.
   */
  lastPosition(): Promise<Position>;
  /** Registers a callback fired after this process appends (a hint to wake readers; polling covers other processes). */
  onAppend(listener: () => void): () => void;
  ping(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Appends to many streams (one append per stream, as `store.append` with the default options would), in one
 * transaction where the store offers it (EventStore.appendMany), side by side otherwise. The outcomes are in the
 * order of `appends`.
 */
export function appendMany(store: EventStore, appends: StreamAppend[]): Promise<AppendOutcome[]> {
  if (appends.length === 0) return Promise.resolve([]);
  if (store.appendMany) return store.appendMany(appends);
  return Promise.all(
    appends.map((a) =>
      store.append(a.streamId, a.events, a.expected).then(
        (result): AppendOutcome => ({ ok: true, result }),
        (error): AppendOutcome => ({ ok: false, error }),
      ),
    ),
  );
}
