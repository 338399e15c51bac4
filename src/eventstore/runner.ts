import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { decodeEvent, isKnownType, MalformedEventError } from '../domain/events';
import type { Logger } from '../logger';
import { type FeedReader, readInterest, type SharedFeed } from './feed';
import {
  comparePositions,
  type EventStore,
  type Position,
  positionFromString,
  positionToString,
  type RecordedEvent,
  type ScannedBatch,
  START,
  type TypedEvent,
} from './port';
import type { Projection } from './projection';

const LEASE_SECONDS = 15;
/**
 * After a batch much smaller than the batch size, wait this long before reading again (unless someone waits on a
 * position): under a steady trickle of appends the next read then takes a batch, not one event per transaction.
 */
const LINGER_MS = 4;

export async function migrateRunnerTables(db: Knex): Promise<void> {
  await db.transaction(async (trx) => {
    await trx.raw('select pg_advisory_xact_lock(7163402)');
    await trx.raw(`
      create table if not exists aivis_checkpoints (
        name text primary key,
        position text not null,
        version int not null,
        generation bigint not null default 0,
        lease_owner text,
        lease_until timestamptz,
        status text not null default 'running',
        error text,
        updated_at timestamptz not null default now()
      );
      create table if not exists aivis_event_anomalies (
        event_id text not null,
        projection text not null,
        type text not null,
        reason text not null,
        seen_at timestamptz not null default now(),
        primary key (event_id, projection)
      );`);
  });
}

/** A projection's stored checkpoint (where the instance leading it has got to), or null before its first start. */
export async function readCheckpoint(db: Knex, name: string): Promise<Position | null> {
  const row = await db('aivis_checkpoints').where('name', name).first('position');
  return row ? positionFromString(row.position) : null;
}

class Fenced extends Error {}

export interface RunnerStatus {
  name: string;
  position: string;
  leader: boolean;
  status: 'running' | 'failed' | 'stopped';
  error: string | null;
}

/**
 * Runs one projection: reads the log after its checkpoint in batches and applies each batch and the new checkpoint
 * in one transaction. One active runner per projection across instances (a lease in the checkpoints table, fenced
 * by owner and generation on every commit).
 */
export class ProjectionRunner {
  readonly projection: Projection;
  private readonly store: EventStore;
  private readonly db: Knex;
  private readonly log: Logger;
  private readonly liveBatchSize: number;
  private readonly catchUpBatchSize: number;
  /** runToHead is catching up (a rebuild, the CLI): nobody waits on one of its batches */
  private catchingUp = false;
  /** events per batch: by default larger while catching up (fewer transactions and round trips per event) */
  private get batchSize(): number {
    return this.catchingUp ? this.catchUpBatchSize : this.liveBatchSize;
  }
  private readonly pollMs: number;
  private readonly owner = randomUUID();
  private position: Position = START;
  private generation = 0n;
  private leader = false;
  private running = false;
  private failed: string | null = null;
  private loop: Promise<void> | null = null;
  private wakeIdle: (() => void) | null = null;
  /** cuts a linger or a follower's sleep short: a waiter arrived, or stop() */
  private wakeUrgent: (() => void) | null = null;
  private woken = false;
  private unsubscribe: (() => void) | null = null;
  private waiters = new Set<{ pos: Position; resolve: (ok: boolean) => void }>();
  private leaseRenewedAt = 0;
  private ahead: { after: Position; batch: Promise<ScannedBatch> } | null = null;
  /** runToHead is between the projection's rebuild.before and rebuild.after */
  private rebuilding = false;
  private readonly feed: SharedFeed | null;
  /** while running: live batches come through the feed this process's projections share */
  private reader: FeedReader | null = null;

  constructor(opts: { projection: Projection; store: EventStore; db: Knex; logger: Logger; batchSize?: number; pollMs?: number; feed?: SharedFeed }) {
    this.projection = opts.projection;
    this.store = opts.store;
    this.feed = opts.feed ?? null;
    this.db = opts.db;
    this.log = opts.logger.child({ projection: opts.projection.name });
    this.liveBatchSize = opts.batchSize ?? 1000;
    // measured on the activity rebuild (1 M events, 2 cores): 4,000 a batch ~8% faster than 1,000
    this.catchUpBatchSize = opts.batchSize ?? 4000;
    this.pollMs = opts.pollMs ?? 500;
  }

  /** Creates tables, checks the version (a changed version drops and rebuilds), without processing events. */
  async prepare(): Promise<void> {
    await migrateRunnerTables(this.db);
    const p = this.projection;
    const row = await this.db('aivis_checkpoints').where('name', p.name).first();
    if (row && row.version !== p.version) {
      this.log.warn({ from: row.version, to: p.version }, 'projection version changed: rebuilding from zero');
      await this.db.transaction(async (trx) => {
        for (const t of p.tables) await trx.schema.dropTableIfExists(t);
        await trx('aivis_checkpoints')
          .where('name', p.name)
          .update({ version: p.version, position: positionToString(START), generation: trx.raw('generation + 1'), status: 'running', error: null });
      });
    }
    await p.migrate(this.db);
    await this.db('aivis_checkpoints')
      .insert({ name: p.name, position: positionToString(START), version: p.version })
      .onConflict('name')
      .ignore();
  }

  async start(): Promise<void> {
    await this.prepare();
    this.running = true;
    this.reader = this.feed?.reader({ handles: this.projection.handles, streamPrefixes: this.projection.streamPrefixes }) ?? null;
    this.unsubscribe = this.store.onAppend(() => this.poke());
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.running = false;
    this.poke();
    this.wakeUrgent?.();
    this.unsubscribe?.();
    await this.loop;
    this.loop = null;
    this.reader?.close();
    this.reader = null;
    if (this.leader) {
      await this.db('aivis_checkpoints').where({ name: this.projection.name, lease_owner: this.owner }).update({ lease_owner: null, lease_until: null });
      this.leader = false;
    }
    for (const w of this.waiters) w.resolve(false);
    this.waiters.clear();
  }

  status(): RunnerStatus {
    return {
      name: this.projection.name,
      position: positionToString(this.position),
      leader: this.leader,
      status: this.failed ? 'failed' : this.running ? 'running' : 'stopped',
      error: this.failed,
    };
  }

  /** Wakes the runner to read now (an append elsewhere was announced). */
  wake(): void {
    this.poke();
  }

  private poke(): void {
    this.woken = true;
    this.wakeIdle?.();
  }

  /** Waits ms, or less when an append is announced (poke), a waiter arrives or the runner stops. */
  private idle(ms: number): Promise<void> {
    return this.sleep(ms, true);
  }

  /**
   * Waits ms; cut short by a waiter or stop(), and by announced appends only when `onAppend`. A follower (another
   * instance leads) sleeps through appends: waking it on each one would retry the lease hundreds of times a second.
   */
  private sleep(ms: number, onAppend: boolean): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(t);
        this.wakeIdle = null;
        this.wakeUrgent = null;
        resolve();
      };
      const t = setTimeout(done, ms);
      if (onAppend) this.wakeIdle = done;
      this.wakeUrgent = done;
    });
  }

  private async acquireLease(): Promise<boolean> {
    const rows = await this.db('aivis_checkpoints')
      .where('name', this.projection.name)
      .andWhere((q) => q.whereNull('lease_owner').orWhere('lease_owner', this.owner).orWhere('lease_until', '<', this.db.fn.now()))
      .update({ lease_owner: this.owner, lease_until: this.db.raw(`now() + interval '${LEASE_SECONDS} seconds'`) })
      .returning(['position', 'generation', 'status', 'error']);
    if (rows.length === 0) return false;
    this.position = positionFromString(rows[0].position);
    this.generation = BigInt(rows[0].generation);
    this.leaseRenewedAt = Date.now();
    if (!this.leader) this.log.info({ position: rows[0].position }, 'projection lease acquired');
    this.leader = true;
    this.settleWaiters();
    return true;
  }

  /** True when a rebuild elsewhere reset this projection (new generation) or another instance took the lease. */
  private async fencedElsewhere(): Promise<boolean> {
    const row = await this.db('aivis_checkpoints').where('name', this.projection.name).first('generation', 'lease_owner');
    return !row || BigInt(row.generation) !== this.generation || row.lease_owner !== this.owner;
  }

  /**
   * Reads the next batch after `after`: live, through the feed this instance's projections share; catching up, from
   * the store. Either way a projection that handles some types gets those (where the store can filter), and the scan
   * still moves its checkpoint past the events it skips.
   */
  private read(after: Position): Promise<ScannedBatch> {
    if (this.reader && !this.catchingUp) return this.reader.read(after, this.batchSize);
    return readInterest(this.store, after, this.batchSize, { handles: this.projection.handles, streamPrefixes: this.projection.streamPrefixes });
  }

  /** Processes one batch; returns how many events were scanned (0 = caught up). */
  async step(readAhead = false): Promise<number> {
    const ahead = this.ahead;
    this.ahead = null;
    const { events: batch, scanned: count, scannedTo: last } =
      ahead && comparePositions(ahead.after, this.position) === 0 ? await ahead.batch : await this.read(this.position);
    if (count === 0) return 0;
    // apply takes the events out of `pending`: while the batch is written, this frame holds none of them, so the next
    // batch (read meanwhile) is not parsed into a young heap still full of this one (scavenges copy what is alive)
    let pending: TypedEvent[] | null = await this.decode(batch);
    const take = () => {
      const events = pending!;
      pending = null;
      return events;
    };
    if (readAhead && count === this.batchSize) {
      // read the next batch while this one is written (the read and the write each keep a core busy); a failed
      // write leaves it unused, and step() only takes it if it starts where the checkpoint now is
      const next = this.read(last);
      next.catch(() => undefined);
      this.ahead = { after: last, batch: next };
    }
    // nothing to apply (every event scanned was another projection's): the checkpoint alone, one statement
    if (pending.length === 0) await this.saveCheckpoint(this.db, last);
    else
      await this.db.transaction(async (trx) => {
        await this.projection.apply(trx, take(), { rebuilding: this.rebuilding });
        await this.saveCheckpoint(trx, last);
      });
    this.leaseRenewedAt = Date.now();
    this.position = last;
    this.settleWaiters();
    return count;
  }

  /**
   * Moves the checkpoint (and the lease) if this runner still leads this generation. It need not wait for its WAL
   * flush (set with it, no round trip of its own): a crash loses the last batches with their checkpoint (a batch and
   * its checkpoint stay one transaction), and the runner reads them again. The event store's appends keep waiting.
   */
  private async saveCheckpoint(conn: Knex, last: Position): Promise<void> {
    const r = await conn.raw(
      `update aivis_checkpoints set position = ?, lease_until = now() + interval '${LEASE_SECONDS} seconds', updated_at = now()
        where name = ? and lease_owner = ? and generation = ?
        returning set_config('synchronous_commit', 'off', true)`,
      [positionToString(last), this.projection.name, this.owner, this.generation.toString()],
    );
    if (r.rows.length === 0) throw new Fenced();
  }

  private async decode(batch: RecordedEvent[]): Promise<TypedEvent[]> {
    const handles = this.projection.handles;
    const prefixes = this.projection.streamPrefixes;
    const out: TypedEvent[] = [];
    for (const e of batch) {
      if (!isKnownType(e.type)) {
        await this.reportAnomaly(e, 'unknown event type');
        continue;
      }
      if (handles !== 'all' && !handles.includes(e.type)) continue;
      const prefix = prefixes?.[e.type];
      if (prefix !== undefined && !e.streamId.startsWith(prefix)) continue;
      try {
        const d = decodeEvent(e.id, e.type, e.data);
        out.push({ ...e, type: d.type, data: d.data } as TypedEvent);
      } catch (err) {
        if (err instanceof MalformedEventError) {
          await this.reportAnomaly(e, err.reason);
          throw err;
        }
        throw err;
      }
    }
    return out;
  }

  private async reportAnomaly(e: RecordedEvent, reason: string): Promise<void> {
    this.log.error({ event_id: e.id, type: e.type, reason }, 'event cannot be read');
    await this.db('aivis_event_anomalies')
      .insert({ event_id: e.id, projection: this.projection.name, type: e.type, reason })
      .onConflict(['event_id', 'projection'])
      .ignore();
  }

  private async run(): Promise<void> {
    while (this.running) {
      try {
        if (!this.leader || Date.now() - this.leaseRenewedAt > (LEASE_SECONDS * 1000) / 3) {
          const wasLeader = this.leader;
          if (!(await this.acquireLease())) {
            this.leader = false;
            await this.sleep(2000, false);
            continue;
          }
          // taking the lead: a rebuild that died elsewhere between rebuild.before and rebuild.after left its drops
          if (!wasLeader) await this.projection.migrate(this.db);
        }
        this.woken = false;
        const n = await this.step();
        if (n > 0) {
          if (n * 8 < this.batchSize && this.waiters.size === 0) await this.sleep(LINGER_MS, false);
          continue;
        }
        if (this.woken) {
          // an append we were told about may sit behind a still-open transaction for a moment
          for (let i = 0; i < 20 && this.running && (await this.step()) === 0; i++) await this.idle(3);
          continue;
        }
        await this.idle(this.pollMs);
        if (this.running && (await this.fencedElsewhere())) throw new Fenced();
      } catch (err) {
        if (err instanceof Fenced) {
          this.log.warn('projection fenced (rebuilt or lease lost); reloading');
          this.leader = false;
          continue;
        }
        if (err instanceof MalformedEventError) {
          // recorded before it is reported: whoever sees the status failed finds it in the checkpoint table too
          await this.db('aivis_checkpoints').where('name', this.projection.name).update({ status: 'failed', error: err.message }).catch(() => undefined);
          this.failed = err.message;
          this.log.error({ err: err.message }, 'projection stopped on a malformed event');
          this.running = false;
          return;
        }
        this.log.error({ err }, 'projection batch failed; retrying');
        await this.idle(1000);
      }
    }
  }

  /**
   * Processes until it has passed every event committed before the call (for the CLI, tests and benchmarks). An
   * empty read is not the end: the visibility horizon can hide committed events for a moment. If another instance
   * leads this projection, follows its checkpoint instead.
   */
  async runToHead(onProgress?: (processed: number) => void): Promise<number | null> {
    await this.prepare();
    const target = await this.store.lastPosition();
    if (!(await this.acquireLease())) {
      while (!(await this.waitFor(target, 1000))) {
        const at = await readCheckpoint(this.db, this.projection.name);
        this.log.info({ position: at && positionToString(at) }, 'waiting for the leading instance');
      }
      return null;
    }
    let total = 0;
    const hook = comparePositions(this.position, START) === 0 && comparePositions(target, START) > 0 ? this.projection.rebuild : undefined;
    await hook?.before(this.db);
    this.rebuilding = hook !== undefined;
    this.catchingUp = true;
    try {
      while (comparePositions(this.position, target) < 0) {
        const n = await this.step(true);
        if (n === 0) await new Promise((r) => setTimeout(r, 5));
        total += n;
        if (n) onProgress?.(total);
      }
    } finally {
      this.ahead = null;
      this.rebuilding = false;
      this.catchingUp = false;
      // on a failure too (migrate at the next start would also restore what before() dropped)
      await hook?.after(this.db);
    }
    await this.db('aivis_checkpoints').where({ name: this.projection.name, lease_owner: this.owner }).update({ lease_owner: null, lease_until: null });
    this.leader = false;
    return total;
  }

  /** Empties the read model and starts it over from zero; a running leader elsewhere is fenced by the generation. */
  async reset(): Promise<void> {
    await this.prepare();
    for (let attempt = 1; ; attempt++) {
      try {
        await this.db.transaction(async (trx) => {
          for (const t of this.projection.tables) await trx.raw('truncate table ??', [t]);
          await trx('aivis_checkpoints')
            .where('name', this.projection.name)
            .update({ position: positionToString(START), generation: trx.raw('generation + 1'), status: 'running', error: null });
        });
        break;
      } catch (err) {
        // a leader's batch may hold one of the tables and want the next one this truncate holds: whichever Postgres
        // picks as the deadlock's victim goes again (the leader retries its batch and is then fenced)
        if ((err as { code?: string }).code !== '40P01' || attempt >= 5) throw err;
      }
    }
    this.position = START;
  }

  /** Resolves true once the projection has passed `pos` (on this instance or, if another leads, in the database). */
  async waitFor(pos: Position, timeoutMs: number): Promise<boolean> {
    if (comparePositions(this.position, pos) >= 0) return true;
    if (this.leader) {
      return new Promise((resolve) => {
        const w = { pos, resolve: (ok: boolean) => (clearTimeout(t), resolve(ok)) };
        const t = setTimeout(() => {
          this.waiters.delete(w);
          resolve(false);
        }, timeoutMs);
        this.waiters.add(w);
        this.poke();
        this.wakeUrgent?.();
      });
    }
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const at = await readCheckpoint(this.db, this.projection.name);
      if (at && comparePositions(at, pos) >= 0) return true;
      await new Promise((r) => setTimeout(r, 10));
    }
    return false;
  }

  private settleWaiters(): void {
    for (const w of this.waiters) {
      if (comparePositions(this.position, w.pos) >= 0) {
        this.waiters.delete(w);
        w.resolve(true);
      }
    }
  }
}
