import { afterAll, beforeAll, expect, it } from 'vitest';
import { seededRandom } from '../../src/domain/random';
import {
  type AppendResult,
  appendMany,
  type EventStore,
  type ExpectedRevision,
  type NewEvent,
  WrongExpectedRevisionError,
} from '../../src/eventstore/port';
import { openPostgresEventStore } from '../../src/eventstore/postgres';
import { freshDatabase, type TestDatabase } from '../support/db';
import { anEvent } from '../support/events';
import { onPostgresServer } from '../support/suites';

// Commit batching is for a real server only: PGlite has one connection and keeps one transaction per append.
const suite = onPostgresServer('Postgres append batching test', 'embedded PGlite does not batch appends');

type Outcome = { ok: true; revision: bigint; noop: boolean } | { ok: false; actual: bigint | 'no_stream' };

/** The store's semantics, one append after another: stored ids are skipped, then the expected revision is checked. */
class Model {
  streams = new Map<string, string[]>();
  ids = new Map<string, { revision: bigint; seq: number }>();
  append(stream: string, events: NewEvent[], expected: ExpectedRevision): Outcome {
    const keep = events.filter((e) => !this.ids.has(e.id));
    if (keep.length === 0) {
      // a no-op reports the revision of the last stored of its events
      const last = events.map((e) => this.ids.get(e.id)!).sort((a, b) => b.seq - a.seq)[0];
      return { ok: true, revision: last.revision, noop: true };
    }
    const s = this.streams.get(stream) ?? [];
    const current = s.length - 1;
    const ok = expected === 'any' || (expected === 'no_stream' ? s.length === 0 : BigInt(current) === expected);
    if (!ok) return { ok: false, actual: s.length === 0 ? 'no_stream' : BigInt(current) };
    for (const e of keep) {
      this.ids.set(e.id, { revision: BigInt(s.length), seq: this.ids.size });
      s.push(e.id);
    }
    this.streams.set(stream, s);
    return { ok: true, revision: BigInt(s.length - 1), noop: false };
  }
}

const outcome = (r: PromiseSettledResult<AppendResult>): Outcome => {
  if (r.status === 'fulfilled') return { ok: true, revision: r.value.revision, noop: r.value.noop };
  if (r.reason instanceof WrongExpectedRevisionError) return { ok: false, actual: r.reason.actual };
  throw r.reason;
};

async function storedIds(d: TestDatabase): Promise<Map<string, string[]>> {
  const rows = (await d.db('aivis_events').select('stream_id', 'event_id').orderBy(['stream_id', 'revision'])) as {
    stream_id: string;
    event_id: string;
  }[];
  const out = new Map<string, string[]>();
  for (const r of rows) out.set(r.stream_id, [...(out.get(r.stream_id) ?? []), r.event_id]);
  return out;
}

suite('Postgres event store: concurrent appends committed in one transaction', () => {
  let d: TestDatabase;
  beforeAll(async () => {
    d = await freshDatabase(12);
  });
  afterAll(async () => d?.close());

  // few streams: most batches name a stream twice and go append by append; many streams: most batches are of distinct
  // streams and go as one statement, falling back append by append when one of them conflicts or repeats an id
  it.each([
    ['few', 4, 3],
    ['many', 30, 30],
  ])(
    'given 50 concurrent appends with conflicts and duplicates over %s streams, then each has the outcome the same appends one after another would have',
    async (name, existing, fresh) => {
      // one batch slot: the first append goes alone, the other 49 wait and go in issue order, in batches (and a slow
      // batch is not passed by the next: under load one took over the default 20 ms, and two streams' appends swapped)
      const store = await openPostgresEventStore(d.db, { batch: { maxInFlight: 1, stallMs: 60_000 } });
      const model = new Model();
      const seed: [string, NewEvent[]][] = Array.from({ length: existing }, (_, i) => [`seq-${name}-s${i}`, [anEvent()]]);
      for (const [s, evs] of seed) {
        await store.append(s, evs, 'no_stream');
        model.append(s, evs, 'no_stream');
      }
      const r = seededRandom(4242);
      const streams = [...seed.map(([s]) => s), ...Array.from({ length: fresh }, (_, i) => `seq-${name}-n${i}`)];
      const issued: NewEvent[] = seed.flatMap(([, evs]) => evs);
      const plan: [string, NewEvent[], ExpectedRevision][] = [];
      for (let i = 0; i < 50; i++) {
        const stream = streams[Math.floor(r() * streams.length)];
        const events = Array.from({ length: 1 + Math.floor(r() * 2) }, () =>
          // a fifth of the events repeat one issued before (stored, or part of an append that was rejected)
          r() < 0.2 ? issued[Math.floor(r() * issued.length)] : anEvent(),
        );
        if (new Set(events.map((e) => e.id)).size !== events.length) events.pop();
        issued.push(...events);
        // expected revisions from a model that lags behind: many are stale (conflicts), some right, some 'any'
        const x = r();
        const len = BigInt(Math.floor(r() * 6)) - 1n;
        plan.push([stream, events, x < 0.15 ? 'any' : len < 0n ? 'no_stream' : len]);
      }
      const settled = await Promise.allSettled(plan.map(([s, evs, exp]) => store.append(s, evs, exp)));
      const expected = plan.map(([s, evs, exp]) => model.append(s, evs, exp));

      expect(settled.map(outcome)).toEqual(expected);
      // the mix did exercise every case
      expect(expected.filter((o) => !o.ok).length).toBeGreaterThan(5);
      expect(expected.filter((o) => o.ok && o.noop).length).toBeGreaterThan(0);
      expect(expected.filter((o) => o.ok && !o.noop).length).toBeGreaterThan(5);
      // nothing of a rejected append is stored (unless a later append stored the same id), everything else once
      const stored = await storedIds(d);
      expect(new Map([...stored].filter(([s]) => s.startsWith(`seq-${name}-`)))).toEqual(model.streams);
      // they were batched: appends after the first share a transaction, in issue order
      const positions = settled.flatMap((s) => (s.status === 'fulfilled' && !s.value.noop ? [s.value.position] : []));
      expect(new Set(positions.slice(1).map((p) => p[0])).size).toBeLessThan(positions.length - 1);
      for (let i = 1; i < positions.length; i++) expect(positions[i][1]).toBeGreaterThan(positions[i - 1][1]);
    },
  );

  it('given one batch of appends to distinct streams with every kind of expected revision, then all are stored in issue order in one transaction', async () => {
    const store = await openPostgresEventStore(d.db, { batch: { maxInFlight: 1, stallMs: 60_000 } });
    for (let i = 0; i < 3; i++) await store.append(`one-x${i}`, [anEvent(), anEvent()], 'no_stream');
    const blocker = store.append('one-blocker', [anEvent()], 'no_stream');
    // queued behind the blocker: they go together as the next batch
    const plan: [string, NewEvent[], ExpectedRevision][] = [
      ['one-x0', [anEvent()], 1n],
      ['one-new0', [anEvent(), anEvent(), anEvent()], 'no_stream'],
      ['one-x1', [anEvent(), anEvent()], 'any'],
      ['one-new1', [anEvent()], 'any'],
      ['one-x2', [anEvent(), anEvent()], 1n],
    ];
    const results = await Promise.all(plan.map(([s, evs, exp]) => store.append(s, evs, exp)));
    await blocker;

    expect(results.map((x) => [x.revision, x.noop])).toEqual([
      [2n, false],
      [2n, false],
      [3n, false],
      [0n, false],
      [3n, false],
    ]);
    expect(new Set(results.map((x) => x.position[0])).size).toBe(1);
    for (let i = 1; i < results.length; i++) expect(results[i].position[1]).toBeGreaterThan(results[i - 1].position[1]);
    const stored = await storedIds(d);
    for (const [s, evs] of plan) expect(stored.get(s)!.slice(-evs.length)).toEqual(evs.map((e) => e.id));
    // each append's position is its last event's
    const last = (await d
      .db('aivis_events')
      .whereIn(
        'event_id',
        plan.map(([, evs]) => evs[evs.length - 1].id),
      )
      .select('event_id', 'position')) as { event_id: string; position: string }[];
    const byId = new Map(last.map((x) => [x.event_id, BigInt(x.position)]));
    expect(results.map((x) => x.position[1])).toEqual(plan.map(([, evs]) => byId.get(evs[evs.length - 1].id)));
  });

  it('given a batch of distinct streams where one append conflicts and one repeats a stored event, then only those two are turned away and the rest are stored', async () => {
    const store = await openPostgresEventStore(d.db, { batch: { maxInFlight: 1 } });
    const stored0 = anEvent();
    await store.append('mix-a', [stored0], 'no_stream');
    await store.append('mix-b', [anEvent()], 'no_stream');
    const blocker = store.append('mix-blocker', [anEvent()], 'no_stream');
    const ok1 = anEvent();
    const ok2 = anEvent();
    const settled = await Promise.allSettled([
      store.append('mix-c', [ok1], 'no_stream'),
      store.append('mix-b', [anEvent()], 5n),
      store.append('mix-d', [stored0], 'no_stream'),
      store.append('mix-a', [ok2], 0n),
    ]);
    await blocker;

    expect(settled.map(outcome)).toEqual([
      { ok: true, revision: 0n, noop: false },
      { ok: false, actual: 0n },
      { ok: true, revision: 0n, noop: true },
      { ok: true, revision: 1n, noop: false },
    ]);
    const stored = await storedIds(d);
    expect(stored.get('mix-c')).toEqual([ok1.id]);
    expect(stored.get('mix-b')).toHaveLength(1);
    expect(stored.has('mix-d')).toBe(false);
    expect(stored.get('mix-a')).toEqual([stored0.id, ok2.id]);
  });

  it('given appendMany of 300 streams where one append conflicts and one repeats a stored event, then the rest are stored in one transaction and those two are turned away as alone', async () => {
    const store = await openPostgresEventStore(d.db, { batch: { maxInFlight: 1, maxAppends: 48 } });
    const stored0 = anEvent();
    await store.append('many-a', [stored0], 'no_stream');
    await store.append('many-b', [anEvent()], 'no_stream');
    const fresh = Array.from({ length: 298 }, (_, i) => ({ streamId: `many-n${i}`, events: [anEvent()], expected: 'no_stream' as ExpectedRevision }));
    const outcomes = await appendMany(store, [
      ...fresh.slice(0, 100),
      { streamId: 'many-b', events: [anEvent()], expected: 'no_stream' },
      { streamId: 'many-c', events: [stored0], expected: 'no_stream' },
      ...fresh.slice(100),
    ]);

    expect(outcomes).toHaveLength(300);
    const conflict = outcomes[100];
    expect(conflict.ok).toBe(false);
    expect(!conflict.ok && conflict.error).toBeInstanceOf(WrongExpectedRevisionError);
    expect(outcomes[101]).toMatchObject({ ok: true, result: { revision: 0n, noop: true } });
    const written = outcomes.filter((_o, i) => i !== 100 && i !== 101).map((o) => (o.ok ? o.result : null));
    expect(written.every((r) => r !== null && !r.noop && r.revision === 0n)).toBe(true);
    // one transaction (past the queue's cap of 48 appends a batch), in order
    expect(new Set(written.map((r) => r!.position[0])).size).toBe(1);
    for (let i = 1; i < written.length; i++) expect(written[i]!.position[1]).toBeGreaterThan(written[i - 1]!.position[1]);
    const stored = await storedIds(d);
    for (const f of fresh) expect(stored.get(f.streamId)).toEqual([f.events[0].id]);
    expect(stored.get('many-b')).toHaveLength(1);
    expect(stored.has('many-c')).toBe(false);
  });

  it('given a store without appendMany (EventStoreDB), then appendMany appends side by side with the same outcomes', async () => {
    const pg = await openPostgresEventStore(d.db, { batch: { maxInFlight: 1 } });
    const store: EventStore = { ...pg, appendMany: undefined };
    await store.append('side-a', [anEvent()], 'no_stream');
    const ok = anEvent();
    const outcomes = await appendMany(store, [
      { streamId: 'side-a', events: [anEvent()], expected: 'no_stream' },
      { streamId: 'side-b', events: [ok], expected: 'no_stream' },
    ]);
    expect(outcomes[0].ok === false && outcomes[0].error).toBeInstanceOf(WrongExpectedRevisionError);
    expect(outcomes[1]).toMatchObject({ ok: true, result: { revision: 0n, noop: false } });
    expect((await storedIds(d)).get('side-b')).toEqual([ok.id]);
  });

  it('given concurrent writers racing for the same revisions and event ids, then one wins each race and the others are rejected or no-ops', async () => {
    const store: EventStore = await openPostgresEventStore(d.db);
    const streams = Array.from({ length: 8 }, (_, i) => `race-${i}`);
    for (const s of streams) await store.append(s, [anEvent()], 'no_stream');
    // five appends at revision 0 per stream, and pairs of appends of one event id to two new streams
    const racing = streams.flatMap((s) => Array.from({ length: 5 }, () => ({ s, evs: [anEvent()], exp: 0n as ExpectedRevision })));
    const shared = Array.from({ length: 5 }, () => anEvent());
    const dup = shared.flatMap((e, i) => [
      { s: `dup-${i}-a`, evs: [e], exp: 'no_stream' as ExpectedRevision },
      { s: `dup-${i}-b`, evs: [e], exp: 'no_stream' as ExpectedRevision },
    ]);
    const all = [...racing, ...dup];
    const settled = await Promise.allSettled(all.map((a) => store.append(a.s, a.evs, a.exp)));

    const stored = await storedIds(d);
    for (const s of streams) {
      const mine = all.map((a, i) => ({ a, r: settled[i] })).filter(({ a }) => a.s === s);
      const won = mine.filter(({ r }) => r.status === 'fulfilled');
      expect(won).toHaveLength(1);
      for (const { r } of mine.filter(({ r }) => r.status === 'rejected')) {
        expect((r as PromiseRejectedResult).reason).toBeInstanceOf(WrongExpectedRevisionError);
        expect((r as PromiseRejectedResult).reason.actual).toBe(1n);
      }
      expect(stored.get(s)).toHaveLength(2);
      expect(stored.get(s)![1]).toBe(won[0].a.evs[0].id);
    }
    for (const [i, e] of shared.entries()) {
      const [a, b] = [settled[racing.length + 2 * i], settled[racing.length + 2 * i + 1]] as PromiseFulfilledResult<AppendResult>[];
      expect([a.status, b.status]).toEqual(['fulfilled', 'fulfilled']);
      expect([a.value.noop, b.value.noop].sort()).toEqual([false, true]);
      const holders = [...stored.entries()].filter(([, ids]) => ids.includes(e.id));
      expect(holders).toHaveLength(1);
    }
    // some of them shared a transaction
    const txids = settled.filter((s) => s.status === 'fulfilled').map((s) => (s as PromiseFulfilledResult<AppendResult>).value.position[0]);
    expect(new Set(txids).size).toBeLessThan(txids.length);
  });
});
