import { afterAll, beforeAll } from 'vitest';
import { type Database, openPglite, openPostgres } from '../../src/db';
import type { EventStore } from '../../src/eventstore/port';
import { openPostgresEventStore } from '../../src/eventstore/postgres';
import { createDatabase } from './pg-server';

/** The real Postgres server the suite runs against (CI sets DATABASE_URL), or null for embedded PGlite. */
export const serverUrl = process.env.DATABASE_URL ?? null;
export const onRealPostgres = serverUrl !== null;

export interface TestDatabase extends Database {
  url: string | null;
}

/** A new, empty database for one test file: its own database on the real server, or an in-memory PGlite. */
export async function freshDatabase(poolMax = 10): Promise<TestDatabase> {
  if (!serverUrl) {
    const d = await openPglite('memory://');
    return { ...d, url: null };
  }
  const created = await createDatabase(serverUrl, 'aivis_t');
  const d = await openPostgres(created.url, poolMax);
  return {
    ...d,
    url: created.url,
    close: async () => {
      await d.close();
      await created.drop();
    },
  };
}

export type TestStore = Awaited<ReturnType<typeof freshStore>>;

/**
 * A fresh store for the enclosing describe (or file): registers the hooks that open it before its tests (`ready`
 * receives it) and close it after.
 */
export function useFreshStore(ready: (t: TestStore) => unknown): void {
  let t: TestStore | undefined;
  beforeAll(async () => {
    t = await freshStore();
    await ready(t);
  });
  afterAll(async () => t?.close());
}

export async function freshStore(poolMax = 10): Promise<TestDatabase & { store: EventStore }> {
  const d = await freshDatabase(poolMax);
  const store = await openPostgresEventStore(d.db);
  return { ...d, store };
}

/**
 * Two event stores over one fresh database, each through its own connection pool, as two instances of the server
 * would have (for races across instances; real Postgres only). Registers the hooks: call it inside a describe; the
 * array is filled before its tests.
 */
export function twoInstanceStores(): EventStore[] {
  const stores: EventStore[] = [];
  let d: TestDatabase | undefined;
  let other: Database | undefined;
  beforeAll(async () => {
    d = await freshDatabase();
    other = await openPostgres(d.url!);
    stores.push(await openPostgresEventStore(d.db), await openPostgresEventStore(other.db));
  });
  afterAll(async () => {
    await other?.close();
    await d?.close();
  });
  return stores;
}
