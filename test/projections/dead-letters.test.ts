import { randomUUID } from 'node:crypto';
import { beforeEach, describe, expect, it } from 'vitest';
import { DEAD_LETTERS } from '../../src/eventstore/dead-letters';
import type { Projection } from '../../src/eventstore/projection';
import { ProjectionRunner } from '../../src/eventstore/runner';
import { silentLogger } from '../../src/logger';
import { deadLetteredSites, isDeadLettered } from '../../queries/health/dead-letters';
import { type TestStore, useFreshStore } from '../support/db';
import { until } from '../support/until';
import { anEvent, testMetadata } from '../support/events';
import type { NewEvent } from '../../src/eventstore/port';

type T = TestStore;

/** A year Postgres cannot hold (what the import once let through): the read model's timestamptz column refuses it. */
const POISON_TIME = '0000-12-31T23:00:00.000Z';

/**
 * A read model of event times per website: an event whose time its column cannot hold fails to apply, as the answers
 * projection failed on such an answer. `fixed` stands for a fix deployed later (the time is clamped).
 */
const timesProjection = (name: string, state = { fixed: false }): Projection => ({
  name,
  version: 1,
  tables: ['t_times'],
  handles: ['ApiKeyRevoked'],
  // each test's own events (the log is shared by the file's tests)
  streamPrefixes: { ApiKeyRevoked: `${name}-` },
  async migrate(db) {
    await db.raw('create table if not exists t_times (event_id uuid primary key, website_id text, at timestamptz not null)');
  },
  async apply(trx, events) {
    const rows = events.map((e) => ({
      event_id: e.id,
      website_id: e.metadata.website_id ?? null,
      at: state.fixed && e.metadata.time === POISON_TIME ? '2000-01-01T00:00:00Z' : e.metadata.time,
    }));
    await trx('t_times').insert(rows);
  },
});

const eventOf = (website: string | null, time = new Date().toISOString()) => anEvent({ metadata: testMetadata({ website_id: website, time }) });

describe('one bad event never stops everyone', () => {
  let t: T;
  useFreshStore((x) => (t = x));
  beforeEach(async () => {
    await t.db.raw('drop table if exists t_times');
  });

  const applied = async (website: string) =>
    (await t.db('t_times').where('website_id', website).orderBy('at').select('event_id')).map((r) => r.event_id);
  const letters = async (projection: string) =>
    (await t.db(DEAD_LETTERS).where('projection', projection).orderBy('seq').select('website_id', 'event_id', 'state', 'error')).map((r) => ({
      ...r,
      error: r.error?.slice(0, 60) ?? null,
    }));

  /** Appends the events, in one stream of projection P's own. */
  const append = (P: string, events: NewEvent[]) => t.store.append(`${P}-${randomUUID()}`, events, 'no_stream');
  /** A runner of the projection for one-off runs: catching up, retrying, rebuilding. */
  const runnerOf = (projection: Projection) => new ProjectionRunner({ projection, store: t.store, db: t.db, logger: silentLogger() });
  /** Runs `body` while a live runner of the projection runs (polling every 20 ms); stops it after. */
  const whileLive = async (projection: Projection, body: (runner: ProjectionRunner) => Promise<void>) => {
    const runner = new ProjectionRunner({ projection, store: t.store, db: t.db, logger: silentLogger(), pollMs: 20 });
    await runner.start();
    try {
      await body(runner);
    } finally {
      await runner.stop();
    }
  };

  it('given a poison event of one website amid others in one batch, then the others are applied, that website is set aside from that event on, and its later events are recorded for a retry', async () => {
    const P = 'test-poison';
    // given
    const [a, b, c] = [randomUUID(), randomUUID(), randomUUID()];
    const a1 = eventOf(a);
    const b1 = eventOf(b);
    const poison = eventOf(b, POISON_TIME);
    const c1 = eventOf(c);
    const b2 = eventOf(b);
    const a2 = eventOf(a);
    await append(P, [a1, b1, poison, c1, b2, a2]);
    const b3 = eventOf(b);
    const c2 = eventOf(c);
    const last = await append(P, [b3, c2]);
    // when: a live runner, every event in one or two batches
    await whileLive(timesProjection(P), async (runner) => {
      // then: it passes the head (waiting writers are not held up) and keeps running
      expect(await runner.waitFor(last.position, 20_000)).toBe(true);
      expect(runner.status().status).toBe('running');
      expect(await applied(a)).toEqual([a1.id, a2.id]);
      expect(await applied(c)).toEqual([c1.id, c2.id]);
      expect(await applied(b)).toEqual([b1.id]);
      expect(await letters(P)).toEqual([
        { website_id: b, event_id: poison.id, state: 'failed', error: expect.stringContaining('out of range') },
        { website_id: b, event_id: b2.id, state: 'held', error: null },
        { website_id: b, event_id: b3.id, state: 'held', error: null },
      ]);
      // and the website's later events keep being set aside, the others applied
      const b4 = eventOf(b);
      const a3 = eventOf(a);
      const next = await append(P, [b4, a3]);
      expect(await runner.waitFor(next.position, 20_000)).toBe(true);
      expect(await applied(a)).toEqual([a1.id, a2.id, a3.id]);
      expect((await letters(P)).map((l) => l.event_id)).toEqual([poison.id, b2.id, b3.id, b4.id]);
      expect(await isDeadLettered(t.db, b)).toBe(true);
      expect(await isDeadLettered(t.db, b, ['answers'])).toBe(false);
      expect(await isDeadLettered(t.db, a)).toBe(false);
      expect(await deadLetteredSites(t.db)).toEqual([
        {
          projection: P,
          website_id: b,
          event_id: poison.id,
          type: 'ApiKeyRevoked',
          error: expect.stringContaining('date/time field value out of range'),
          since: expect.any(String),
          held: 3,
        },
      ]);
    });
  });

  it('given a website set aside, when retried after a fix, then its events are applied in order and the live runner goes on applying it', async () => {
    const P = 'test-retry';
    const state = { fixed: false };
    const w = randomUUID();
    const first = eventOf(w);
    const poison = eventOf(w, POISON_TIME);
    const after = eventOf(w);
    const r = await append(P, [first, poison, after]);
    await whileLive(timesProjection(P, state), async (live) => {
      expect(await live.waitFor(r.position, 20_000)).toBe(true);
      expect(live.setAside().has(w)).toBe(true);
      // a retry before the fix: the same event fails again, nothing moves
      const operator = runnerOf(timesProjection(P, state));
      expect(await operator.retry(w)).toEqual({ retried: 2, applied: 0, set_aside: 2 });
      expect((await letters(P)).map((l) => [l.event_id, l.state])).toEqual([
        [poison.id, 'failed'],
        [after.id, 'held'],
      ]);
      // when: fixed, then retried (while the live runner leads)
      state.fixed = true;
      expect(await operator.retry(w)).toEqual({ retried: 2, applied: 2, set_aside: 0 });
      expect(await applied(w)).toEqual([poison.id, first.id, after.id]);
      expect(await letters(P)).toEqual([]);
      // then: the live runner, fenced by the retry, reloads and applies the website's next event
      const later = eventOf(w);
      const n = await append(P, [later]);
      expect(await live.waitFor(n.position, 20_000)).toBe(true);
      await until('the later event applied', async () => (await applied(w)).includes(later.id), 20_000, 20);
      expect(await applied(w)).toContain(later.id);
      expect(live.setAside().has(w)).toBe(false);
    });
  });

  it('given a website set aside, when the projection is rebuilt, then the event is tried again: set aside again while it still fails, gone once fixed', async () => {
    const P = 'test-rebuild-retry';
    const state = { fixed: false };
    const w = randomUUID();
    const other = randomUUID();
    const poison = eventOf(w, POISON_TIME);
    const fine = eventOf(other);
    await append(P, [poison, fine]);
    const runner = runnerOf(timesProjection(P, state));
    await runner.runToHead();
    expect((await letters(P)).map((l) => l.event_id)).toEqual([poison.id]);
    // a rebuild with the event still poisonous: it succeeds, the read model is whole but for that website
    await runner.rebuild();
    expect(await applied(other)).toEqual([fine.id]);
    expect((await letters(P)).map((l) => l.event_id)).toEqual([poison.id]);
    const rows = Number((await t.db('t_times').count<{ n: string }[]>('* as n'))[0].n);
    // fixed: a rebuild applies it and clears the dead letter
    state.fixed = true;
    await runner.rebuild();
    expect(await letters(P)).toEqual([]);
    expect(Number((await t.db('t_times').count<{ n: string }[]>('* as n'))[0].n)).toBe(rows + 1);
  });

  it('given a poison event without a website (organization-level), then the projection stops on it as failed, and waiting for it answers at once', async () => {
    const P = 'test-org-poison';
    const w = randomUUID();
    await append(P, [eventOf(w)]);
    const orgLevel = eventOf(null, POISON_TIME);
    const r = await append(P, [orgLevel, eventOf(w)]);
    await whileLive(timesProjection(P), async (runner) => {
      await until('the projection to stop', async () => runner.status().status === 'failed', 20_000, 20);
      expect(runner.status()).toMatchObject({ status: 'failed', error: expect.stringContaining(orgLevel.id) });
      expect((await t.db('aivis_checkpoints').where('name', P).first()).status).toBe('failed');
      const t0 = Date.now();
      expect(await runner.waitFor(r.position, 5000)).toBe(false);
      expect(Date.now() - t0).toBeLessThan(1000);
      expect(await letters(P)).toEqual([]);
      // and a catch-up elsewhere (the CLI's) says so instead of waiting on it
      const cli = runnerOf(timesProjection(P));
      await expect(cli.runToHead()).rejects.toThrow(`projection ${P} stopped`);
    });
  });

  it('given an unreadable event of a website, then it is reported, its website set aside, and the others go on', async () => {
    const P = 'test-unreadable';
    const [w, other] = [randomUUID(), randomUUID()];
    const unreadable = anEvent({ data: { wrong: true }, metadata: testMetadata({ website_id: w }) });
    const fine = eventOf(other);
    const behind = eventOf(w);
    const r = await append(P, [unreadable, fine, behind]);
    await whileLive(timesProjection(P), async (runner) => {
      expect(await runner.waitFor(r.position, 20_000)).toBe(true);
      expect(runner.status().status).toBe('running');
      expect(await applied(other)).toEqual([fine.id]);
      expect(await letters(P)).toEqual([
        { website_id: w, event_id: unreadable.id, state: 'failed', error: expect.stringMatching(/^unreadable: /) },
        { website_id: w, event_id: behind.id, state: 'held', error: null },
      ]);
      expect(await t.db('aivis_event_anomalies').where({ projection: P, event_id: unreadable.id })).toHaveLength(1);
    });
  });
});
