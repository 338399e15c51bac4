import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { seededRandom } from '../../src/domain/random';
import { type FeedInterest, QUIET_MS, SharedFeed } from '../../src/eventstore/feed';
import { comparePositions, type EventStore, type Position, type RecordedEvent, START } from '../../src/eventstore/port';
import { useFreshStore, type TestStore } from '../support/db';
import { testMetadata } from '../support/events';
import { until } from '../support/until';

/** What a projection keeps of a batch (the runner's decode): its types, from its streams. */
const keeps = (i: FeedInterest, e: RecordedEvent) =>
  (i.handles === 'all' || i.handles.includes(e.type)) &&
  (i.streamPrefixes?.[e.type] === undefined || e.streamId.startsWith(i.streamPrefixes[e.type]!));

/** The store, counting its catch-up reads. */
function counted(store: EventStore) {
  const calls = { n: 0 };
  const wrapped: EventStore = {
    ...store,
    readAll: (after, max) => (calls.n++, store.readAll(after, max)),
    readAllOfTypes: store.readAllOfTypes && ((...args) => (calls.n++, store.readAllOfTypes!(...args))),
  };
  return { store: wrapped, calls };
}

/** The store, whose catch-up reads asked for while held read at once but answer only when let go (slow reads). */
function held(store: EventStore) {
  let gate: Promise<void> | null = null;
  let open = () => {};
  const wrapped: EventStore = {
    ...store,
    readAllOfTypes: async (...args) => {
      const waits = gate;
      const b = await store.readAllOfTypes!(...args);
      if (waits) await waits;
      return b;
    },
  };
  return {
    store: wrapped,
    /** reads asked for from now on wait */
    hold: () => {
      gate = new Promise<void>((r) => (open = r));
    },
    /** reads asked for from now on answer at once; those held still wait */
    passNew: () => {
      gate = null;
    },
    /** the held reads answer */
    release: () => {
      gate = null;
      open();
    },
  };
}

/** The types of a batch's events that a reader of ApiKeyRevoked keeps (those served with their payloads). */
const keyEvents = (b: { events: RecordedEvent[] }) => b.events.filter((e) => keeps({ handles: ['ApiKeyRevoked'] }, e)).map((e) => e.type);

const TYPES = ['ApiKeyRevoked', 'WebsiteStatusChanged', 'UserAdded'] as const;

describe('shared feed: one read of the log for the projections of a process', () => {
  let t: TestStore;
  useFreshStore((x) => (t = x));

  const appendOne = async (type: string, stream: string) => {
    const id = randomUUID();
    return (await t.store.append(stream, [{ id, type, data: { api_key_id: id }, metadata: testMetadata() }], 'any')).position;
  };
  const visible = (p: Position) => until('appends visible to catch-up readers', async () => comparePositions(await t.store.headPosition(), p) >= 0);

  for (const seed of [1, 2, 3]) {
    it(`given readers of different types and batch sizes reading while events arrive (seed ${seed}), then each gets exactly its events, once, in log order`, async () => {
      const rnd = seededRandom(seed);
      const from = await t.store.headPosition();
      const interests: FeedInterest[] = [
        { handles: ['ApiKeyRevoked'] },
        { handles: ['ApiKeyRevoked', 'WebsiteStatusChanged'], streamPrefixes: { ApiKeyRevoked: 'p-' } },
        { handles: ['UserAdded'] },
        { handles: ['WebsiteStatusChanged'] },
      ];
      // a small stretch: readers fall behind it, read on their own and come back to it
      const feed = new SharedFeed(t.store, { maxEvents: 6, fetchSize: 4 });
      const readers = interests.map((interest) => ({ interest, r: feed.reader(interest), at: from, seen: [] as string[] }));
      const step = async (x: (typeof readers)[number]) => {
        const b = await x.r.read(x.at, 1 + Math.floor(rnd() * 5));
        for (const e of b.events) if (keeps(x.interest, e)) x.seen.push(e.id);
        if (b.scanned > 0) {
          expect(comparePositions(b.scannedTo, x.at)).toBeGreaterThan(0);
          x.at = b.scannedTo;
        }
        return b.scanned;
      };
      let last: Position = START;
      for (let i = 0; i < 60; i++) {
        const type = TYPES[Math.floor(rnd() * TYPES.length)];
        last = await appendOne(type, `${rnd() < 0.5 ? 'p' : 'q'}-${Math.floor(rnd() * 4)}`);
        // some readers read, some of them at once
        await Promise.all(readers.filter(() => rnd() < 0.5).map((x) => step(x)));
      }
      await visible(last);
      for (const x of readers) while ((await step(x)) > 0);
      const all = (await t.store.readAll(from, 10_000)).filter((e) => comparePositions(e.position, from) > 0);
      for (const x of readers) expect(x.seen).toEqual(all.filter((e) => keeps(x.interest, e)).map((e) => e.id));
      for (const x of readers) x.r.close();
    });
  }

  /** A UserAdded then an ApiKeyRevoked appended, a feed over the held store, and a reader of UserAdded on it. */
  async function aUserThenAKey(options?: ConstructorParameters<typeof SharedFeed>[1]) {
    const h = held(t.store);
    const feed = new SharedFeed(h.store, options);
    const from = await t.store.headPosition();
    const p1 = await appendOne('UserAdded', 'p-0');
    await visible(await appendOne('ApiKeyRevoked', 'p-1'));
    return { h, feed, from, p1, users: feed.reader({ handles: ['UserAdded'] }) };
  }

  it('given a reader whose read of the log is under way, when another reader joins and then reads from the same place, then it gets its own events (a projection that took its lease meanwhile skipped them)', async () => {
    const { h, feed, from, users } = await aUserThenAKey();
    h.hold();
    const first = users.read(from, 100);
    // when
    const keys = feed.reader({ handles: ['ApiKeyRevoked'] });
    h.release();
    expect((await first).events.map((e) => e.type)).toEqual(['UserAdded']);
    const b = await keys.read(from, 100);
    // then
    expect(keyEvents(b)).toEqual(['ApiKeyRevoked']);
    users.close();
    keys.close();
  });

  it('given a reader extending the stretch, when another reader joins meanwhile and reads up to it, then the extension read for the readers of before is not served to it', async () => {
    const { h, feed, from, p1, users } = await aUserThenAKey({ fetchSize: 1 });
    expect((await users.read(from, 1)).scannedTo).toEqual(p1);
    h.hold();
    const extending = users.read(p1, 1);
    h.passNew();
    // when: the new reader's read answers first and starts the stretch again, up to where the extension starts
    const keys = feed.reader({ handles: ['ApiKeyRevoked'] });
    expect((await keys.read(from, 1)).scannedTo).toEqual(p1);
    h.release();
    await extending;
    const b = await keys.read(p1, 1);
    // then
    expect(keyEvents(b)).toEqual(['ApiKeyRevoked']);
    users.close();
    keys.close();
  });

  it('given four readers at the head, when an append arrives and all of them read, then one read of the store serves them all', async () => {
    const c = counted(t.store);
    const feed = new SharedFeed(c.store);
    const readers = [['ApiKeyRevoked'], ['UserAdded'], ['ApiKeyRevoked', 'UserAdded'], ['WebsiteStatusChanged']].map((handles) =>
      feed.reader({ handles }),
    );
    let at = await t.store.headPosition();
    await appendOne('UserAdded', 'p-0');
    // the first read starts the stretch
    await visible(await appendOne('ApiKeyRevoked', 'p-1'));
    const first = await Promise.all(readers.map((r) => r.read(at, 100)));
    at = first[0].scannedTo;
    expect(first.every((b) => comparePositions(b.scannedTo, at) === 0)).toBe(true);
    const before = c.calls.n;
    // when
    const p = await appendOne('WebsiteStatusChanged', 'q-0');
    await visible(p);
    const next = await Promise.all(readers.map((r) => r.read(at, 100)));
    // then
    expect(c.calls.n - before).toBe(1);
    for (const b of next) expect(b.scannedTo).toEqual(p);
    expect(next[3].events.map((e) => e.type)).toContain('WebsiteStatusChanged');
    for (const r of readers) r.close();
  });
  it('given readers that begin together from one place (an instance starting), when they all read from it, then one read of the store answers them all, with nothing new as with an event', async () => {
    const c = counted(t.store);
    const feed = new SharedFeed(c.store);
    const readers = [['ApiKeyRevoked'], ['UserAdded'], ['WebsiteStatusChanged']].map((handles) => feed.reader({ handles }));
    const at = await t.store.headPosition();
    // when: nothing new after the place (no stretch forms)
    const empty = await Promise.all(readers.map((r) => r.read(at, 100)));
    // then
    expect(c.calls.n).toBe(1);
    for (const b of empty) expect(b).toMatchObject({ events: [], scanned: 0 });
    // when: one event after it, all reading at once again
    const p = await appendOne('UserAdded', 'p-0');
    await visible(p);
    const next = await Promise.all(readers.map((r) => r.read(at, 100)));
    // then: one more read, each reader at the event
    expect(c.calls.n).toBe(2);
    for (const b of next) expect(b.scannedTo).toEqual(p);
    expect(next[1].events.map((e) => e.type)).toEqual(['UserAdded']);
    for (const r of readers) r.close();
  });
  it('given readers at the head of a quiet log, when they poll idle, then one empty read answers the polls of the next QUIET_MS, and a prompted read or a later poll reads the log', async () => {
    const c = counted(t.store);
    const feed = new SharedFeed(c.store);
    const readers = [['ApiKeyRevoked'], ['UserAdded'], ['WebsiteStatusChanged']].map((handles) => feed.reader({ handles }));
    const at = await t.store.headPosition();
    // given: one empty read at the head
    expect((await readers[0].read(at, 100)).scanned).toBe(0);
    const before = c.calls.n;
    // when: the others poll idle at once, then: no read of the store
    for (const r of readers) expect((await r.read(at, 100, true)).scanned).toBe(0);
    expect(c.calls.n).toBe(before);
    // an append: a read prompted by its wake-up (not idle) reads the log and finds it
    const p = await appendOne('UserAdded', 'p-0');
    await visible(p);
    const prompted = await readers[1].read(at, 100);
    expect(prompted.events.map((e) => e.type)).toEqual(['UserAdded']);
    // and the quiet answer is gone: an idle poll from the old place reads too (it was a stale "nothing new")
    const idle = await readers[0].read(at, 100, true);
    expect(idle.scannedTo).toEqual(p);
    // past the window, an idle poll at the new head reads the log again
    expect((await readers[2].read(p, 100)).scanned).toBe(0);
    const quiet = c.calls.n;
    expect((await readers[2].read(p, 100, true)).scanned).toBe(0);
    expect(c.calls.n).toBe(quiet);
    await new Promise((r) => setTimeout(r, QUIET_MS + 50));
    expect((await readers[2].read(p, 100, true)).scanned).toBe(0);
    expect(c.calls.n).toBe(quiet + 1);
    for (const r of readers) r.close();
  });
});
