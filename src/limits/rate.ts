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
  // (asked of pg_catalog: information_schema's view took 8 ms to plan, at every start)
  const r = await db.raw(`select 1 from pg_attribute where attrelid = 'aivis_rate_limits'::regclass and attname = 'window_end' and not attisdropped`);
  if (!r.rows.length) await db.raw(`alter table aivis_rate_limits add column if not exists window_end bigint`);
}

/** A hit waiting for its window's next upsert. */
interface Waiting {
  limit: number;
  nowMs: number;
  resolve: (d: RateDecision) => void;
  reject: (e: unknown) => void;
}

/**
 * Fixed-window counters in Postgres, so a limit holds across every instance (not process memory).
 * One upsert per hit when hits come one at a time; hits on a window whose upsert is still running wait for it and then
 * go together in one upsert that adds their number (group commit): each gets its own count, as n upserts one after
 * another would have given them, so every decision is the one the per-hit upsert made, at a fraction of the round trips.
 */
export class RateLimiter {
  private hits = 0;
  /** per `key window_start window_seconds`: the hits waiting while that window's upsert runs */
  private readonly queued = new Map<string, Waiting[]>();
  constructor(readonly db: Knex) {}

  hit(key: string, limit: number, windowSeconds: number, nowMs = Date.now()): Promise<RateDecision> {
    const windowStart = Math.floor(nowMs / 1000 / windowSeconds) * windowSeconds;
    if (++this.hits % 1000 === 0) void this.sweep(nowMs);
    const id = `${key} ${windowStart} ${windowSeconds}`;
    return new Promise<RateDecision>((resolve, reject) => {
      const waiting = this.queued.get(id);
      if (waiting) {
        waiting.push({ limit, nowMs, resolve, reject });
        return;
      }
      // this window's upsert starts now; hits meanwhile queue behind it
      this.queued.set(id, []);
      void this.add(id, key, windowStart, windowSeconds, [{ limit, nowMs, resolve, reject }]);
    });
  }

  /** One upsert adding `batch.length` to the window, each hit of the batch decided on its own count; then the next batch. */
  private async add(id: string, key: string, windowStart: number, windowSeconds: number, first: Waiting[]): Promise<void> {
    const resetAt = windowStart + windowSeconds;
    for (let batch = first; batch.length > 0; ) {
      try {
        const r = await this.db.raw(
          `insert into aivis_rate_limits (key, window_start, count, window_end) values (?, ?, ?, ?)
           on conflict (key, window_start) do update set count = aivis_rate_limits.count + excluded.count
           returning count`,
          [key, windowStart, batch.length, resetAt],
        );
        const last = Number(r.rows[0].count);
        batch.forEach((w, i) => {
          const count = last - batch.length + 1 + i;
          w.resolve({
            allowed: count <= w.limit,
            limit: w.limit,
            remaining: Math.max(0, w.limit - count),
            resetAt,
            retryAfterSeconds: Math.max(1, Math.ceil(resetAt - w.nowMs / 1000)),
          });
        });
      } catch (e) {
        for (const w of batch) w.reject(e);
      }
      batch = this.queued.get(id) ?? [];
      this.queued.set(id, []);
    }
    this.queued.delete(id);
  }

  /** Deletes windows that have ended (rows from before window_end existed: an hour after they began). */
  private async sweep(nowMs: number) {
    await this.db('aivis_rate_limits')
      .whereRaw('coalesce(window_end, window_start + 3600) < ?', [Math.floor(nowMs / 1000)])
      .delete()
      .catch(() => undefined);
  }
}
