import type { Knex } from 'knex';

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
  constructor(readonly db: Knex) {}

  async hit(key: string, limit: number, windowSeconds: number, nowMs = Date.now()): Promise<RateDecision> {
    const windowStart = Math.floor(nowMs / 1000 / windowSeconds) * windowSeconds;
    const r = await this.db.raw(
      `insert into aivis_rate_limits (key, window_start, count, window_end) values (?, ?, 1, ?)
       on conflict (key, window_start) do update set count = aivis_rate_limits.count + 1
       returning count`,
      [key, windowStart, windowStart + windowSeconds],
    );
    const count = Number(r.rows[0].count);
    const resetAt = windowStart + windowSeconds;
    if (++this.hits % 1000 === 0) void this.sweep(nowMs);
    return {
      allowed: count <= limit,
      limit,
      remaining: Math.max(0, limit - count),
      resetAt,
      retryAfterSeconds: Math.max(1, Math.ceil(resetAt - nowMs / 1000)),
    };
  }

  /** Deletes windows that have ended (rows from before window_end existed: an hour after they began). */
  private async sweep(nowMs: number) {
    await this.db('aivis_rate_limits')
      .whereRaw('coalesce(window_end, window_start + 3600) < ?', [Math.floor(nowMs / 1000)])
      .delete()
      .catch(() => undefined);
  }
}
