import knex, { type Knex } from 'knex';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { declareAppendsNone } from '../../src/eventstore/horizon';
import { START } from '../../src/eventstore/port';
import { migrateRunnerTables } from '../../src/eventstore/runner';
import { freshStore, serverUrl } from '../support/db';
import { anEvent, testMetadata } from '../support/events';
import { onPostgresServer } from '../support/suites';
import { until } from '../support/until';

// Needs a real server: the horizon is about other sessions' open transactions, and PGlite has one connection.
const suite = onPostgresServer('Postgres read horizon test', 'embedded PGlite has one connection');

/** Runs `body` inside a transaction that has taken its id, on `db`, and keeps it open until `body` is done. */
async function withOpenTransaction<T>(db: Knex, body: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
  return db.transaction(async (trx) => {
    await trx.raw('select pg_current_xact_id()');
    return body(trx);
  });
}

/** How many backends wait for a lock on pg_database. */
async function waitingOnLock(db: Knex): Promise<number> {
  const r = await db.raw(`select count(*)::int as n from pg_locks where relation = 'pg_database'::regclass and not granted`);
  return r.rows[0].n as number;
}

/** A one-connection pool on the server's `postgres` database: another database than the store's. */
function onPostgresDatabase(): Knex {
  const u = new URL(serverUrl!);
  u.pathname = '/postgres';
  return knex({ client: 'pg', connection: u.toString(), pool: { min: 0, max: 1 } });
}

const ids = (events: { id: string }[]) => events.map((e) => e.id);

suite('Postgres event store: how far a catch-up reader may read', () => {
  let t: Awaited<ReturnType<typeof freshStore>>;
  let elsewhere: Knex;
  beforeAll(async () => {
    t = await freshStore(6);
    await migrateRunnerTables(t.db);
    elsewhere = onPostgresDatabase();
  });
  afterAll(async () => {
    await elsewhere?.destroy();
    await t?.close();
  });

  const readFrom = async (from = START) => t.store.readAll(from, 1000);

  it('given an open transaction of another database on the server, when an event is appended here, then a reader reads it', async () => {
    const before = await t.store.lastPosition();
    const e = anEvent();
    await withOpenTransaction(elsewhere, async () => {
      await t.store.append('horizon-elsewhere', [e], 'any');
      expect(ids(await readFrom(before))).toEqual([e.id]);
    });
  });

  it('given an open transaction of another database that ends while a reader is between its snapshot and its look at the backends, then the reader reads the event all the same', async () => {
    // the check reads pg_database (for this database's oid) after the snapshot and before the backends: a lock on it
    // holds the reader there while the other database's transaction ends, so the check can no longer place it
    const locker = onPostgresDatabase();
    try {
      const before = await t.store.lastPosition();
      const e = anEvent();
      let endOther!: () => void;
      let began!: () => void;
      const begun = new Promise<void>((resolve) => (began = resolve));
      const other = withOpenTransaction(elsewhere, () => {
        began();
        return new Promise<void>((resolve) => (endOther = resolve));
      });
      await begun;
      await t.store.append('horizon-ended', [e], 'any');
      // the reading is handed out in an object: returned as it is, the transaction would wait for it before it commits
      const { reading } = await locker.transaction(async (trx) => {
        await trx.raw('lock table pg_database in access exclusive mode');
        const reading = readFrom(before);
        await until('the reader to wait for pg_database', async () => (await waitingOnLock(trx)) > 0, 5000, 10);
        endOther();
        await other;
        return { reading };
      });
      expect(ids(await reading)).toEqual([e.id]);
    } finally {
      await locker.destroy();
    }
  });

  it('given an open transaction here that declared it appends no events, when an event is appended, then a reader reads it', async () => {
    const before = await t.store.lastPosition();
    const e = anEvent();
    await withOpenTransaction(t.db, async (trx) => {
      await declareAppendsNone(trx);
      await t.store.append('horizon-marked', [e], 'any');
      expect(ids(await readFrom(before))).toEqual([e.id]);
    });
  });

  it('given a transaction that declared it appends no events, when it appends one, then the log refuses it and stores nothing', async () => {
    const e = anEvent();
    const attempt = t.db.transaction(async (trx) => {
      await declareAppendsNone(trx);
      await trx.raw('select * from aivis_append(?, ?, ?::jsonb)', ['horizon-liar', 'any', JSON.stringify([e])]);
    });
    await expect(attempt).rejects.toThrow(/declared that it appends no events/);
    expect(await t.store.readStream('horizon-liar')).toEqual([]);
  });

  it('given an open transaction here that took its id first, when later events commit before it, then a reader waits for it and then reads its events first, each once', async () => {
    const before = await t.store.lastPosition();
    const late = anEvent();
    const early = anEvent();
    await withOpenTransaction(t.db, async (trx) => {
      await t.store.append('horizon-early', [early], 'any');
      // held back: a reader past `early` would skip `late`, which commits below it
      expect(ids(await readFrom(before))).toEqual([]);
      await trx('aivis_events').insert({
        stream_id: 'horizon-late',
        revision: 0,
        event_id: late.id,
        type: late.type,
        data: late.data,
        metadata: testMetadata(),
      });
    });
    expect(ids(await readFrom(before))).toEqual([late.id, early.id]);
    expect((await t.store.headPosition())[1]).toBeGreaterThan(before[1]);
  });

  it("given a horizon this process read before (its floor), then a later read's horizon is never below it, though the transactions it left out can no longer be told apart", async () => {
    // the floor stands for a horizon read while a transaction now ended was still left out (another database's,
    // gone from pg_stat_activity but still running in an older snapshot): the function must not go back below it
    const horizon = async (floor: string) =>
      BigInt((await t.db.raw('select aivis_read_horizon(?::text::xid8, 0, ?::text::xid8)::text as h', ['0', floor])).rows[0].h as string);
    await withOpenTransaction(t.db, async (trx) => {
      const open = BigInt((await trx.raw('select pg_current_xact_id()::text as x')).rows[0].x as string);
      await t.store.append('horizon-floor', [anEvent()], 'any');
      // another database's transaction that ends between the function's snapshot and its look at the backends holds
      // one statement's horizon below ours (the readers read again: HorizonReads); a statement after it ended does not
      await until('the horizon to be the open transaction', async () => (await horizon('0')) === open, 5000, 10);
      expect(await horizon((open + 1n).toString())).toBeGreaterThan(open);
    });
  });

  it('given an open transaction here that declared nothing, when an event commits after it, then the head does not move past it', async () => {
    const e = anEvent();
    await withOpenTransaction(t.db, async () => {
      const head = await t.store.headPosition();
      await t.store.append('horizon-head', [e], 'any');
      expect(await t.store.headPosition()).toEqual(head);
    });
    expect((await readFrom()).map((x) => x.id)).toContain(e.id);
  });
});
