import { afterAll, beforeAll } from 'vitest';
import { randomBytes } from 'node:crypto';
import knex from 'knex';
import { type Database, openPglite, openPostgres } from '../../src/db';
import type { EventStore } from '../../src/eventstore/port';
import { openPostgresEventStore } from '../../src/eventstore/postgres';

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
  const name = `aivis_t_${randomBytes(6).toString('hex')}`;
  const admin = knex({ client: 'pg', connection: serverUrl, pool: { min: 0, max: 1 } });
  await admin.raw(`create database ${name}`);
  await admin.destroy();
  const u = new URL(serverUrl);
  u.pathname = `/${name}`;
  const d = await openPostgres(u.toString(), poolMax);
  return {
    ...d,
    url: u.toString(),
    close: async () => {
      await d.close();
      const a = knex({ client: 'pg', connection: serverUrl, pool: { min: 0, max: 1 } });
      await a.raw(`drop database if exists ${name} with (force)`);
      await a.destroy();
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
