import type { Writable } from 'node:stream';
import type { Knex } from 'knex';
import { from as copyFrom } from 'pg-copy-streams';
import type { EventOf, EventType } from '../domain/events';
import type { TypedEvent } from './port';

export interface ApplyContext {
  /** between rebuild.before and rebuild.after: what before() dropped is absent, and every event is new to the read model */
  rebuilding: boolean;
}

/**
 * A read model (or any checkpointed consumer of the event log, such as the bus relay).
 * The runner calls apply with a batch inside one transaction that also stores the checkpoint.
 */
export interface Projection {
  name: string;
  /** bump when the read model's shape or derivation changes: its tables are dropped and rebuilt from zero */
  version: number;
  /** tables owned by this projection: a rebuild builds them beside the live ones and swaps them in; dropped on a version change */
  tables: readonly string[];
  /** creates the tables and indexes (idempotent); runs at start and whenever this instance takes the lead */
  migrate(db: Knex): Promise<void>;
  /** event types handled; 'all' receives every known event */
  handles: readonly EventType[] | 'all';
  /**
   * Handled types read only from streams whose id starts with the prefix given (e.g. engine answers, not imported
   * ones): the other events of that type are skipped like unhandled ones, their payloads never read where the
   * store can filter.
   */
  streamPrefixes?: Partial<Record<EventType, string>>;
  /**
   * Handled events it writes nothing for, told from the event alone (an answer that names nobody, say): skipped like
   * another projection's, so a batch of only those moves the checkpoint without a transaction of its own.
   */
  ignores?(e: TypedEvent): boolean;
  apply(trx: Knex.Transaction, events: TypedEvent[], ctx: ApplyContext): Promise<void>;
  /**
   * A follower's work for a batch outside the read models (events derived and appended to streams of their own), run
   * before the checkpoint moves past the batch and with no transaction open (on PGlite one holds the only connection).
   * A crash in between runs it again: it must be idempotent. A follower with no tables writes no rows; its checkpoint
   * moves as an idle projection's.
   */
  follow?(events: TypedEvent[]): Promise<void>;
  /**
   * Around a catch-up from position 0 (a rebuild's shadow tables, or the live ones after a version change): `before` may
   * drop what only queries need (secondary indexes) and `after` restores it; migrate must restore it too, in case a
   * catch-up fails. Both take a Knex whose unqualified names are the tables being built.
   */
  rebuild?: { before(db: Knex): Promise<void>; after(db: Knex): Promise<void> };
}

/**
 * A follower of the log (Projection.follow): no tables, no rows, its work for each batch of the events it handles
 * (`ignores`: those it has nothing to do for, told from the event alone).
 */
export function follower(def: Pick<Projection, 'name' | 'handles' | 'ignores'> & { follow: NonNullable<Projection['follow']> }): Projection {
  return { version: 1, tables: [], migrate: async () => {}, apply: async () => {}, ...def };
}

/**
 * A projection's handlers, one per event type it reads (`C`: what the handlers share, such as the transaction and the
 * batch's pending rows). Its `handles` list is `handledTypes(handlers)`, so the list can never drift from what apply
 * does with an event.
 */
export type EventHandlers<C> = { [T in EventType]?: (e: TypedEvent<EventOf<T>>, c: C) => Promise<void> | void };

/**
 * A projection's `migrate` that runs one idempotent DDL script (`create table if not exists ...`), then `after` where
 * something must follow it (indexes built apart, a part's own tables).
 */
export const migrateSql =
  (ddl: string, after?: (db: Knex) => Promise<unknown>) =>
  async (db: Knex): Promise<void> => {
    await db.raw(ddl);
    await after?.(db);
  };

/** The event types a map of handlers reads: a projection's `handles`. */
export const handledTypes = (handlers: EventHandlers<never>): EventType[] => Object.keys(handlers) as EventType[];

/** Runs the handler of the event's type, if any. */
export function dispatch<C>(handlers: EventHandlers<C>, e: TypedEvent, c: C): Promise<void> | void {
  const h = handlers[e.type] as ((e: TypedEvent, c: C) => Promise<void> | void) | undefined;
  return h?.(e, c);
}

/**
 * A projection that hands each event of a batch to its type's handler, in order, in the batch's transaction (events
 * `accept` refuses are skipped); its `handles` list is the map's types.
 */
export function handlerProjection(
  def: Omit<Projection, 'handles' | 'apply'>,
  handlers: EventHandlers<Knex.Transaction>,
  accept: (e: TypedEvent) => boolean = () => true,
): Projection {
  return {
    ...def,
    handles: handledTypes(handlers),
    async apply(trx, events) {
      for (const e of events) if (accept(e)) await dispatch(handlers, e, trx);
    },
  };
}

type CopyValue = string | boolean | null;

/** a connection that is a socket to a Postgres server, which COPY can write to (PGlite's has no stream) */
const onSocket = (conn: { connection?: { stream?: { write?: unknown } } }) => typeof conn.connection?.stream?.write === 'function';

/** Whether the transaction's connection is a socket to a Postgres server, so that copyRows can write (PGlite has no COPY stream). */
export async function copyable(trx: Knex.Transaction): Promise<boolean> {
  return onSocket(await trx.client.acquireConnection());
}
const COPY_SPECIAL = /[\\\t\n\r]/;
const COPY_SPECIAL_ALL = /[\\\t\n\r]/g;
const COPY_CHUNK = 32 * 1024;
const COPY_ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };

/** One row in COPY's text format: tab-separated, \N for null, t/f, every value escaped (no value can end a row). */
function copyLine(row: readonly CopyValue[]): string {
  let s = '';
  for (let i = 0; i < row.length; i++) {
    const v = row[i];
    if (i > 0) s += '\t';
    if (v === null) s += '\\N';
    else if (typeof v === 'boolean') s += v ? 't' : 'f';
    else s += COPY_SPECIAL.test(v) ? v.replace(COPY_SPECIAL_ALL, (c) => COPY_ESCAPES[c]) : v;
  }
  return `${s}\n`;
}

/**
 * Writes rows with COPY … FROM STDIN on the transaction's connection: less work for both sides than an INSERT of
 * parameter arrays, but no ON CONFLICT. Returns false, having written nothing and left `rows` as they are, when the
 * connection is not a socket to a Postgres server (PGlite runs in-process and has no COPY stream): the caller then
 * inserts the usual way. Otherwise it empties `rows` once they are encoded, so that they are not kept while sent.
 */
export async function copyRows(trx: Knex.Transaction, table: string, columns: readonly string[], rows: (readonly CopyValue[])[]): Promise<boolean> {
  const conn = (await trx.client.acquireConnection()) as { connection?: { stream?: { write?: unknown } }; query(q: object): Writable };
  if (!onSocket(conn)) return false;
  // in pieces well under 128 KiB: a bigger string or buffer gets fresh pages from the OS each time (page faults)
  const chunks: string[] = [];
  let text = '';
  for (const row of rows) {
    text += copyLine(row);
    if (text.length >= COPY_CHUNK) {
      chunks.push(text);
      text = '';
    }
  }
  if (text) chunks.push(text);
  rows.length = 0;
  const ident = (x: string) => `"${x.replace(/"/g, '""')}"`;
  await new Promise<void>((resolve, reject) => {
    const stream = conn.query(copyFrom(`copy ${ident(table)} (${columns.map(ident).join(', ')}) from stdin`));
    stream.on('error', reject);
    stream.on('finish', resolve);
    for (const c of chunks) stream.write(c);
    stream.end();
  });
  return true;
}
