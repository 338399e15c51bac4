import type { Knex } from 'knex';
import { DomainErrorException } from '../domain/errors';

export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Unix seconds when the window resets */
  resetAt: number;
  retryAfterSeconds: number;
}

export async function migrateRateLimits(db: Knex): Promise<void> {
  // unlogged: a counter update needs no WAL flush, so a hot organization's row is not a commit-per-request queue;
  // counters are lost on a crash, which costs at most one window of budget
  await db.raw(`create unlogged table if not exists aivis_rate_limits (
    key text not null,
    window_start bigint not null,
    count int not null,
    window_end bigint,
    primary key (key, window_start)
  )`);
  // window_end (a sweep keeps a long window, a day, as long as it lasts) came after the table: add it where missing
  const r = await db.raw(`select 1 from information_schema.columns where table_name = 'aivis_rate_limits' and column_name = 'window_end'`);
  if (!r.rows.length) await db.raw(`alter table aivis_rate_limits add column if not exists window_end bigint`);
}

/**
 * Fixed-window counters in Postgres, so a limit holds across every instance (not process memory).
 * One upsert per hit.
 */
export class RateLimiter {
  private hits = 0;
  constructor(private readonly db: Knex) {}

  async hit(key: string, limit: number, windowSeconds: number, nowMs = Date.now()): Promise<RateDecision> {
    const windowStart = Math.floor(nowMs / 1000 / windowSeconds) * windowSeconds;
    const r = await this.db.raw(
      `insert into aivis_rate_limits (key, window_start, count, window_end) values (?, ?, 1, ?)
       on conflict (key, window_start) do update set count = aivis_rate_limits.count + 1
       returning count`,
      [key, windowStart, windowStart + windowSeconds],
    );
    if (++this.hits % 1000 === 0) void this.sweep(nowMs);
    return decision(Number(r.rows[0].count), limit, windowStart + windowSeconds, nowMs);
  }

  /** One request of each budget, in one statement: every budget counts it, refused or not (as hit does). */
  async hitAll(charges: readonly BudgetCharge[], nowMs = Date.now()): Promise<RateDecision[]> {
    const byKey = new Map<string, { limit: number; windowStart: number; windowEnd: number }>();
    for (const c of charges) {
      const windowStart = Math.floor(nowMs / 1000 / c.budget.windowSeconds) * c.budget.windowSeconds;
      byKey.set(budgetKey(c), { limit: c.budget.limit, windowStart, windowEnd: windowStart + c.budget.windowSeconds });
    }
    const keys = [...byKey.keys()];
    const r = await this.db.raw(
      `insert into aivis_rate_limits as l (key, window_start, count, window_end)
       select k, w, 1, e from unnest(?::text[], ?::bigint[], ?::bigint[]) as t(k, w, e)
       on conflict (key, window_start) do update set count = l.count + 1
       returning key, count`,
      [keys, keys.map((k) => byKey.get(k)!.windowStart), keys.map((k) => byKey.get(k)!.windowEnd)],
    );
    this.hits += keys.length;
    if (this.hits % 1000 < keys.length) void this.sweep(nowMs);
    const counts = new Map<string, number>((r.rows as { key: string; count: number }[]).map((row) => [row.key, Number(row.count)]));
    return charges.map((c) => {
      const b = byKey.get(budgetKey(c))!;
      return decision(counts.get(budgetKey(c))!, b.limit, b.windowEnd, nowMs);
    });
  }

  private async sweep(nowMs: number) {
    const now = Math.floor(nowMs / 1000);
    await this.db('aivis_rate_limits')
      .whereRaw('coalesce(window_end, window_start + 3600) < ?', [now])
      .delete()
      .catch(() => undefined);
  }
}

function decision(count: number, limit: number, resetAt: number, nowMs: number): RateDecision {
  return {
    allowed: count <= limit,
    limit,
    remaining: Math.max(0, limit - count),
    resetAt,
    retryAfterSeconds: Math.max(1, Math.ceil(resetAt - nowMs / 1000)),
  };
}

/** A named request budget: `limit` requests per fixed window of `windowSeconds`, counted per scope. */
export interface Budget {
  /** part of the counter's key: two budgets with one name share their counts */
  name: string;
  limit: number;
  windowSeconds: number;
}

/** One request charged to a budget for a scope (an organization id, a website id, a hashed address). */
export interface BudgetCharge {
  budget: Budget;
  scope: string;
}

export const budgetKey = (c: BudgetCharge) => `${c.budget.name}:${c.scope}`;

/**
 * Spends one request of every budget given (one statement, counted in Postgres so that every instance shares them).
 * When any is gone it throws a `rate_limited` domain error (429) whose Retry-After is the longest wait among them.
 */
export async function spendBudgets(limiter: RateLimiter, charges: readonly BudgetCharge[], nowMs = Date.now()): Promise<RateDecision[]> {
  const decisions = await limiter.hitAll(charges, nowMs);
  const refused = decisions.filter((d) => !d.allowed);
  if (refused.length) {
    throw new DomainErrorException({
      kind: 'rate_limited',
      message: 'Rate limit exceeded',
      retryAfterSeconds: Math.max(...refused.map((d) => d.retryAfterSeconds)),
    });
  }
  return decisions;
}
