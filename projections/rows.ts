import type { Knex } from 'knex';
import type { EventData, EventOf, EventType } from '../src/domain/events';
import type { TypedEvent } from '../src/eventstore/port';

type Column<T extends EventType> = keyof EventData<T> & string;

/** Both times of a row that records when it was created and last changed. */
export const CREATED_UPDATED = ['created_at', 'updated_at'] as const;

/** A value for a jsonb column: its JSON text, null as SQL null (pg would write a JS array as a Postgres array). */
const jsonb = (v: unknown) => (v === null ? null : JSON.stringify(v));

/**
 * The handler of an event that creates one row: `id` from the event's `id` field, the `columns` copied from its data
 * as they are, the `json` ones as JSON text, the `extra` columns computed from the event, and the event's time in each
 * of `stamps` (default created_at alone). `idempotent`: a row already there (the event delivered again) is left as it
 * is. The event type comes from the handler map's key, so a column the event lacks does not compile.
 */
export function insertRow<T extends EventType>(spec: {
  table: string;
  id: Column<T>;
  columns: readonly Column<T>[];
  json?: readonly Column<T>[];
  extra?: (e: TypedEvent<EventOf<T>>) => Record<string, unknown>;
  stamps?: readonly string[];
  idempotent?: boolean;
}): (e: TypedEvent<EventOf<T>>, trx: Knex.Transaction) => Promise<void> {
  return async (e, trx) => {
    const data = e.data as Record<string, unknown>;
    const row: Record<string, unknown> = { id: data[spec.id] };
    for (const c of spec.columns) row[c] = data[c];
    for (const c of spec.json ?? []) row[c] = jsonb(data[c]);
    Object.assign(row, spec.extra?.(e));
    for (const s of spec.stamps ?? ['created_at']) row[s] = e.metadata.time;
    const insert = trx(spec.table).insert(row);
    await (spec.idempotent ? insert.onConflict('id').ignore() : insert);
  };
}

/**
 * The handler of an event that changes one row: the row whose id is the event's `id` field gets every other field of
 * the event's data as it is (the `json` ones as JSON text; a patch: only the fields given), and the event's time as
 * updated_at.
 */
export function updateRow<T extends EventType>(spec: {
  table: string;
  id: Column<T>;
  json?: readonly Column<T>[];
}): (e: TypedEvent<EventOf<T>>, trx: Knex.Transaction) => Promise<void> {
  return async (e, trx) => {
    const { [spec.id]: id, ...rest } = e.data as Record<string, unknown>;
    const changes: Record<string, unknown> = rest;
    for (const c of spec.json ?? []) if (changes[c] !== undefined) changes[c] = jsonb(changes[c]);
    await trx(spec.table)
      .where('id', id as string)
      .update({ ...changes, updated_at: e.metadata.time });
  };
}

/** `insertRow` of a row in the event's organization (its organization_id), kept as it is when the event comes again. */
export const orgRow: typeof insertRow = (spec) =>
  insertRow({ ...spec, extra: (e) => ({ organization_id: e.metadata.organization_id, ...spec.extra?.(e) }), idempotent: true });

/** The website a catalogue event belongs to: its stream is `catalog-<website_id>`; elsewhere its metadata's website. */
export const catalogWebsiteOf = (e: TypedEvent): string =>
  e.streamId.startsWith('catalog-') ? e.streamId.slice('catalog-'.length) : (e.metadata.website_id ?? '');
