import { afterAll, beforeAll, expect, it } from 'vitest';
import { type Position, START } from '../../src/eventstore/port';
import { anEvent, sleep } from '../support/events';
import { freshStore } from '../support/db';
import { onPostgresServer } from '../support/suites';

// Needs a real server: PGlite has one connection, so there is no concurrency to test there.
const suite = onPostgresServer('Postgres concurrency test', 'embedded PGlite has one connection');

suite('Postgres event store under concurrent writers', () => {
  let t: Awaited<ReturnType<typeof freshStore>>;
  beforeAll(async () => {
    t = await freshStore(20);
  });
  afterAll(async () => t?.close());

  it('given 8 writers and a deliberately slow transaction, a catch-up reader sees every committed event exactly once', async () => {
    const committed = new Set<string>();
    const seen: string[] = [];
    const trace: string[] = [];
    let done = false;
    let deadline = Infinity;

    // the reader follows the log the whole time, as a projection would
    const reader = (async () => {
      let cp: Position = START;
      for (;;) {
        const batch = await t.store.readAll(cp, 500);
        for (const e of batch) seen.push(e.id);
        if (batch.length) trace.push(`${cp} -> ${batch[0].position}..${batch[batch.length - 1].position} (${batch.length})`);
        if (batch.length) cp = batch[batch.length - 1].position;
        // an empty read is not "caught up": an open write transaction anywhere in the cluster (even in another
        // database) holds the xmin horizon back for a moment. Stop once everything committed was read, or give up.
        else if (done && (seen.length >= committed.size || Date.now() > deadline)) return;
        else await sleep(2);
      }
    })();

    // a transaction that takes its txid first and commits long after later writers have committed
    const slowEvent = anEvent();
    const slow = t.db.transaction(async (trx) => {
      await trx.raw('select * from aivis_append(?, ?, ?::jsonb)', [`slow-${slowEvent.id}`, 'any', JSON.stringify([slowEvent])]);
      await sleep(700);
    });

    const writers = Array.from({ length: 8 }, (_, w) =>
      (async () => {
        for (let i = 0; i < 60; i++) {
          const events = [anEvent(), anEvent()];
          await t.store.append(`w${w}-${i % 5}`, events, 'any');
          for (const e of events) committed.add(e.id);
        }
      })(),
    );
    await Promise.all(writers);
    await slow;
    committed.add(slowEvent.id);
    // a rolled-back transaction's events must never show up
    const rolledBack = anEvent();
    await t.db
      .transaction(async (trx) => {
        await trx.raw('select * from aivis_append(?, ?, ?::jsonb)', ['rb', 'any', JSON.stringify([rolledBack])]);
        throw new Error('rollback');
      })
      .catch(() => undefined);
    deadline = Date.now() + 15_000;
    done = true;
    await reader;

    const why = `reads:\n${trace.join('\n')}`;
    expect(seen.length, why).toBe(committed.size);
    expect(new Set(seen).size, why).toBe(seen.length);
    expect(new Set(seen), why).toEqual(committed);
    // the rolled-back event never shows: read once more to the end to be sure
    expect(seen, why).not.toContain(rolledBack.id);
  });

  it('given concurrent appends with the same expected revision, exactly one wins and the rest get a conflict', async () => {
    const stream = `race-${Date.now()}`;
    await t.store.append(stream, [anEvent()], 'no_stream');
    const results = await Promise.allSettled(Array.from({ length: 8 }, () => t.store.append(stream, [anEvent()], 0n)));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const rejected = results.filter((r) => r.status === 'rejected') as PromiseRejectedResult[];
    expect(rejected).toHaveLength(7);
    for (const r of rejected) expect(r.reason.kind).toBe('wrong_expected_revision');
    expect(await t.store.readStream(stream)).toHaveLength(2);
  });

  it('given the same event appended by 8 writers at once, it is stored once', async () => {
    const e = anEvent();
    const results = await Promise.all(Array.from({ length: 8 }, () => t.store.append(`dup-${e.id}`, [e], 'any')));
    expect(results.filter((r) => !r.noop)).toHaveLength(1);
    expect(await t.store.readStream(`dup-${e.id}`)).toHaveLength(1);
  });
});
