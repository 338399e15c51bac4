import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Database, openPostgres } from '../../src/db';
import { DomainErrorException, forbidden, rateLimited } from '../../src/domain/errors';
import { newId } from '../../src/domain/ids';
import { acquireHold, admitUnderHold, type ConcurrencyLimit, heldCount, holdOrRefuse, releaseHolds } from '../../src/limits/holds';
import { migrateLimits } from '../../src/limits/migrate';
import { type Budget, hitBudgets, spendBudgets } from '../../src/limits/budgets';
import { RateLimiter } from '../../src/limits/rate';
import { admit, release, type SlotPool } from '../../src/limits/slots';
import { freshDatabase, type TestDatabase } from '../support/db';
import { onPostgresServer } from '../support/suites';

/** A 429 thrown by spendBudgets/holdOrRefuse: its Retry-After, or null when the call went through. */
async function retryAfterOf(p: Promise<unknown>): Promise<number | null> {
  try {
    await p;
    return null;
  } catch (err) {
    if (err instanceof DomainErrorException && err.error.kind === 'rate_limited') return err.error.retryAfterSeconds;
    throw err;
  }
}

describe('limits, one instance (PGlite or Postgres)', () => {
  let d: TestDatabase;
  beforeAll(async () => {
    d = await freshDatabase();
    await migrateLimits(d.db);
  });
  afterAll(async () => {
    await d?.close();
  });

  it('given a counters table from before window_end, when migrated (twice), then it has the column and keeps its rows', async () => {
    const old = await freshDatabase();
    try {
      await old.db.raw(
        'create unlogged table aivis_rate_limits (key text not null, window_start bigint not null, count int not null, primary key (key, window_start))',
      );
      await old.db('aivis_rate_limits').insert({ key: 'k', window_start: 1, count: 2 });
      await migrateLimits(old.db);
      await migrateLimits(old.db);
      expect(await old.db('aivis_rate_limits').select('key', 'count', 'window_end')).toEqual([{ key: 'k', count: 2, window_end: null }]);
    } finally {
      await old.close();
    }
  });

  it('given named budgets with their own windows, when requests spend several at once, then each counts in its window and the 429 waits for the longest', async () => {
    const limiter = new RateLimiter(d.db);
    const perMinute: Budget = { name: 'seo-org', limit: 3, windowSeconds: 60 };
    const perHour: Budget = { name: 'seo-site', limit: 4, windowSeconds: 3600 };
    const org = newId();
    const site = newId();
    // 10:00:45.2 UTC: 14.8 s left in the minute, 59 min 14.8 s in the hour
    const t = Date.UTC(2026, 10, 25, 10, 0, 45, 200);
    const both = [
      { budget: perMinute, scope: org },
      { budget: perHour, scope: site },
    ];
    for (let i = 0; i < 3; i++) expect(await retryAfterOf(spendBudgets(limiter, both, t))).toBeNull();
    // the minute's budget is gone: wait 15 s
    expect(await retryAfterOf(spendBudgets(limiter, both, t))).toBe(15);
    // a new minute: the hour's budget (4, and the refused request counted) is gone too: the longer wait wins
    const next = t + 20_000;
    expect(await retryAfterOf(spendBudgets(limiter, both, next))).toBe(3600 - 65);
    // another website of the organization has its own hour
    expect(
      await retryAfterOf(
        spendBudgets(
          limiter,
          [
            { budget: perMinute, scope: org },
            { budget: perHour, scope: newId() },
          ],
          next,
        ),
      ),
    ).toBeNull();
    const [d1] = await hitBudgets(limiter, [{ budget: perMinute, scope: newId() }], t);
    expect(d1).toMatchObject({ allowed: true, limit: 3, remaining: 2, resetAt: Date.UTC(2026, 10, 25, 10, 1, 0) / 1000 });
  });

  it('given a limit of 2 in progress per organization, then a third is refused with its Retry-After, a holder asking again keeps its one place, and a release frees it', async () => {
    const limit: ConcurrencyLimit = { name: 'probe-processing', limit: 2, retryAfterSeconds: 10 };
    const org = newId();
    const [j1, j2, j3] = [newId(), newId(), newId()];
    expect(await acquireHold(d.db, limit, org, j1)).toMatchObject({ allowed: true, held: 1 });
    expect(await acquireHold(d.db, limit, org, j1)).toMatchObject({ allowed: true, held: 1 });
    expect(await acquireHold(d.db, limit, org, j2)).toMatchObject({ allowed: true, held: 2 });
    expect(await retryAfterOf(holdOrRefuse(d.db, limit, org, j3))).toBe(10);
    expect(await acquireHold(d.db, limit, newId(), j3)).toMatchObject({ allowed: true, held: 1 });
    expect(await releaseHolds(d.db, j1)).toBe(1);
    expect(await acquireHold(d.db, limit, org, newId())).toMatchObject({ allowed: true, held: 2 });
    expect(await heldCount(d.db, limit.name, org)).toBe(2);
  });

  it("given an admission under a cap of 1, then a full scope is refused before its step runs, and the step's refusal or failure gives the place back", async () => {
    const limit: ConcurrencyLimit = { name: 'admit-under-hold', limit: 1, retryAfterSeconds: 7 };
    const org = newId();
    const admitted = () => admitUnderHold(d.db, limit, org, newId(), 'probe-x', async () => 'admitted');
    // a refusal of the step (a domain error) and a failure (a throw) each leave the place free
    expect(await admitUnderHold(d.db, limit, org, newId(), 'probe-x', async () => forbidden('no allowance'))).toEqual(forbidden('no allowance'));
    await expect(admitUnderHold(d.db, limit, org, newId(), 'probe-x', () => Promise.reject(new Error('page unreadable')))).rejects.toThrow(
      'page unreadable',
    );
    expect(await heldCount(d.db, limit.name, org)).toBe(0);
    // admitted, it keeps the place: the next is refused and its step does not run
    expect(await admitted()).toBe('admitted');
    let ran = false;
    const full = await admitUnderHold(d.db, limit, org, newId(), 'probe-x', async () => {
      ran = true;
      return 'admitted';
    });
    expect(full).toEqual(rateLimited(7));
    expect(ran).toBe(false);
    expect(await heldCount(d.db, limit.name, org)).toBe(1);
  });

  it('given running caps of 2 per website and 3 in all, then jobs beyond wait queued and start oldest first as slots free', async () => {
    const pool: SlotPool = { name: `p-${newId()}`, perScope: 2, overall: 3 };
    const job = (scope: string) => ({ job_id: newId(), stream_id: `probe-x`, scope });
    const [a1, a2, a3, b1, b2] = [job('a'), job('a'), job('a'), job('b'), job('b')];
    expect((await admit(d.db, pool, a1)).state).toBe('running');
    expect((await admit(d.db, pool, a2)).state).toBe('running');
    expect((await admit(d.db, pool, a3)).state).toBe('queued');
    expect((await admit(d.db, pool, b1)).state).toBe('running');
    expect((await admit(d.db, pool, b2)).state).toBe('queued');
    // asking again changes nothing
    expect((await admit(d.db, pool, a1)).state).toBe('running');
    expect((await admit(d.db, pool, a3)).state).toBe('queued');
    // a1 ends: a3 (queued first, and its website has room now) starts
    expect((await release(d.db, pool, a1.job_id)).map((r) => r.job_id)).toEqual([a3.job_id]);
    // b1 ends: b2 starts
    expect((await release(d.db, pool, b1.job_id)).map((r) => r.job_id)).toEqual([b2.job_id]);
    expect((await release(d.db, pool, a2.job_id)).map((r) => r.job_id)).toEqual([]);
  });
});

const twoInstances = onPostgresServer('limits across two instances');

twoInstances('limits across two instances (real Postgres)', () => {
  let d: TestDatabase;
  let other: Database;
  beforeAll(async () => {
    d = await freshDatabase();
    other = await openPostgres(d.url!);
    await Promise.all([migrateLimits(d.db), migrateLimits(other.db)]);
  });
  afterAll(async () => {
    await other?.close();
    await d?.close();
  });

  it('given 10 requests per minute per organization, when 30 arrive at once through two instances, then exactly 10 pass and the others wait for the next minute', async () => {
    const budget: Budget = { name: 'pitch-requests', limit: 10, windowSeconds: 60 };
    const limiters = [new RateLimiter(d.db), new RateLimiter(other.db)];
    const org = newId();
    const t = Date.UTC(2026, 10, 25, 10, 0, 12, 500);
    const waits = await Promise.all(Array.from({ length: 30 }, (_, i) => retryAfterOf(spendBudgets(limiters[i % 2], [{ budget, scope: org }], t))));
    expect(waits.filter((w) => w === null)).toHaveLength(10);
    expect(waits.filter((w) => w !== null)).toEqual(Array(20).fill(48));
  });

  it('given a limit of 25 a minute, when 60 hits of one key arrive at once through two instances, then the hits waiting on an upsert go in one and each still gets its own count: exactly 25 pass, the remaining counts are 24..0 once each', async () => {
    const limiters = [new RateLimiter(d.db), new RateLimiter(other.db)];
    const key = `org:${newId()}`;
    const t = Date.UTC(2026, 10, 25, 10, 0, 12, 500);
    let upserts = 0;
    const count = (q: { sql: string }) => {
      if (q.sql.startsWith('insert into aivis_rate_limits')) upserts++;
    };
    d.db.on('query', count);
    other.db.on('query', count);
    try {
      const decisions = await Promise.all(Array.from({ length: 60 }, (_, i) => limiters[i % 2].hit(key, 25, 60, t)));
      const allowed = decisions.filter((x) => x.allowed);
      expect(allowed).toHaveLength(25);
      expect(allowed.map((x) => x.remaining).sort((a, b) => b - a)).toEqual(Array.from({ length: 25 }, (_, i) => 24 - i));
      expect(decisions.filter((x) => !x.allowed).every((x) => x.remaining === 0 && x.retryAfterSeconds === 48)).toBe(true);
      // at least the first upsert of each instance runs alone; everything after it waited and went in batches
      expect(upserts).toBeLessThan(60);
      expect(upserts).toBeGreaterThanOrEqual(2);
      const row = await d.db('aivis_rate_limits').where({ key }).first('count');
      expect(Number(row.count)).toBe(60);
    } finally {
      d.db.off('query', count);
      other.db.off('query', count);
    }
  });

  it('given 3 processing per organization, when 12 admissions race through two instances, then exactly 3 hold a place', async () => {
    const limit: ConcurrencyLimit = { name: 'pitch-processing', limit: 3, retryAfterSeconds: 10 };
    const org = newId();
    const dbs = [d.db, other.db];
    const decisions = await Promise.all(Array.from({ length: 12 }, (_, i) => acquireHold(dbs[i % 2], limit, org, newId())));
    expect(decisions.filter((x) => x.allowed)).toHaveLength(3);
    expect(decisions.filter((x) => !x.allowed).every((x) => x.retryAfterSeconds === 10)).toBe(true);
    expect(await heldCount(d.db, limit.name, org)).toBe(3);
  });

  it('given caps of 4 per website and 16 in all, when 60 jobs of 6 websites ask for slots at once through two instances, then 16 run and no website has more than 4', async () => {
    const pool: SlotPool = { name: `seo-${newId()}`, perScope: 4, overall: 16 };
    const dbs = [d.db, other.db];
    const sites = Array.from({ length: 6 }, () => newId());
    const out = await Promise.all(
      Array.from({ length: 60 }, (_, i) => admit(dbs[i % 2], pool, { job_id: newId(), stream_id: 'probe-x', scope: sites[i % 6] })),
    );
    expect(out.filter((o) => o.state === 'running')).toHaveLength(16);
    const running = await d
      .db('aivis_job_slots')
      .where({ pool: pool.name, state: 'running' })
      .groupBy('scope')
      .select('scope')
      .count<{ scope: string; n: string }[]>('* as n');
    expect(running.reduce((s, r) => s + Number(r.n), 0)).toBe(16);
    for (const r of running) expect(Number(r.n)).toBeLessThanOrEqual(4);
  });
});
