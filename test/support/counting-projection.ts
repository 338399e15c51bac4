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
  // a batch in two statements (a test of the runner applies thousands of events): an event seen before, or twice in the
  // batch, still fails the first on t_seen's key, and each stream's count still grows by its events in the batch
  async apply(trx, events) {
    if (events.length) {
      await trx.raw('insert into t_seen (event_id, stream_id) select * from unnest(?::uuid[], ?::text[])', [
        events.map((e) => e.id),
        events.map((e) => e.streamId),
      ]);
      await trx.raw(
        `insert into t_counts (stream_id, n) select s, count(*)::int from unnest(?::text[]) as s group by s
         on conflict (stream_id) do update set n = t_counts.n + excluded.n`,
        [events.map((e) => e.streamId)],
      );
    }
    if (opts.delayMs) await new Promise((r) => setTimeout(r, opts.delayMs));
  },
});
