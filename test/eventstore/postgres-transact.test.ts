import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EventStore, WrongExpectedRevisionError } from '../../src/eventstore/port';
import { freshStore, onRealPostgres, type TestDatabase } from '../support/db';
import { anEvent } from '../support/events';

// EventStore.transact: a caller's own writes and its events commit together (what makes an import's line hashes and
// the event counting those lines one change).
describe("Postgres event store: a transaction of the caller's writes and its events", () => {
  let t: TestDatabase & { store: EventStore };
  beforeAll(async () => {
    t = await freshStore(5);
    await t.db.raw('create table tx_side (id text primary key)');
  });
  afterAll(async () => t?.close());
  const side = async (id: string) => (await t.db('tx_side').where({ id })).length;

  it('given a write and an append in one transaction, then both are stored and the append wakes the readers once it is committed', async () => {
    const s = `tx-${randomUUID()}`;
    const e = anEvent();
    let woken = 0;
    const off = t.store.onAppend(() => woken++);
    const r = await t.store.transact!(async (tx) => {
      await tx.trx('tx_side').insert({ id: s });
      const a = await tx.append(s, [e], 'no_stream');
      // not committed: another connection sees neither (PGlite has one connection, held by this transaction)
      if (onRealPostgres) {
        expect(await side(s)).toBe(0);
        expect(await t.store.readStream(s)).toEqual([]);
      }
      expect(woken).toBe(0);
      return a;
    });
    off();
    expect(r).toMatchObject({ revision: 0n, noop: false });
    expect(await side(s)).toBe(1);
    expect((await t.store.readStream(s)).map((x) => x.id)).toEqual([e.id]);
    expect(woken).toBe(1);
  });

  it('given the work failing after its write and its append, then neither is stored', async () => {
    const s = `tx-${randomUUID()}`;
    await expect(
      t.store.transact!(async (tx) => {
        await tx.trx('tx_side').insert({ id: s });
        await tx.append(s, [anEvent()], 'any');
        throw new Error('crash');
      }),
    ).rejects.toThrow('crash');
    expect(await side(s)).toBe(0);
    expect(await t.store.readStream(s)).toEqual([]);
  });

  it('given an expected revision the stream is not at, then it is a WrongExpectedRevisionError and nothing is stored', async () => {
    const s = `tx-${randomUUID()}`;
    await t.store.append(s, [anEvent()], 'no_stream');
    const err = await t.store.transact!(async (tx) => {
      await tx.trx('tx_side').insert({ id: s });
      return tx.append(s, [anEvent()], 'no_stream');
    }).catch((x) => x);
    expect(err).toBeInstanceOf(WrongExpectedRevisionError);
    expect((err as WrongExpectedRevisionError).actual).toBe(0n);
    expect(await side(s)).toBe(0);
    expect(await t.store.readStream(s)).toHaveLength(1);
  });
});
