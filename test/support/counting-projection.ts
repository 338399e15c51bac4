import type { Projection } from '../../src/eventstore/projection';

/**
 * A deliberately non-idempotent read model: applying an event twice shows as a wrong count or a duplicate-key
 * error, losing one shows as a missing row. Used to prove the runner applies each event exactly once.
 */
export const countingProjection = (opts: { name?: string; version?: number; delayMs?: number } = {}): Projection => ({
  name: opts.name ?? 'test-counting',
  version: opts.version ?? 1,
  tables: ['t_counts', 't_seen'],
  handles: ['ApiKeyRevoked'],
  async migrate(db) {
    await db.raw(`
      create table if not exists t_counts (stream_id text primary key, n int not null);
      create table if not exists t_seen (event_id uuid primary key, stream_id text not null);`);
  },
  async apply(trx, events) {
    for (const e of events) {
      await trx('t_seen').insert({ event_id: e.id, stream_id: e.streamId });
      await trx.raw('insert into t_counts (stream_id, n) values (?, 1) on conflict (stream_id) do update set n = t_counts.n + 1', [e.streamId]);
    }
    if (opts.delayMs) await new Promise((r) => setTimeout(r, opts.delayMs));
  },
});
