import { spawn } from 'node:child_process';
import { describe, expect, it, vi } from 'vitest';
import { openPostgres } from '../../src/db';
import { CheckpointWrites, DEFER_MS } from '../../src/eventstore/checkpoints';
import { SharedFeed } from '../../src/eventstore/feed';
import { comparePositions, positionFromString } from '../../src/eventstore/port';
import { follower, type Projection } from '../../src/eventstore/projection';
import { migrateRunnerTables, ProjectionRunner, prepareRunners } from '../../src/eventstore/runner';
import { silentLogger } from '../../src/logger';
import { countingProjection } from '../support/counting-projection';
import { onRealPostgres, type TestStore, useFreshStore } from '../support/db';
import { anEvent, sleep } from '../support/events';
import { until } from '../support/until';
import { onPostgresServer } from '../support/suites';
import { nodeArgs } from '../support/bundles';

type T = TestStore;

/**
 * A wait for a runner to pass what was appended: the counting projection writes each event in two statements and a
 * runner started here applies the file's whole log (what the earlier tests appended, more on a slower host), which
 * took over 5 s at load 30. What these tests check is that it gets there, not how fast.
 */
const CAUGHT_UP_MS = 30_000;

const snapshot = async (t: T) => ({
  counts: await t.db('t_counts').select('stream_id', 'n').orderBy('stream_id'),
  seen: Number((await t.db('t_seen').count<{ count: string }[]>('* as count'))[0].count),
});

/** Checkpoint rows led by the owner 'me' at generation 0, at the start (the runner tables migrated first). */
async function ledByMe(t: T, ...names: string[]) {
  await migrateRunnerTables(t.db);
  const rows = names.map((name) => ({ name, position: 'start', version: 1, generation: 0, lease_owner: 'me' }));
  await t.db('aivis_checkpoints').insert(rows).onConflict('name').merge();
}

async function appendMany(t: T, streams: number, perStream: number) {
  for (let i = 0; i < perStream; i++) {
    await Promise.all(Array.from({ length: streams }, (_, s) => t.store.append(`s-${s}`, [anEvent(), anEvent()], 'any')));
  }
  return streams * perStream * 2;
}

/**
 * Runs `test` with runners of one projection: a leader on the test's database and a follower on a connection of its
 * own, whose queries `onQuery` sees; both are stopped and that connection closed after, whatever `test` did.
 */
async function withLeaderAndFollower(
  t: T,
  name: string,
  onQuery: (q: { sql: string }) => void,
  test: (a: ProjectionRunner, b: ProjectionRunner) => Promise<void>,
) {
  const projection = countingProjection({ name });
  const a = new ProjectionRunner({ projection, store: t.store, db: t.db, logger: silentLogger(), pollMs: 20 });
  const followerDb = await openPostgres(t.url!, 2);
  followerDb.db.on('query', onQuery);
  const b = new ProjectionRunner({ projection, store: t.store, db: followerDb.db, logger: silentLogger(), pollMs: 20 });
  try {
    await test(a, b);
  } finally {
    await a.stop();
    await b.stop();
    await followerDb.close();
  }
}

describe('projection runner', () => {
  let t: T;
  useFreshStore((x) => (t = x));

  it('given events, when run to the head, then each is applied once and the checkpoint is the last position', async () => {
    const total = await appendMany(t, 3, 10);
    const runner = new ProjectionRunner({ projection: countingProjection(), store: t.store, db: t.db, logger: silentLogger(), batchSize: 7 });
    expect(await runner.runToHead()).toBe(total);
    const s = await snapshot(t);
    expect(s.seen).toBe(total);
    expect(s.counts).toEqual([0, 1, 2].map((i) => ({ stream_id: `s-${i}`, n: 20 })));
    const cp = await t.db('aivis_checkpoints').where('name', 'test-counting').first();
    expect(cp.position).toBe(runner.status().position);
    // nothing new: a second run applies nothing
    expect(await runner.runToHead()).toBe(0);
  });

  it('given a batch whose apply fails, then neither its rows nor its checkpoint are written', async () => {
    const failing = countingProjection({ name: 'test-failing' });
    const apply = failing.apply;
    let calls = 0;
    failing.apply = async (trx, events, ctx) => {
      await apply(trx, events, ctx);
      if (++calls === 2) throw new Error('boom');
    };
    failing.tables = ['t_fail_counts'];
    const runner = new ProjectionRunner({
      projection: { ...countingProjection({ name: 'test-failing' }), apply: failing.apply },
      store: t.store,
      db: t.db,
      logger: silentLogger(),
      batchSize: 10,
    });
    await t.db.raw('truncate t_counts, t_seen');
    await expect(runner.runToHead()).rejects.toThrow('boom');
    // first batch committed, second rolled back with its checkpoint
    expect((await snapshot(t)).seen).toBe(10);
    const cp = await t.db('aivis_checkpoints').where('name', 'test-failing').first();
    expect(cp.position).not.toBe('0:0');
    await t.db('aivis_checkpoints').where('name', 'test-failing').update({ lease_owner: null });
  });

  it('given a projection that ignores some of its events, then a batch of only those opens no transaction, moves the checkpoint past them and answers waiters; the others are applied', async () => {
    const counting = countingProjection({ name: 'test-ignoring' });
    const applied: string[] = [];
    const projection: Projection = {
      ...counting,
      ignores: (e) => e.streamId.startsWith('ignored-'),
      apply: async (trx, events, ctx) => {
        applied.push(...events.map((e) => e.streamId));
        await counting.apply(trx, events, ctx);
      },
    };
    await counting.migrate(t.db);
    await t.db.raw('truncate t_counts, t_seen');
    const runner = new ProjectionRunner({ projection, store: t.store, db: t.db, logger: silentLogger(), pollMs: 20 });
    let transactions = 0;
    const count = (q: { sql: string }) => {
      if (/^begin/i.test(q.sql)) transactions++;
    };
    await runner.start();
    try {
      await runner.waitFor(await t.store.headPosition(), 5000);
      applied.length = 0;
      t.db.on('query', count);
      const ignored = await t.store.append('ignored-1', [anEvent(), anEvent()], 'any');
      expect(await runner.waitFor(ignored.position, 5000)).toBe(true);
      expect(transactions).toBe(0);
      await until('the checkpoint stored past them', async () => {
        const cp = await t.db('aivis_checkpoints').where('name', 'test-ignoring').first('position');
        return comparePositions(positionFromString(cp.position), ignored.position) >= 0;
      });
      const kept = await t.store.append('kept-1', [anEvent()], 'any');
      expect(await runner.waitFor(kept.position, 5000)).toBe(true);
      expect(transactions).toBe(1);
      expect(applied).toEqual(['kept-1']);
      const counts = (await snapshot(t)).counts.filter((c: { stream_id: string }) => !c.stream_id.startsWith('s-'));
      expect(counts).toEqual([{ stream_id: 'kept-1', n: 1 }]);
    } finally {
      t.db.off('query', count);
      await runner.stop();
    }
  });

  it('given a follower met for the first time, then it starts at the head; each later batch is followed with no transaction open before its checkpoint moves, and a batch whose follow fails is followed again', async () => {
    await t.store.append('before-follower', [anEvent()], 'any');
    const followed: string[][] = [];
    const open: number[] = [];
    let failNext = false;
    const follower: Projection = {
      name: 'test-follower',
      version: 1,
      tables: [],
      handles: ['ApiKeyRevoked'],
      migrate: async () => {},
      apply: async () => {
        throw new Error('a follower writes no rows');
      },
      async follow(events) {
        const r = await t.db.raw(
          `select count(*)::int as n from pg_stat_activity where datname = current_database() and state like 'idle in transaction%'`,
        );
        open.push(r.rows[0].n);
        if (failNext) {
          failNext = false;
          throw new Error('the follower failed');
        }
        followed.push(events.map((e) => e.streamId));
      },
    };
    const runner = new ProjectionRunner({ projection: follower, store: t.store, db: t.db, logger: silentLogger(), pollMs: 20, startAtHead: true });
    await runner.start();
    try {
      const first = await t.store.append('after-follower', [anEvent(), anEvent()], 'any');
      expect(await runner.waitFor(first.position, 5000)).toBe(true);
      expect(followed).toEqual([['after-follower', 'after-follower']]);
      failNext = true;
      const second = await t.store.append('failed-once', [anEvent()], 'any');
      expect(await runner.waitFor(second.position, 10_000)).toBe(true);
      // the failed batch was not passed: followed again, then the checkpoint moved past it
      expect(followed).toEqual([['after-follower', 'after-follower'], ['failed-once']]);
      expect(open.length).toBe(3);
      expect(open.every((n) => n === 0)).toBe(true);
      await until('the checkpoint stored past it', async () => {
        const cp = await t.db('aivis_checkpoints').where('name', 'test-follower').first('position');
        return comparePositions(positionFromString(cp.position), second.position) >= 0;
      });
    } finally {
      await runner.stop();
    }
  });

  it("given a follower whose work fails on one event's content, then that event is reported and passed over and the others of its batch are followed", async () => {
    const followed: string[] = [];
    const poisoned = follower({
      name: 'test-follower-poison',
      handles: ['ApiKeyRevoked'],
      async follow(events) {
        if (events.some((e) => e.streamId === 'poison-1')) throw new TypeError('cannot read this event');
        followed.push(...events.map((e) => e.streamId));
      },
    });
    const runner = new ProjectionRunner({ projection: poisoned, store: t.store, db: t.db, logger: silentLogger(), pollMs: 20, startAtHead: true });
    await runner.start();
    try {
      await t.store.append('good-1', [anEvent()], 'any');
      const poison = await t.store.append('poison-1', [anEvent()], 'any');
      const last = await t.store.append('good-2', [anEvent()], 'any');
      expect(await runner.waitFor(last.position, 10_000)).toBe(true);
      expect(followed.sort()).toEqual(['good-1', 'good-2']);
      const [poisonEvent] = await t.store.readStream('poison-1');
      expect(poisonEvent.position).toEqual(poison.position);
      const anomalies = await t.db('aivis_event_anomalies').where({ projection: 'test-follower-poison' }).select('event_id', 'reason');
      expect(anomalies).toEqual([{ event_id: poisonEvent.id, reason: 'not followed: cannot read this event' }]);
      expect(runner.status().status).toBe('running');
    } finally {
      await runner.stop();
    }
  });

  it('given a running leader, when a second instance starts, then it does not apply anything and waitFor still resolves', async () => {
    const projection = countingProjection({ name: 'test-leader' });
    await t.db.raw('truncate t_counts, t_seen');
    const a = new ProjectionRunner({ projection, store: t.store, db: t.db, logger: silentLogger(), pollMs: 20 });
    const b = new ProjectionRunner({ projection, store: t.store, db: t.db, logger: silentLogger(), pollMs: 20 });
    await a.start();
    await sleep(50);
    await b.start();
    const r = await t.store.append('s-leader', [anEvent()], 'any');
    expect(await b.waitFor(r.position, CAUGHT_UP_MS)).toBe(true);
    expect(a.status().leader).toBe(true);
    expect(b.status().leader).toBe(false);
    const total = Number((await t.db('aivis_events').count<{ count: string }[]>('* as count'))[0].count);
    expect((await snapshot(t)).seen).toBe(total);
    await a.stop();
    await b.stop();
  });

  it.runIf(onRealPostgres)('given a leader, when appends keep arriving, then a second instance does not retry the lease on each one', async () => {
    await t.db.raw('truncate t_counts, t_seen');
    let followerQueries = 0;
    await withLeaderAndFollower(
      t,
      'test-follower',
      () => followerQueries++,
      async (a, b) => {
        await a.start();
        await sleep(50);
        await b.start();
        await sleep(50);
        expect(b.status().leader).toBe(false);
        followerQueries = 0;
        // when: 100 appends, one at a time, each announced to both runners
        let last = null;
        for (let i = 0; i < 100; i++) last = await t.store.append('s-follower', [anEvent()], 'any');
        expect(await a.waitFor(last!.position, CAUGHT_UP_MS)).toBe(true);
        // then: the follower slept through them (at most a lease retry or two), the leader kept up
        expect(followerQueries).toBeLessThan(10);
      },
    );
  });

  it.runIf(onRealPostgres)(
    'given a leader holding its lease, then a second instance sends no lease update until the lease is free, and takes the lead once it is',
    async () => {
      let leaseUpdates = 0;
      // the runners apply the log from its start: rows an earlier test left would stop them on duplicate keys
      if (await t.db.schema.hasTable('t_seen')) await t.db.raw('truncate t_counts, t_seen');
      await withLeaderAndFollower(
        t,
        'test-lease-free',
        (q) => {
          if (/^update aivis_checkpoints as c set lease_owner/.test(q.sql)) leaseUpdates++;
        },
        async (a, b) => {
          await a.start();
          await b.start();
          // when: two of the follower's 2 s turns pass while the leader holds its lease
          await sleep(4500);
          // then: it looked at the shared read of the checkpoints, and sent no conditional update that could change nothing
          expect(b.status().leader).toBe(false);
          expect(leaseUpdates).toBe(0);
          // when: the leader stops (its lease released), then the follower takes it at its next turn
          await a.stop();
          await until('the follower leads', async () => b.status().leader, 5000);
          expect(leaseUpdates).toBeGreaterThan(0);
        },
      );
    },
  );

  it("given an instance's runners prepared and begun together, then their leases are taken in one statement and given up in one when they stop together", async () => {
    // a connection of their own, whose statements are counted
    const own = t.url ? await openPostgres(t.url, 2) : null;
    const db = own?.db ?? t.db;
    const sent: string[] = [];
    const count = (q: { sql: string }) => sent.push(q.sql);
    db.on('query', count);
    try {
      const checkpoints = new CheckpointWrites(db);
      const feed = new SharedFeed(t.store);
      const names = ['t-together-1', 't-together-2', 't-together-3'];
      const runners = names.map(
        (name) =>
          new ProjectionRunner({
            projection: follower({ name, handles: ['UserAdded'], follow: async () => {} }),
            store: t.store,
            db,
            logger: silentLogger(),
            feed,
            checkpoints,
          }),
      );
      await prepareRunners(db, runners);
      // when
      for (const r of runners) r.begin();
      await until('all three lead', async () => runners.every((r) => r.status().leader), 10_000);
      // then
      const takes = sent.filter((q) => q.startsWith('update aivis_checkpoints as c set lease_owner = v.owner'));
      expect(takes).toHaveLength(1);
      const owners = await t.db('aivis_checkpoints').whereIn('name', names).pluck('lease_owner');
      expect(new Set(owners).size).toBe(3);
      // when: stopped together
      await Promise.all(runners.map((r) => r.stop()));
      // then
      expect(sent.filter((q) => q.startsWith('update aivis_checkpoints as c set lease_owner = null'))).toHaveLength(1);
      expect(Number((await t.db('aivis_checkpoints').whereIn('name', names).whereNotNull('lease_owner').count<{ n: string }[]>('* as n'))[0].n)).toBe(
        0,
      );
    } finally {
      db.off('query', count);
      await own?.close();
    }
  });

  it.runIf(onRealPostgres)(
    'given checkpoint rows held, lapsed, released and own, then only the one held by another instance is not free to take',
    async () => {
      await migrateRunnerTables(t.db);
      const row = (name: string, owner: string | null, until: string | null) => ({
        name,
        position: 'start',
        version: 1,
        generation: 0,
        lease_owner: owner,
        lease_until: until === null ? null : t.db.raw(until),
      });
      await t
        .db('aivis_checkpoints')
        .insert([
          row('t-held', 'other', "now() + interval '15 seconds'"),
          row('t-lapsed', 'other', "now() - interval '1 second'"),
          row('t-released', null, null),
          row('t-own', 'me', "now() + interval '15 seconds'"),
        ]);
      const c = new CheckpointWrites(t.db);
      expect(await c.mayTake('t-held', 'me', 1000)).toBe(false);
      expect(await c.mayTake('t-lapsed', 'me', 1000)).toBe(true);
      expect(await c.mayTake('t-released', 'me', 1000)).toBe(true);
      expect(await c.mayTake('t-own', 'me', 1000)).toBe(true);
      // a projection never started has no row yet: its first start creates it
      expect(await c.mayTake('t-absent', 'me', 1000)).toBe(true);
      // the same read serves the other instance's view of the held row
      expect(await c.mayTake('t-held', 'other', 1000)).toBe(true);
    },
  );

  it('given a rebuild while a leader runs and appends go on, then the read model is never emptied, the leader goes on from the swap and the result equals one built from zero', async () => {
    const projection = countingProjection({ name: 'test-fence' });
    await projection.migrate(t.db);
    await t.db.raw('truncate t_counts, t_seen');
    const leader = new ProjectionRunner({ projection, store: t.store, db: t.db, logger: silentLogger(), pollMs: 20, batchSize: 5 });
    await leader.start();
    let live: Awaited<ReturnType<typeof snapshot>>;
    try {
      await appendMany(t, 2, 5);
      expect(await leader.waitFor(await t.store.lastPosition(), CAUGHT_UP_MS)).toBe(true);
      const before = (await snapshot(t)).seen;
      // when: a slow rebuild (every batch of the shadow sleeps), appends meanwhile, reads meanwhile
      const other = new ProjectionRunner({
        projection: countingProjection({ name: 'test-fence', delayMs: 30 }),
        store: t.store,
        db: t.db,
        logger: silentLogger(),
        batchSize: 20,
      });
      const rebuilt = other.rebuild();
      const seenMeanwhile: number[] = [];
      let done = false;
      rebuilt.finally(() => (done = true)).catch(() => undefined);
      while (!done) {
        await t.store.append('s-fence', [anEvent()], 'any');
        seenMeanwhile.push((await snapshot(t)).seen);
        await sleep(5);
      }
      await rebuilt;
      const last = await t.store.append('s-fence', [anEvent()], 'any');
      expect(await leader.waitFor(last.position, CAUGHT_UP_MS)).toBe(true);
      // then: the live read model never went below what it held, every event is counted once
      expect(Math.min(...seenMeanwhile)).toBeGreaterThanOrEqual(before);
      const total = Number((await t.db('aivis_events').count<{ count: string }[]>('* as count'))[0].count);
      expect((await snapshot(t)).seen).toBe(total);
      live = await snapshot(t);
    } finally {
      // also when something above failed: a leader left running writes the tables the later tests count in
      await leader.stop();
    }
    await new ProjectionRunner({ projection, store: t.store, db: t.db, logger: silentLogger() }).rebuild();
    expect(await snapshot(t)).toEqual(live);
  }, 90_000);

  it('given two live projections sharing a feed, when events of either type arrive, then each applies its own once and moves its checkpoint past the others', async () => {
    // given: the counting projection (ApiKeyRevoked) and one that handles nothing appended here
    const counting = countingProjection({ name: 'test-feed-counting' });
    const idle: Projection = {
      name: 'test-feed-idle',
      version: 1,
      tables: [],
      migrate: async () => {},
      handles: ['UserAdded'],
      apply: async () => {
        throw new Error('no UserAdded was appended');
      },
    };
    await t.db.raw('truncate t_counts, t_seen');
    const feed = new SharedFeed(t.store);
    const a = new ProjectionRunner({ projection: counting, store: t.store, db: t.db, logger: silentLogger(), pollMs: 20, feed });
    const b = new ProjectionRunner({ projection: idle, store: t.store, db: t.db, logger: silentLogger(), pollMs: 20, feed });
    await a.start();
    await b.start();
    try {
      // when
      let last = null;
      for (let i = 0; i < 30; i++) last = await t.store.append(`s-feed-${i % 3}`, [anEvent(), anEvent()], 'any');
      // then
      expect(await a.waitFor(last!.position, CAUGHT_UP_MS)).toBe(true);
      expect(await b.waitFor(last!.position, CAUGHT_UP_MS)).toBe(true);
      const total = Number((await t.db('aivis_events').count<{ count: string }[]>('* as count'))[0].count);
      expect((await snapshot(t)).seen).toBe(total);
      // stored too: the idle one's move within DEFER_MS (checkpoints.ts)
      const passed = async () =>
        (await t.db('aivis_checkpoints').whereIn('name', ['test-feed-counting', 'test-feed-idle']).select('name', 'position')).filter(
          (row: { position: string }) => comparePositions(positionFromString(row.position), last!.position) >= 0,
        ).length === 2;
      await until('both checkpoints stored past the last append', passed, 2000, 5);
      // and after a rebuild elsewhere, the projection whose batches were all skipped goes on (fenced, from zero)
      await new ProjectionRunner({ projection: idle, store: t.store, db: t.db, logger: silentLogger() }).rebuild();
      const next = await t.store.append('s-feed-0', [anEvent()], 'any');
      expect(await b.waitFor(next.position, CAUGHT_UP_MS)).toBe(true);
      expect(b.status().status).toBe('running');
    } finally {
      await a.stop();
      await b.stop();
    }
  }, 90_000);

  it.skipIf(!onRealPostgres)(
    "given one projection's batch held open after its first write, when events are appended, then another projection applies them meanwhile",
    async () => {
      // given: a projection whose batch writes a row, then waits (a website's re-derivation runs seconds like this)
      let entered!: () => void;
      const inBatch = new Promise<void>((r) => (entered = r));
      let release!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      const slow: Projection = {
        name: 'test-slow',
        version: 1,
        tables: ['t_slow'],
        handles: ['ApiKeyRevoked'],
        migrate: async (db) => {
          await db.raw('create table if not exists t_slow (event_id uuid primary key)');
        },
        apply: async (trx, events) => {
          await trx('t_slow').insert(events.map((e) => ({ event_id: e.id })));
          entered();
          await gate;
        },
      };
      const slowRunner = new ProjectionRunner({ projection: slow, store: t.store, db: t.db, logger: silentLogger(), pollMs: 20 });
      const beside = countingProjection({ name: 'test-beside-slow' });
      await beside.migrate(t.db);
      await t.db.raw('truncate t_counts, t_seen');
      const counting = new ProjectionRunner({
        projection: beside,
        store: t.store,
        db: t.db,
        logger: silentLogger(),
        pollMs: 20,
      });
      await slowRunner.start();
      await counting.start();
      try {
        await t.store.append('s-slow', [anEvent()], 'any');
        await inBatch;
        // when
        const next = await t.store.append('s-beside-slow', [anEvent()], 'any');
        // then: read past the open batch (it appends no events), not held behind it
        expect(await counting.waitFor(next.position, CAUGHT_UP_MS)).toBe(true);
        expect(await slowRunner.waitFor(next.position, 50)).toBe(false);
        release();
        expect(await slowRunner.waitFor(next.position, CAUGHT_UP_MS)).toBe(true);
      } finally {
        release();
        await slowRunner.stop();
        await counting.stop();
      }
    },
    90_000,
  );

  it('given idle moves deferred together, then one statement stores the latest of each within DEFER_MS, and a runner no longer leading is told', async () => {
    // given three checkpoints: two led by this runner's owner at generation 0, one since taken by another instance
    await ledByMe(t, 'test-cw-a', 'test-cw-b', 'test-cw-c');
    await t.db('aivis_checkpoints').where('name', 'test-cw-c').update({ lease_owner: 'another' });
    const writes = new CheckpointWrites(t.db);
    const statements: string[] = [];
    const seen = (q: { sql: string }) => {
      if (q.sql.includes('aivis_checkpoints')) statements.push(q.sql);
    };
    const fenced: string[] = [];
    const stored = () => t.db('aivis_checkpoints').where('name', 'like', 'test-cw-%').orderBy('name').pluck('position');
    t.db.on('query', seen);
    try {
      // when the three move, `a` twice (the deferral's timer faked: a loaded host cannot fire it before the check)
      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
      for (const [n, at] of [
        ['a', 'at-a1'],
        ['b', 'at-b'],
        ['c', 'at-c'],
        ['a', 'at-a2'],
      ])
        writes.defer({ name: `test-cw-${n}`, owner: 'me', generation: 0n, position: at }, () => fenced.push(n));
      // then nothing is stored at once; within DEFER_MS one statement stores the latest of the two still led
      try {
        expect(await stored()).toEqual(['start', 'start', 'start']);
        vi.advanceTimersByTime(DEFER_MS);
      } finally {
        vi.useRealTimers();
      }
      await until('the deferred moves', async () => fenced.length > 0, 5000, 5);
      expect(statements.filter((q) => q.startsWith('update'))).toHaveLength(1);
    } finally {
      t.db.off('query', seen);
    }
    expect(await stored()).toEqual(['at-a2', 'at-b', 'start']);
    expect(fenced).toEqual(['c']);
  });

  it("given a deferred move, when its runner's batch writes the checkpoint, then a move not sent yet is dropped and one sent is waited for", async () => {
    await ledByMe(t, 'test-cw-y');
    const writes = new CheckpointWrites(t.db);
    const move = (position: string) => writes.defer({ name: 'test-cw-y', owner: 'me', generation: 0n, position }, () => undefined);
    const stored = async () => (await t.db('aivis_checkpoints').where('name', 'test-cw-y').first('position')).position;
    // not sent yet: dropped (the batch stores a later position)
    move('idle-1');
    await writes.yieldTo('test-cw-y');
    await sleep(DEFER_MS * 2);
    expect(await stored()).toBe('start');
    if (!onRealPostgres) return; // below, a second session holds the row: PGlite has one connection
    // sent, and held up by a lock: the batch goes after it, so it cannot land later and move the checkpoint back
    const holder = await t.db.transaction();
    await holder('aivis_checkpoints').where('name', 'test-cw-y').forUpdate().first();
    move('idle-2');
    const sent = writes.settle('other'); // sends the deferred moves now, answered once the lock is gone
    let yielded = false;
    const yielding = writes.yieldTo('test-cw-y').then(() => (yielded = true));
    await sleep(100);
    expect(yielded).toBe(false);
    await holder.commit();
    await yielding;
    expect(await stored()).toBe('idle-2');
    await sent;
  });

  it("given a shared read of the fences, then a runner's idle check uses it until it is older than allowed or than the runner's own lease", async () => {
    await ledByMe(t, 'test-fence');
    const writes = new CheckpointWrites(t.db);
    expect(await writes.stillLeads('test-fence', 'me', 0n, 60_000, 0)).toBe(true);
    // when a rebuild elsewhere moves the generation on
    await t.db('aivis_checkpoints').where('name', 'test-fence').update({ generation: 1 });
    // then a check within the allowed age answers from the shared read, a check after the runner's own lease reads again
    expect(await writes.stillLeads('test-fence', 'me', 0n, 60_000, 0)).toBe(true);
    expect(await writes.stillLeads('test-fence', 'me', 0n, 60_000, Date.now())).toBe(false);
    await sleep(5);
    expect(await writes.stillLeads('test-fence', 'me', 1n, 0, 0)).toBe(true);
  });

  it('given a changed projection version, when prepared, then its tables are dropped and it rebuilds from zero', async () => {
    const v1 = new ProjectionRunner({
      projection: countingProjection({ name: 'test-version', version: 1 }),
      store: t.store,
      db: t.db,
      logger: silentLogger(),
    });
    await t.db.raw('truncate t_counts, t_seen');
    await v1.runToHead();
    await t.db('t_seen').insert({ event_id: '00000000-0000-4000-8000-000000000000', stream_id: 'stale' });
    const v2 = new ProjectionRunner({
      projection: countingProjection({ name: 'test-version', version: 2 }),
      store: t.store,
      db: t.db,
      logger: silentLogger(),
    });
    await v2.runToHead();
    expect(await t.db('t_seen').where('stream_id', 'stale')).toHaveLength(0);
    const total = Number((await t.db('aivis_events').count<{ count: string }[]>('* as count'))[0].count);
    expect((await snapshot(t)).seen).toBe(total);
  });

  it('given read models written from zero (a rebuild, a catch-up after a version change, a live start), when done, then their tables come vacuumed and analyzed', async () => {
    // reltuples is -1 on a table never vacuumed or analyzed
    const settled = async () =>
      (
        await t.db.raw(
          `select c.reltuples::bigint::text as n, s.vacuum_count > 0 and s.analyze_count > 0 as both
             from pg_class c join pg_stat_user_tables s on s.relid = c.oid where c.oid = 't_seen'::regclass`,
        )
      ).rows[0] as { n: string; both: boolean };
    const total = async () => String((await t.db('aivis_events').count<{ count: string }[]>('* as count'))[0].count);
    const runner = (version: number, settleAfterEvents = 1) =>
      new ProjectionRunner({
        projection: countingProjection({ name: 'test-settle', version }),
        store: t.store,
        db: t.db,
        logger: silentLogger(),
        pollMs: 20,
        settleAfterEvents,
      });
    await t.db.raw('drop table if exists t_counts, t_seen');
    await appendMany(t, 2, 3);
    // a catch-up from zero shorter than the threshold leaves the tables as written
    await runner(1, 1_000_000).runToHead();
    expect(await settled()).toEqual({ n: '-1', both: false });
    await runner(1).rebuild();
    expect(await settled()).toEqual({ n: await total(), both: true });
    await runner(2).runToHead();
    expect(await settled()).toEqual({ n: await total(), both: true });
    const live = runner(3);
    await live.start();
    try {
      expect(await live.waitFor(await t.store.lastPosition(), CAUGHT_UP_MS)).toBe(true);
      await until('the live catch-up vacuumed', async () => (await settled()).both && (await settled()).n === (await total()), CAUGHT_UP_MS);
    } finally {
      await live.stop();
    }
  });

  it('given an unknown event type and a malformed event, then both are reported and the projection stops at the malformed one', async () => {
    await t.db.raw('truncate t_counts, t_seen');
    const projection = countingProjection({ name: 'test-anomaly' });
    const runner = new ProjectionRunner({ projection, store: t.store, db: t.db, logger: silentLogger(), pollMs: 20 });
    await runner.runToHead();
    const unknown = anEvent({ type: 'SomethingFromTheFuture', data: {} });
    const malformed = anEvent({ data: { wrong: true } });
    await t.store.append('s-anomaly', [unknown], 'any');
    await t.store.append('s-anomaly', [malformed], 'any');
    await t.store.append('s-anomaly', [anEvent()], 'any');
    await runner.start();
    for (let i = 0; i < 100 && runner.status().status !== 'failed'; i++) await sleep(20);
    expect(runner.status().status).toBe('failed');
    expect(runner.status().error).toContain(malformed.id);
    const anomalies = await t.db('aivis_event_anomalies').where('projection', 'test-anomaly').orderBy('event_id');
    expect(anomalies.map((a) => [a.event_id, a.type]).sort()).toEqual(
      [
        [unknown.id, unknown.type],
        [malformed.id, 'ApiKeyRevoked'],
      ].sort(),
    );
    expect((await t.db('aivis_checkpoints').where('name', 'test-anomaly').first()).status).toBe('failed');
    await runner.stop();
  });
});

// Killing a process needs a database two processes can share: the real server.
const crash = onPostgresServer('projection crash test', 'needs a server two processes share');

crash('projection runner crash recovery', () => {
  let t: T;
  useFreshStore((x) => (t = x));

  const child = () => {
    const p = spawn(process.execPath, nodeArgs('test/support/runner-child.ts'), {
      env: { ...process.env, TEST_DB_URL: t.url! },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    return p;
  };

  it('given a process killed mid-run, when restarted, then the read model equals a rebuild from zero', async () => {
    const total = await appendMany(t, 10, 100);
    const first = child();
    // kill it once it has applied some but not all
    for (let i = 0; i < 600; i++) {
      const seen = await t.db.schema.hasTable('t_seen').then(async (has) => (has ? (await snapshot(t)).seen : 0));
      if (seen > 100) break;
      await sleep(25);
    }
    first.kill('SIGKILL');
    await new Promise((r) => first.once('exit', r));
    const partial = (await snapshot(t)).seen;
    expect(partial).toBeGreaterThan(0);
    expect(partial).toBeLessThan(total);

    // the lease of the killed process expires; make it expire now rather than in 15 s
    await t.db('aivis_checkpoints').update({ lease_until: t.db.raw(`now() - interval '1 second'`) });
    const second = child();
    for (let i = 0; i < 1200 && (await snapshot(t)).seen < total; i++) await sleep(25);
    second.kill('SIGTERM');
    await new Promise((r) => second.once('exit', r));
    const resumed = await snapshot(t);
    expect(resumed.seen).toBe(total);

    const rebuild = new ProjectionRunner({ projection: countingProjection(), store: t.store, db: t.db, logger: silentLogger() });
    await t.db('aivis_checkpoints').update({ lease_owner: null });
    await rebuild.rebuild();
    expect(await snapshot(t)).toEqual(resumed);
  }, 90_000);
});
