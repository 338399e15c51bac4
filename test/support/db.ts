import knex from 'knex';
import { afterAll, beforeAll, inject } from 'vitest';
import { type Database, openPostgres } from '../../src/db';
import type { EventStore } from '../../src/eventstore/port';
import { openPostgresEventStore } from '../../src/eventstore/postgres';
import { createDatabase } from './pg-server';
import { openTestPglite } from './pglite';

/** The real Postgres server the suite runs against (CI sets DATABASE_URL), or null for embedded PGlite. */
export const serverUrl = process.env.DATABASE_URL ?? null;
export const onRealPostgres = serverUrl !== null;

export interface TestDatabase extends Database {
  url: string | null;
}

/**
 * A test file's database does not wait for its commits to reach the disk (synchronous_commit off): nothing in it must
 * survive a crash of the server, and each commit's flush (about 1 ms here) otherwise leaves the file's process and its
 * Postgres session both idle. Every other behaviour (isolation, locks, visibility to other sessions) is the same.
 * Measured: three HTTP test files 20-30% faster. The benchmarks keep the server's default.
 */
const TEST_DATABASE_SETTINGS = { synchronous_commit: 'off' };

let template: Promise<string | null> | undefined;

/**
 * This run's prefix for test databases (test/support/global-setup.ts), or null outside vitest. A file's database is
 * then left when the file closes it and dropped with the others when the run ends: a DROP DATABASE holds a transaction
 * id while it waits for its checkpoint (0.5-2 s under load), and the event store's catch-up never reads past the oldest
 * running transaction of the whole server (docs/architecture.md, "Operators"), so each file's drop paused every other file's
 * projections; under load a read-your-writes wait ran out its 5 s (metrics-instances counted an import short).
 */
function runDatabasePrefix(): string | null {
  try {
    return inject('testDatabases') ?? null;
  } catch {
    return null; // outside a vitest worker
  }
}

/**
 * This run's schema template (test/support/global-setup.ts names it), built by the first file that needs it: a server
 * started and stopped on a database of that name, then every row removed but the server's secrets (aivis_secrets) and
 * every sequence restarted. Built under an
 * advisory lock (the two workers may ask at once) and marked done by refusing connections, which a copy needs anyway
 * (a database cannot be copied while a session is connected to it). Null on PGlite or outside vitest.
 */
function schemaTemplate(server: string): Promise<string | null> {
  let name: string | null = null;
  try {
    name = inject('schemaTemplate') ?? null;
  } catch {
    /* outside a vitest worker */
  }
  if (!name) return Promise.resolve(null);
  template ??= buildTemplate(server, name).catch((err) => {
    template = undefined;
    throw err;
  });
  return template;
}

async function buildTemplate(server: string, name: string): Promise<string> {
  const admin = knex({ client: 'pg', connection: server, pool: { min: 1, max: 1 } });
  try {
    await admin.raw('select pg_advisory_lock(hashtext(?))', [name]);
    const done = await admin('pg_database').where({ datname: name, datallowconn: false }).first('datname');
    if (done) return name;
    await admin.raw(`drop database if exists ${name} with (force)`);
    await admin.raw(`create database ${name}`);
    const u = new URL(server);
    u.pathname = `/${name}`;
    // a server as the tests start one (its join: the database is not dropped when it closes), then stopped
    const { startServer } = await import('./server');
    const s = await startServer({}, {}, { databaseUrl: u.toString() } as Parameters<typeof startServer>[2]);
    await s.close();
    const d = await openPostgres(u.toString(), 1);
    try {
      const schemas = `schemaname not in ('pg_catalog', 'information_schema')`;
      // but the secrets the server made (its OAuth signing key: an RSA key pair, 0.2-0.5 s of CPU for each server
      // started on a database without one), shared by the run's databases as by a deployment's instances
      const tables = (
        await d.db.raw(`select format('%I.%I', schemaname, tablename) as t from pg_tables where ${schemas} and tablename <> 'aivis_secrets'`)
      ).rows;
      if (tables.length) await d.db.raw(`truncate ${tables.map((r: { t: string }) => r.t).join(', ')} restart identity cascade`);
      const sequences = (await d.db.raw(`select format('%I.%I', schemaname, sequencename) as s from pg_sequences where ${schemas}`)).rows;
      for (const r of sequences as { s: string }[]) await d.db.raw(`alter sequence ${r.s} restart`);
    } finally {
      await d.close();
    }
    await admin.raw(`alter database ${name} with allow_connections false`);
    return name;
  } finally {
    await admin.raw('select pg_advisory_unlock(hashtext(?))', [name]).catch(() => undefined);
    await admin.destroy();
  }
}

/**
 * A new, empty database for one test file: its own database on the real server, or an in-memory PGlite.
 * `serverSchema` (for a server or runtime started on it): on the real server, a copy of the run's schema template,
 * every table a server creates and no row, so that the server creates none (about half its start).
 */
export async function freshDatabase(poolMax = 10, opts: { serverSchema?: boolean } = {}): Promise<TestDatabase> {
  if (!serverUrl) {
    const d = await openTestPglite();
    return { ...d, url: null };
  }
  const runPrefix = runDatabasePrefix();
  const created = await createDatabase(
    serverUrl,
    runPrefix ?? 'aivis_t',
    opts.serverSchema ? ((await schemaTemplate(serverUrl)) ?? undefined) : undefined,
    TEST_DATABASE_SETTINGS,
  );
  const d = await openPostgres(created.url, poolMax);
  return {
    ...d,
    url: created.url,
    close: async () => {
      await d.close();
      if (!runPrefix) await created.drop();
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
