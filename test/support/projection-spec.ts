import { randomUUID } from 'node:crypto';
import { beforeAll, expect } from 'vitest';
import type { Database } from '../../src/db';
import { openTestPglite } from './pglite';
import { decodeEvent, type EventData, type EventMetadata, type EventType } from '../../src/domain/events';
import type { TypedEvent } from '../../src/eventstore/port';
import type { Projection } from '../../src/eventstore/projection';
import { testMetadata } from './events';

/** The time of an event that names none: a read model's timestamps are then known (compare them as ISO strings). */
export const T0 = '2026-03-01T00:00:00.000Z';
/** A day later: the time of a change a spec tells apart from T0. */
export const T1 = '2026-03-02T00:00:00.000Z';

/**
 * An event as a spec gives it: its type and data, its stream where the projection reads only some, its metadata, and
 * its id where it matters (the same event delivered again; a new one by default).
 */
export interface SpecEvent {
  id?: string;
  type: EventType;
  data: unknown;
  stream?: string;
  meta?: Partial<EventMetadata>;
}

/** An event of the catalogue, its data checked by the compiler: `event('TopicCreated', {...}, { meta: { time } })`. */
export const event = <T extends EventType>(
  type: T,
  data: EventData<T>,
  over: { id?: string; stream?: string; meta?: Partial<EventMetadata> } = {},
): SpecEvent => ({
  type,
  data,
  ...over,
});

/**
 * One stream `<kind>-<id>` (a new id unless given) and its events: `on` puts one on it (at `time` if given); for a job's
 * stream, `started`, `succeeded` and `failed` are the job's own events with its id and kind.
 */
export function streamOf(kind: string, id: string = randomUUID()) {
  const stream = `${kind}-${id}`;
  const on = <T extends EventType>(type: T, data: EventData<T>, time?: string): SpecEvent =>
    event(type, data, { stream, ...(time && { meta: { time } }) });
  return {
    id,
    stream,
    on,
    started: (time?: string) => on('JobStarted', { job_id: id, kind }, time),
    succeeded: (time?: string) => on('JobSucceeded', { job_id: id, kind }, time),
    failed: (error_kind: string, message: string, time?: string) => on('JobFailed', { job_id: id, kind, error_kind, message }, time),
  };
}

type Row = Record<string, unknown>;

/**
 * What one table must hold: its rows (the columns compared are the keys of the rows given), or those with the
 * columns to compare, the order (by default the compared columns, left to right) and a filter (`where`).
 */
export type TableRows = readonly Row[] | { rows: readonly Row[]; columns?: readonly string[]; orderBy?: string | readonly string[]; where?: Row };

/** Dates as ISO strings, the rest as the driver reads it (numeric and bigint as strings, jsonb parsed). */
const plain = (row: Row): Row => Object.fromEntries(Object.entries(row).map(([k, v]) => [k, v instanceof Date ? v.toISOString() : v]));

let shared: Promise<Database> | undefined;

/**
 * The embedded database of this test process, opened by its first spec file and shared by the next ones (vitest runs
 * a worker's files in one process: isolate false). The run's first one runs initdb (test/support/pglite.ts): 30 s on
 * two loaded cores; each file then only migrates its projection, each scenario empties its tables.
 */
function embedded(): Promise<Database> {
  shared ??= openTestPglite().catch((err) => {
    shared = undefined;
    throw err;
  });
  return shared;
}

/** the first file of a process waits for the database's initdb (see embedded) */
const OPEN_TIMEOUT_MS = 300_000;

/**
 * given(events).when(events).then({ table: rows }): the specification of a read model, on the process's embedded
 * PGlite (embedded; the hook that migrates the projection is registered by the call). Each scenario empties the projection's tables (`tables`), then applies the
 * given events as one batch and the `when` events as the next, as the runner does: decoded against the catalogue,
 * only the types (and streams) the projection reads, with metadata and a position, through its own `apply` in one
 * transaction per batch. `defaults` is the metadata of every event that names none (testMetadata's otherwise), its
 * organization and website `org` and `site`.
 */
export function projectionSpec(projection: Projection, defaults: Partial<EventMetadata> = {}) {
  const org = defaults.organization_id ?? randomUUID();
  const site = defaults.website_id ?? randomUUID();
  const base = { ...defaults, organization_id: org, website_id: site };
  let d: Database | undefined;
  let position = 0n;
  beforeAll(async () => {
    d = await embedded();
    await projection.migrate(d.db);
  }, OPEN_TIMEOUT_MS);

  const db = () => {
    if (!d) throw new Error('projectionSpec: call it at the top of a file or describe, not in a test');
    return d.db;
  };

  async function applyBatch(events: readonly SpecEvent[], revisions: Map<string, bigint>): Promise<void> {
    const batch: TypedEvent[] = [];
    for (const e of events) {
      const metadata = testMetadata({ time: T0, ...base, ...e.meta });
      const streamId = e.stream ?? `test-${metadata.website_id ?? metadata.organization_id}`;
      const revision = revisions.get(streamId) ?? 0n;
      revisions.set(streamId, revision + 1n);
      position += 1n;
      const id = e.id ?? randomUUID();
      const handles = projection.handles;
      if (handles !== 'all' && !handles.includes(e.type)) continue;
      const prefix = projection.streamPrefixes?.[e.type];
      if (prefix !== undefined && !streamId.startsWith(prefix)) continue;
      const decoded = decodeEvent(id, e.type, e.data);
      batch.push({ id, ...decoded, metadata, streamId, revision, position: [position, 0n], recordedAt: new Date(metadata.time) } as TypedEvent);
    }
    if (batch.length) await db().transaction((trx) => projection.apply(trx, batch, { rebuilding: false }));
  }

  async function rows(table: string, expected: TableRows): Promise<Row[]> {
    const spec = Array.isArray(expected) ? { rows: expected as readonly Row[] } : (expected as Exclude<TableRows, readonly Row[]>);
    const columns = spec.columns ?? [...new Set(spec.rows.flatMap((r) => Object.keys(r)))];
    const orderBy = spec.orderBy === undefined ? columns : typeof spec.orderBy === 'string' ? [spec.orderBy] : spec.orderBy;
    let q = db()(table).select(columns.length ? columns : '*');
    if (spec.where) q = q.where(spec.where);
    for (const c of orderBy) q = q.orderBy(c);
    return ((await q) as Row[]).map(plain);
  }

  return {
    /** the organization and website of the events that name none (random unless `defaults` names them) */
    org,
    site,
    /** the database, for a look the tables cannot give (rarely needed) */
    db,
    given(...history: SpecEvent[]) {
      return {
        when(...events: SpecEvent[]) {
          return {
            async then(expected: Record<string, TableRows>): Promise<void> {
              // delete, not truncate: 7 times cheaper on PGlite for a few rows (sequences go on counting)
              await db().raw(projection.tables.map((t) => `delete from "${t}";`).join(' '));
              const revisions = new Map<string, bigint>();
              await applyBatch(history, revisions);
              await applyBatch(events, revisions);
              for (const [table, want] of Object.entries(expected)) {
                const wanted = Array.isArray(want) ? want : (want as { rows: readonly Row[] }).rows;
                expect(await rows(table, want), table).toEqual(wanted);
              }
            },
          };
        },
      };
    },
  };
}
