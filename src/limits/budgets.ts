import { DomainErrorException, rateLimited } from '../domain/errors';
import type { RateDecision, RateLimiter } from './rate';

/** A named request budget: `limit` requests per fixed window of `windowSeconds`, counted per scope. */
export interface Budget {
  /** part of the counter's key: two budgets with one name share their counts */
  name: string;
  limit: number;
  windowSeconds: number;
  /** what a refused request is told (default `Rate limit exceeded`) */
  message?: string;
}

/** One request charged to a budget for a scope (an organization id, a website id, a hashed address). */
export interface BudgetCharge {
  budget: Budget;
  scope: string;
}

export const budgetKey = (c: BudgetCharge) => `${c.budget.name}:${c.scope}`;

/**
 * One request of each budget, in one statement on the rate limiter's counters (fixed windows, shared by every
 * instance): every budget counts it, refused or not, as RateLimiter.hit does.
 */
export async function hitBudgets(limiter: RateLimiter, charges: readonly BudgetCharge[], nowMs = Date.now()): Promise<RateDecision[]> {
  const byKey = new Map<string, { limit: number; windowStart: number; windowEnd: number }>();
  for (const c of charges) {
    const windowStart = Math.floor(nowMs / 1000 / c.budget.windowSeconds) * c.budget.windowSeconds;
    byKey.set(budgetKey(c), { limit: c.budget.limit, windowStart, windowEnd: windowStart + c.budget.windowSeconds });
  }
  const keys = [...byKey.keys()];
  const r = await limiter.db.raw(
    `insert into aivis_rate_limits as l (key, window_start, count, window_end)
     select k, w, 1, e from unnest(?::text[], ?::bigint[], ?::bigint[]) as t(k, w, e)
     on conflict (key, window_start) do update set count = l.count + 1
     returning key, count`,
    [keys, keys.map((k) => byKey.get(k)!.windowStart), keys.map((k) => byKey.get(k)!.windowEnd)],
  );
  const counts = new Map<string, number>((r.rows as { key: string; count: number }[]).map((row) => [row.key, Number(row.count)]));
  return charges.map((c) => {
    const b = byKey.get(budgetKey(c))!;
    const count = counts.get(budgetKey(c))!;
    return {
      allowed: count <= b.limit,
      limit: b.limit,
      remaining: Math.max(0, b.limit - count),
      resetAt: b.windowEnd,
      retryAfterSeconds: Math.max(1, Math.ceil(b.windowEnd - nowMs / 1000)),
    };
  });
}

/**
 * Spends one request of every budget given. When any is gone it throws a `rate_limited` domain error (429) whose
 * Retry-After is the longest wait among the refused ones, with the first refused budget's message.
 */
export async function spendBudgets(limiter: RateLimiter, charges: readonly BudgetCharge[], nowMs = Date.now()): Promise<RateDecision[]> {
  const decisions = await hitBudgets(limiter, charges, nowMs);
  const refused = decisions.filter((d) => !d.allowed);
  if (refused.length) {
    const first = charges[decisions.findIndex((d) => !d.allowed)].budget;
    throw new DomainErrorException(rateLimited(Math.max(...refused.map((d) => d.retryAfterSeconds)), first.message));
  }
  return decisions;
}
