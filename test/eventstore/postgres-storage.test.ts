import { describe, expect, it } from 'vitest';
import { migrateEventStore } from '../../src/eventstore/postgres';
import { onRealPostgres, type TestStore } from '../support/db';
import { sharedStore } from '../support/per-worker';
import { useStarted } from '../support/started';

// Answer texts ride in event payloads: on a server built with lz4 they are compressed with it (pglz costs several
// times the CPU on every insert); PGlite has no lz4 and keeps pglz, which the migration must accept.
describe('Postgres event store storage', () => {
  let t: TestStore;
  useStarted(sharedStore, (x) => (t = x));

  it('given a migrated store, when migrated again, then it succeeds and payloads use lz4 where the server has it', async () => {
    await migrateEventStore(t.db);
    const rows = (
      await t.db.raw(
        `select attname, attcompression from pg_attribute where attrelid = 'aivis_events'::regclass and attname in ('data', 'metadata') order by attname`,
      )
    ).rows;
    expect(rows.map((r: { attname: string }) => r.attname)).toEqual(['data', 'metadata']);
    if (onRealPostgres) expect(rows.map((r: { attcompression: string }) => r.attcompression)).toEqual(['l', 'l']);
  });
});
