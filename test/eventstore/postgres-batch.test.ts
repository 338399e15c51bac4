import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seededRandom } from '../../src/domain/random';
import { type AppendResult, type EventStore, type ExpectedRevision, type NewEvent, WrongExpectedRevisionError } from '../../src/eventstore/port';
import { openPostgresEventStore } from '../../src/eventstore/postgres';
import { freshDatabase, onRealPostgres, type TestDatabase } from '../support/db';
import { anEvent } from '../support/events';

// Commit batching is for a real server only: PGlite has one connection and keeps one transaction per append.
const suite = onRealPostgres ? describe : describe.skip;
if (!onRealPostgres) console.log('Postgres append batching test skipped: DATABASE_URL unset (embedded PGlite does not batch appends)');

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
  const rows = (await d.db('aivis_events').select('stream_id', 'event_id').orderBy(['stream_id', 'revision'])) as { stream_id: string; event_id: string }[];
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

  it('given 50 concurrent appends with conflicts and duplicates, then each has the outcome the same appends one after another would have', async () => {
    // one batch slot: the first append goes alone, the other 49 wait and go in issue order, in batches
    const store = await openPostgresEventStore(d.db, { batch: { maxInFlight: 1 } });
    const model = new Model();
    const seed: [string, NewEvent[]][] = Array.from({ length: 4 }, (_, i) => [`seq-s${i}`, [anEvent()]]);
    for (const [s, evs] of seed) {
      await store.append(s, evs, 'no_stream');
      model.append(s, evs, 'no_stream');
    }
    const r = seededRandom(4242);
    const streams = [...seed.map(([s]) => s), 'seq-n0', 'seq-n1', 'seq-n2'];
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
    expect(await storedIds(d)).toEqual(model.streams);
    // they were batched: appends after the first share a transaction, in issue order
    const positions = settled.flatMap((s, i) => (s.status === 'fulfilled' && !s.value.noop ? [s.value.position] : []));
    expect(new Set(positions.slice(1).map((p) => p[0])).size).toBeLessThan(positions.length - 1);
    for (let i = 1; i < positions.length; i++) expect(positions[i][1]).toBeGreaterThan(positions[i - 1][1]);
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
