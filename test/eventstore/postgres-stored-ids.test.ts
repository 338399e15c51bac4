import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EventStore, type NewEvent, StoredEventsError } from '../../src/eventstore/port';
import { anEvent } from '../support/events';
import { freshStore, onRealPostgres, type TestDatabase } from '../support/db';

// AppendOptions storedIds 'refuse' (what an import uses to count what it stored): the Postgres store on a server and on
// PGlite; the race needs a server (PGlite has one connection).
describe('Postgres event store: appends that refuse ids stored elsewhere', () => {
  let t: TestDatabase & { store: EventStore };
  beforeAll(async () => {
    t = await freshStore(20);
  });
  afterAll(async () => t?.close());
  const stream = () => `stored-ids-${randomUUID()}`;

  it('given an id stored in another stream, then the append writes nothing and names that id', async () => {
    const taken = anEvent();
    await t.store.append(stream(), [taken], 'no_stream');
    const fresh = anEvent();
    const s = stream();
    const err = await t.store.append(s, [fresh, taken], 'no_stream', { storedIds: 'refuse' }).catch((e) => e);
    expect(err).toBeInstanceOf(StoredEventsError);
    expect((err as StoredEventsError).ids).toEqual([taken.id]);
    expect(await t.store.readStream(s)).toEqual([]);
    // without it, the rest goes in
    const r = await t.store.append(s, [fresh], 'no_stream', { storedIds: 'refuse' });
    expect(r.noop).toBe(false);
    expect((await t.store.readStream(s)).map((e) => e.id)).toEqual([fresh.id]);
  });

  it('given the same append repeated into its own stream, then it is a no-op as with skip', async () => {
    const s = stream();
    const events = [anEvent(), anEvent()];
    const first = await t.store.append(s, events, 'no_stream', { storedIds: 'refuse' });
    const again = await t.store.append(s, events, 'no_stream', { storedIds: 'refuse' });
    expect(again).toEqual({ ...first, noop: true });
  });

  it.skipIf(!onRealPostgres)(
    'given 8 appends racing for overlapping ids, then each id is written once and each writer learns exactly which ids it lost',
    async () => {
      const shared = Array.from({ length: 30 }, () => anEvent());
      // writer i wants a window of the shared ids and one of its own
      const wants: NewEvent[][] = Array.from({ length: 8 }, (_, i) => [...shared.slice(i * 3, i * 3 + 12), anEvent()]);
      const written = await Promise.all(
        wants.map(async (events) => {
          const s = stream();
          let left = events;
          for (let attempt = 0; attempt < 10; attempt++) {
            try {
              await t.store.append(s, left, 'no_stream', { storedIds: 'refuse' });
              return (await t.store.readStream(s)).map((e) => e.id);
            } catch (err) {
              if (!(err instanceof StoredEventsError)) throw err;
              const lost = new Set(err.ids);
              left = left.filter((e) => !lost.has(e.id));
            }
          }
          throw new Error('no progress');
        }),
      );
      const all = written.flat();
      expect(all.length).toBe(new Set(all).size);
      expect(new Set(all)).toEqual(new Set(wants.flat().map((e) => e.id)));
      const stored = await t.db('aivis_events').whereIn('event_id', all).count<{ n: string }[]>('* as n');
      expect(Number(stored[0].n)).toBe(all.length);
    },
  );
});
