import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { decodeEvent, isKnownType, MalformedEventError } from '../domain/events';
import type { Logger } from '../logger';
import {
  DEAD_LETTERS,
  errorText,
  isPoison,
  isUnreadable,
  type Item,
  type Letter,
  migrateDeadLetters,
  PoisonEventError,
  recordLetters,
  websiteOf,
} from './dead-letters';
import { CheckpointWrites, moveCheckpoints } from './checkpoints';
import { APPENDS_NONE, APPENDS_NONE_FUNCTION, declareAppendsNone } from './horizon';
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
import { dropSchema, inSchema, liveSchema, lockLive, setSearchPath, shadowSchema, shareSequences, swapIn } from './shadow';

/** a rebuild's claim on its projection (one rebuild at a time), renewed while it runs */
const REBUILD_LEASE_SECONDS = 60;
/**
 * After a batch much smaller than the batch size, wait this long before reading again (unless someone waits on a
 * position): under a steady trickle of appends the next read then takes a batch, not one event per transaction.
 */
const LINGER_MS = 4;
/** the poll while a waiter waits and nothing could be read (the events it waits for sit behind an open transaction) */
const WAITED_POLL_MS = 5;
/**
 * Events a catch-up from zero applies before its tables are vacuumed and analyzed once it is done: tables written whole
 * have no planner statistics, no visibility map and no hint bits until then (autovacuum may be late or off).
 */
const SETTLE_AFTER_EVENTS = 10_000;

/**
 * Each event's decoding, kept with the event: the feed serves an instance's projections the same event objects, so an
 * answer is validated once, not once per projection reading it (the projections only read what they are given).
 */
const decoded = new WeakMap<RecordedEvent, { event: TypedEvent } | { reason: string }>();

/**
 * `shared`: the event object may reach other projections (the feed). A catch-up's own read reaches only this one: its
 * decoding is not kept, for a WeakMap entry held each event of a rebuild until it had reached V8's old generation (60 of
 * 64 MB promoted per 50,000 events; without, 4.5).
 */
function decodeOnce(e: RecordedEvent, shared: boolean): { event: TypedEvent } | { reason: string } {
  let d = shared ? decoded.get(e) : undefined;
  if (d === undefined) {
    try {
      const x = decodeEvent(e.id, e.type, e.data, e.metadata?.schema_version);
      d = { event: { ...e, type: x.type, data: x.data } as TypedEvent };
    } catch (err) {
      if (!(err instanceof MalformedEventError)) throw err;
      d = { reason: err.reason };
    }
    if (shared) decoded.set(e, d);
  }
  return d;
}

/** the databases whose runner tables this process has migrated (every runner of an instance asked, two dozen times) */
const migratedRunnerTables = new WeakMap<Knex, Promise<void>>();

export function migrateRunnerTables(db: Knex): Promise<void> {
  let done = migratedRunnerTables.get(db);
  if (!done) {
    done = createRunnerTables(db);
    migratedRunnerTables.set(db, done);
    done.catch(() => migratedRunnerTables.delete(db));
  }
  return done;
}

/**
 * Prepares an instance's runners over `db` (as each one's prepare()), their checkpoint rows read in one statement and
 * the missing ones inserted in one.
 */
export async function prepareRunners(db: Knex, runners: readonly ProjectionRunner[]): Promise<void> {
  await migrateRunnerTables(db);
  const names = runners.map((r) => r.projection.name);
  const rows = new Map(((await db('aivis_checkpoints').whereIn('name', names)) as { name: string; version: number }[]).map((r) => [r.name, r]));
  const missing = [];
  for (const r of runners) {
    const row = await r.prepareWith(rows.get(r.projection.name));
    if (row) missing.push(row);
  }
  if (missing.length) await db('aivis_checkpoints').insert(missing).onConflict('name').ignore();
}

async function createRunnerTables(db: Knex): Promise<void> {
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
      );
      alter table aivis_checkpoints add column if not exists rebuild_owner text, add column if not exists rebuild_until timestamptz;`);
    await trx.raw(APPENDS_NONE_FUNCTION);
    await migrateDeadLetters(trx);
  });
}

/** A projection's stored checkpoint (where the instance leading it has got to), or null before its first start. */
export async function readCheckpoint(db: Knex, name: string): Promise<Position | null> {
  const row = await db('aivis_checkpoints').where('name', name).first('position');
  return row ? positionFromString(row.position) : null;
}

/** A batch as read, its events decoded for the projection (the raw events dropped). */
interface DecodedBatch {
  items: Item[];
  scanned: number;
  scannedTo: Position;
}

class Fenced extends Error {}
/** the dead letters a retry read changed before it could lock them */
class LettersMoved extends Error {}

/** Where a batch goes: the live read model, or a rebuild's shadow (its own schema and dead letters). */
interface Lane {
  /** websites set aside: their events are recorded, not applied */
  dead: Set<string>;
  /** the dead-letter table of this lane */
  letters: string;
  /** the schemas the batch's unqualified names resolve in: a rebuild's, then the live one (null: as the connection has it) */
  searchPath: string[] | null;
  rebuilding: boolean;
}

export interface RetryResult {
  /** set-aside events tried again */
  retried: number;
  /** of those, applied */
  applied: number;
  /** still set aside (the same event failed again, or one after it did) */
  set_aside: number;
}

export interface RunnerStatus {
  name: string;
  position: string;
  leader: boolean;
  status: 'running' | 'failed' | 'stopped';
  error: string | null;
}

/**
 * The lock that orders a projection's live writes against its swap: every transaction writing the live tables takes it
 * shared before its first table, the swap exclusive before it locks the tables. Without it a live batch holding one
 * table and waiting for the next, while the swap holds that one and waits for the first, is a deadlock (the swap's
 * retries could all lose it under steady appends).
 */
async function liveWrite(trx: Knex.Transaction, projection: string, mode: 'shared' | 'exclusive'): Promise<void> {
  const lock = liveLock(projection, mode);
  await trx.raw(lock.sql, lock.bindings);
}

function liveLock(projection: string, mode: 'shared' | 'exclusive'): { sql: string; bindings: string[] } {
  const fn = mode === 'shared' ? 'pg_advisory_xact_lock_shared' : 'pg_advisory_xact_lock';
  // with the mark that the transaction appends no events (horizon.ts): the log's readers need not wait for it
  return { sql: `select ${fn}(hashtextextended(?, 0)), ${APPENDS_NONE}`, bindings: [`aivis-live:${projection}`] };
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
  private readonly settleAfterEvents: number;
  private readonly startAtHead: boolean;
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
  /** a deferred checkpoint move found this runner no longer leading: the next step reloads */
  private fencedByMove = false;
  /** when the idle loop last looked for a fence (fencedElsewhere) */
  private fenceCheckedAt = 0;
  /** when this runner last took or renewed its lease with acquireLease (a fence read before it would not show it) */
  private leaseAcquiredAt = 0;
  /** prepare() has just run the projection's migrate: the first lease taken need not run it again */
  private migrated = false;
  private ahead: { after: Position; batch: Promise<DecodedBatch> } | null = null;
  /** runToHead is between the projection's rebuild.before and rebuild.after */
  private rebuilding = false;
  private readonly feed: SharedFeed | null;
  /** while running: live batches come through the feed this process's projections share */
  private reader: FeedReader | null = null;
  /** events applied since this runner took the lead at the log's start (null: it did not start there, or is done) */
  private fromZero: number | null = null;
  /** a VACUUM (ANALYZE) of the tables after a catch-up from zero, running beside the loop */
  private settling: Promise<void> | null = null;
  /** websites this projection has set aside (dead letters), as of the lease taken; only the leader adds to them */
  private dead = new Set<string>();

  /** moves of the checkpoint alone, written with the other runners' of this process (default: this runner's own) */
  private readonly checkpoints: CheckpointWrites;

  constructor(opts: {
    projection: Projection;
    store: EventStore;
    db: Knex;
    logger: Logger;
    batchSize?: number;
    pollMs?: number;
    feed?: SharedFeed;
    checkpoints?: CheckpointWrites;
    /** events a catch-up from zero applies before its tables are vacuumed and analyzed (SETTLE_AFTER_EVENTS) */
    settleAfterEvents?: number;
    /** a projection met for the first time starts at the log's head, not its start (a follower of what comes next) */
    startAtHead?: boolean;
  }) {
    this.projection = opts.projection;
    this.store = opts.store;
    this.feed = opts.feed ?? null;
    this.checkpoints = opts.checkpoints ?? new CheckpointWrites(opts.db);
    this.db = opts.db;
    this.log = opts.logger.child({ projection: opts.projection.name });
    this.liveBatchSize = opts.batchSize ?? 1000;
    // measured on the activity rebuild (1 M events, 2 cores): 4,000 a batch ~8% faster than 1,000
    this.catchUpBatchSize = opts.batchSize ?? 4000;
    this.pollMs = opts.pollMs ?? 500;
    this.settleAfterEvents = opts.settleAfterEvents ?? SETTLE_AFTER_EVENTS;
    this.startAtHead = opts.startAtHead ?? false;
  }

  /** Creates tables, checks the version (a changed version drops and rebuilds), without processing events. */
  async prepare(): Promise<void> {
    await prepareRunners(this.db, [this]);
  }

  /**
   * prepare() given the checkpoint row as read (undefined: there is none yet), for prepareRunners: the row to insert
   * when there is none, which the caller inserts.
   */
  async prepareWith(row: { version: number } | undefined): Promise<{ name: string; position: string; version: number } | null> {
    const p = this.projection;
    if (row && row.version !== p.version) {
      this.log.warn({ from: row.version, to: p.version }, 'projection version changed: rebuilding from zero');
      await this.db.transaction(async (trx) => {
        for (const t of p.tables) await trx.schema.dropTableIfExists(t);
        await trx(DEAD_LETTERS).where('projection', p.name).delete();
        await trx('aivis_checkpoints')
          .where('name', p.name)
          .update({ version: p.version, position: positionToString(START), generation: trx.raw('generation + 1'), status: 'running', error: null });
      });
    }
    await p.migrate(this.db);
    this.migrated = true;
    if (row) return null;
    const first = this.startAtHead ? await this.store.headPosition() : START;
    return { name: p.name, position: positionToString(first), version: p.version };
  }

  async start(): Promise<void> {
    await this.prepare();
    this.begin();
  }

  /**
   * Starts the loop of a prepared runner. An instance prepares all its runners, then begins them together: their
   * first reads share one read of the log (a reader joining the feed drops the stretch read before it) and their
   * leases are taken in one statement.
   */
  begin(): void {
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
    await this.settling;
    this.ahead = null;
    this.reader?.close();
    this.reader = null;
    await this.checkpoints.settle(this.projection.name);
    if (this.leader) {
      await this.checkpoints.release(this.projection.name, this.owner);
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

  /** Websites this runner, as the leader, sets aside (the dead-letter table is the record every instance reads). */
  setAside(): ReadonlySet<string> {
    return this.dead;
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
    // the position read below is the stored one: this runner's deferred move first
    await this.checkpoints.settle(this.projection.name);
    const taken = await this.checkpoints.take(this.projection.name, this.owner);
    if (!taken) return false;
    this.position = positionFromString(taken.position);
    const generation = BigInt(taken.generation);
    // reset elsewhere since the last renewal (a rebuild's swap, a retry): taken as a new lead, its dead letters read again
    if (this.leader && generation !== this.generation) this.leader = false;
    this.generation = generation;
    this.leaseRenewedAt = Date.now();
    this.leaseAcquiredAt = this.leaseRenewedAt;
    if (!this.leader) {
      // taking the lead (again: a rebuild's swap or a retry fences the leader): the dead letters as they now are
      this.dead = new Set(await this.checkpoints.setAside(this.projection.name));
      this.log.info({ position: taken.position, set_aside: this.dead.size }, 'projection lease acquired');
    }
    this.leader = true;
    this.settleWaiters();
    return true;
  }

  /**
   * True when a rebuild elsewhere reset this projection (new generation) or another instance took the lease: from a
   * read of the checkpoints shared with this process's other runners, at most a poll interval old and newer than this
   * runner's last lease.
   */
  private async fencedElsewhere(): Promise<boolean> {
    const leads = await this.checkpoints.stillLeads(this.projection.name, this.owner, this.generation, this.pollMs / 2, this.leaseAcquiredAt);
    return !leads;
  }

  /**
   * Reads the next batch after `after`: live, through the feed this instance's projections share; catching up, from
   * the store. Either way a projection that handles some types gets those (where the store can filter), and the scan
   * still moves its checkpoint past the events it skips.
   */
  /** `idle`: a poll that nothing prompted (see FeedReader.read) */
  private read(after: Position, idle = false): Promise<ScannedBatch> {
    if (this.reader && !this.catchingUp) return this.reader.read(after, this.batchSize, idle);
    return readInterest(this.store, after, this.batchSize, { handles: this.projection.handles, streamPrefixes: this.projection.streamPrefixes });
  }

  /** A read with its events decoded as soon as it arrives (a read ahead: while the batch before is written). */
  private async decoded(read: Promise<ScannedBatch>, shared = true): Promise<DecodedBatch> {
    const b = await read;
    return { items: await this.decode(b.events, shared), scanned: b.scanned, scannedTo: b.scannedTo };
  }

  /**
   * Processes one batch; returns how many events were scanned (0 = caught up). A batch that fails on an event's content
   * is applied again piece by piece (`isolating`), and the failing event's website is set aside.
   */
  async step(readAhead = false, isolating = false, idle = false): Promise<number> {
    if (this.fencedByMove) {
      this.fencedByMove = false;
      throw new Fenced();
    }
    const ahead = this.ahead;
    this.ahead = null;
    const b =
      ahead && comparePositions(ahead.after, this.position) === 0
        ? await ahead.batch
        : await this.decoded(this.read(this.position, idle), !this.catchingUp);
    const { scanned: count, scannedTo: last } = b;
    if (count === 0) return 0;
    // apply takes the events out of `pending`: while the batch is written, this frame holds none of them, so the next
    // batch (read meanwhile) is not parsed into a young heap still full of this one (scavenges copy what is alive)
    let pending: Item[] | null = b.items;
    b.items = [];
    const take = () => {
      const events = pending!;
      pending = null;
      return events;
    };
    if (readAhead && count === this.batchSize) {
      // read and decode the next batch while this one is written (node parses and validates while Postgres writes);
      // a failed write leaves it unused, and step() only takes it if it starts where the checkpoint now is
      const next = this.decoded(this.read(last), !this.catchingUp);
      next.catch(() => undefined);
      this.ahead = { after: last, batch: next };
    }
    try {
      const follow = this.projection.follow;
      if (follow && pending.length > 0)
        await this.followBatch(
          follow,
          pending.filter((i): i is TypedEvent => !isUnreadable(i)),
        );
      // nothing to apply (every event scanned was another projection's, or a follower's that writes no rows): the
      // checkpoint alone, stored within DEFER_MS with the other runners' of this process (checkpoints.ts); this
      // instance's waiters go on now
      if (pending.length === 0 || (follow && this.projection.tables.length === 0)) {
        this.checkpoints.defer(
          { name: this.projection.name, owner: this.owner, generation: this.generation, position: positionToString(last) },
          () => {
            this.fencedByMove = true;
            this.wakeUrgent?.();
          },
        );
      } else {
        const lane: Lane = { dead: new Set(this.dead), letters: DEAD_LETTERS, searchPath: null, rebuilding: this.rebuilding };
        await this.checkpoints.yieldTo(this.projection.name);
        await this.db.transaction(async (trx) => {
          // the live writers' lock, then the checkpoint's move (fenced), in one statement before the first table is
          // written: a fenced batch writes nothing, and a batch is one round trip shorter
          await this.saveCheckpoint(trx, last, liveLock(this.projection.name, 'shared'));
          await this.applyItems(trx, take(), lane, isolating);
        });
        this.dead = lane.dead;
      }
    } catch (err) {
      if (isolating || !isPoison(err)) throw err;
      // read again rather than kept: the batch is found again where the checkpoint still is
      this.ahead = null;
      this.log.warn({ err: errorText(err) }, 'a batch failed on its content: applying it piece by piece to set the failing event aside');
      return this.step(false, true);
    }
    this.leaseRenewedAt = Date.now();
    this.position = last;
    this.settleWaiters();
    return count;
  }

  /**
   * Applies a batch in its lane: events of websites set aside are recorded, not applied; an unreadable event of a
   * website sets it aside (of none, stops the projection). `isolating`: the batch failed on an event's content, so it is
   * applied in halves, each in a savepoint, down to the event that fails alone, whose website is then set aside.
   */
  private async applyItems(trx: Knex.Transaction, items: Item[], lane: Lane, isolating: boolean): Promise<void> {
    if (lane.searchPath) await setSearchPath(trx, lane.searchPath);
    const live: TypedEvent[] = [];
    const letters: Letter[] = [];
    for (const item of items) {
      const e = isUnreadable(item) ? item.unreadable : item;
      const site = websiteOf(e);
      if (site !== null && lane.dead.has(site)) letters.push({ event: e, state: 'held', error: null });
      else if (!isUnreadable(item)) live.push(item);
      else if (site === null) throw new MalformedEventError(e.id, e.type, item.reason);
      else {
        this.log.error({ event_id: e.id, type: e.type, website_id: site, reason: item.reason }, 'unreadable event: its website is set aside');
        letters.push({ event: e, state: 'failed', error: `unreadable: ${item.reason}` });
        lane.dead.add(site);
      }
    }
    await recordLetters(trx, lane.letters, this.projection.name, letters);
    if (live.length === 0) return;
    if (isolating) await this.isolate(trx, live, lane);
    else await this.projection.apply(trx, live, { rebuilding: lane.rebuilding });
  }

  /**
   * A follower's batch. When its work fails on an event's content, it is followed in halves down to the event that
   * fails alone, which is reported (aivis_event_anomalies) and passed over: the follower's work for the others goes on.
   */
  private async followBatch(follow: NonNullable<Projection['follow']>, events: TypedEvent[]): Promise<void> {
    try {
      await follow(events);
    } catch (err) {
      if (!isPoison(err)) throw err;
      if (events.length > 1) {
        const mid = events.length >>> 1;
        await this.followBatch(follow, events.slice(0, mid));
        await this.followBatch(follow, events.slice(mid));
        return;
      }
      await this.reportAnomaly(events[0], `not followed: ${errorText(err)}`);
    }
  }

  private async isolate(trx: Knex.Transaction, events: TypedEvent[], lane: Lane): Promise<void> {
    const live: TypedEvent[] = [];
    const held: Letter[] = [];
    for (const e of events) {
      const site = websiteOf(e);
      if (site !== null && lane.dead.has(site)) held.push({ event: e, state: 'held', error: null });
      else live.push(e);
    }
    await recordLetters(trx, lane.letters, this.projection.name, held);
    if (live.length === 0) return;
    try {
      await trx.transaction((savepoint) => this.projection.apply(savepoint, live, { rebuilding: lane.rebuilding }));
      return;
    } catch (err) {
      if (!isPoison(err)) throw err;
      if (live.length > 1) {
        const mid = live.length >>> 1;
        await this.isolate(trx, live.slice(0, mid), lane);
        await this.isolate(trx, live.slice(mid), lane);
        return;
      }
      const e = live[0];
      const site = websiteOf(e);
      if (site === null) throw new PoisonEventError(e.id, e.type, errorText(err));
      this.log.error({ event_id: e.id, type: e.type, website_id: site, err: errorText(err) }, 'event cannot be applied: its website is set aside');
      await recordLetters(trx, lane.letters, this.projection.name, [{ event: e, state: 'failed', error: errorText(err) }]);
      lane.dead.add(site);
    }
  }

  /** Moves the checkpoint (and the lease) in the batch's transaction, if this runner still leads this generation. */
  private async saveCheckpoint(trx: Knex, last: Position, first: Parameters<typeof moveCheckpoints>[2]): Promise<void> {
    const move = { name: this.projection.name, owner: this.owner, generation: this.generation, position: positionToString(last) };
    if (!(await moveCheckpoints(trx, [move], first, this.checkpoints.leaseSeconds)).has(move.name)) throw new Fenced();
  }

  /** `shared`: the batch came through the feed (see decodeOnce) */
  private async decode(batch: RecordedEvent[], shared = true): Promise<Item[]> {
    const handles = this.projection.handles;
    const prefixes = this.projection.streamPrefixes;
    const out: Item[] = [];
    for (const e of batch) {
      if (!isKnownType(e.type)) {
        await this.reportAnomaly(e, 'unknown event type');
        continue;
      }
      if (handles !== 'all' && !handles.includes(e.type)) continue;
      const prefix = prefixes?.[e.type];
      if (prefix !== undefined && !e.streamId.startsWith(prefix)) continue;
      const d = decodeOnce(e, shared);
      if ('event' in d) {
        if (!this.projection.ignores?.(d.event)) out.push(d.event);
      } else {
        await this.reportAnomaly(e, d.reason);
        // in its place in the batch: its website's earlier events are applied, its later ones set aside with it
        out.push({ unreadable: e, reason: d.reason });
      }
    }
    return out;
  }

  private async reportAnomaly(e: Pick<RecordedEvent, 'id' | 'type'>, reason: string): Promise<void> {
    this.log.error({ event_id: e.id, type: e.type, reason }, 'event cannot be read');
    await this.db('aivis_event_anomalies')
      .insert({ event_id: e.id, projection: this.projection.name, type: e.type, reason })
      .onConflict(['event_id', 'projection'])
      .ignore();
  }

  private async run(): Promise<void> {
    // the last idle wait ran out with nothing announced and nobody waiting: the next read is an idle poll
    let polled = false;
    while (this.running) {
      try {
        if (this.failed) {
          // stopped on an organization-level event: goes on once a rebuild (new generation) or another instance took over
          await this.sleep(this.pollMs * 4, false);
          if (this.running && (await this.fencedElsewhere())) {
            this.log.info('projection reset elsewhere: going on');
            this.failed = null;
            this.leader = false;
          }
          continue;
        }
        if (!this.leader && !(await this.checkpoints.mayTake(this.projection.name, this.owner, this.pollMs))) {
          // another instance leads and its lease holds: no update (and no deferred moves sent) for nothing; as after a
          // failed try, the tables are no longer known to be as prepare() left them
          this.migrated = false;
          await this.sleep(2000, false);
          continue;
        }
        if (!this.leader || Date.now() - this.leaseRenewedAt > (this.checkpoints.leaseSeconds * 1000) / 3) {
          const wasLeader = this.leader;
          // only the first try after prepare() finds the tables as it left them
          const justMigrated = this.migrated;
          this.migrated = false;
          if (!(await this.acquireLease())) {
            this.leader = false;
            await this.sleep(2000, false);
            continue;
          }
          // taking the lead: a rebuild that died elsewhere between rebuild.before and rebuild.after left its drops
          // (at start, prepare() has just migrated)
          if (!wasLeader && !justMigrated) await this.projection.migrate(this.db);
          if (!wasLeader) this.fromZero = comparePositions(this.position, START) === 0 ? 0 : null;
        }
        // an append announced since (say while the fence was read) makes it a read of its own
        const idlePoll = polled && !this.woken;
        polled = false;
        this.woken = false;
        // a full batch reads the next one while it is written (feed read and decode overlap the write in Postgres)
        const n = await this.step(true, false, idlePoll);
        if (this.fromZero !== null) {
          this.fromZero += n;
          if (n === 0) {
            if (this.fromZero >= this.settleAfterEvents) this.settling = this.settleTables(null);
            this.fromZero = null;
          }
        }
        if (n > 0) {
          if (n * 8 < this.batchSize && this.waiters.size === 0) await this.sleep(LINGER_MS, false);
          continue;
        }
        if (this.woken) {
          // an append we were told about may sit behind a still-open transaction for a moment
          for (let i = 0; i < 20 && this.running && (await this.step()) === 0; i++) await this.idle(3);
          continue;
        }
        // someone waits for a position (a write answering once its read model has it): what it waits for is committed,
        // only hidden behind another open transaction, whose commit wakes nobody; look again soon, not at the next poll
        await this.idle(this.waiters.size > 0 ? WAITED_POLL_MS : this.pollMs);
        polled = !this.woken && this.waiters.size === 0;
        // a rebuild's swap or another instance's takeover, noticed while idle: once a poll interval, not on each of
        // the short polls a waiter makes (every write fences anyway: the checkpoint moves only for owner and generation)
        if (this.running && Date.now() - this.fenceCheckedAt >= this.pollMs) {
          this.fenceCheckedAt = Date.now();
          if (await this.fencedElsewhere()) throw new Fenced();
        }
      } catch (err) {
        if (err instanceof Fenced) {
          this.log.warn('projection fenced (rebuilt or lease lost); reloading');
          this.leader = false;
          continue;
        }
        if (err instanceof MalformedEventError || err instanceof PoisonEventError) {
          // an organization-level event (no website to set aside) stops the projection, recorded before it is
          // reported: whoever sees the status failed finds it in the checkpoint table too
          await this.db('aivis_checkpoints')
            .where('name', this.projection.name)
            .update({ status: 'failed', error: err.message })
            .catch(() => undefined);
          this.failed = err.message;
          this.log.error({ err: err.message }, 'projection stopped on an event it cannot apply');
          for (const w of this.waiters) w.resolve(false);
          this.waiters.clear();
          continue;
        }
        this.log.error({ err }, 'projection batch failed; retrying');
        await this.idle(1000);
      }
    }
  }

  /**
   * Processes until it has passed every event committed before the call (for the CLI, tests and benchmarks). An
   * empty read is not the end: the visibility horizon can hide committed events for a moment. If another instance
   * leads this projection, follows its checkpoint instead, and takes over if that leader stops renewing its lease.
   */
  async runToHead(onProgress?: (processed: number) => void): Promise<number | null> {
    await this.prepare();
    const target = await this.store.lastPosition();
    // another instance leads: follow its checkpoint, and take the lease over once it lapses (a leader that died stops
    // renewing it: within its lease's seconds, plus a second of this loop, the work goes on here)
    while (!(await this.acquireLease())) {
      if (await this.waitFor(target, 1000)) return null;
      const row = await this.db('aivis_checkpoints').where('name', this.projection.name).first('position', 'status', 'error', 'lease_until');
      // the leader stopped on an organization-level event: it will not get there
      if (row?.status === 'failed') throw new Error(`projection ${this.projection.name} stopped: ${row.error}`);
      this.log.info({ position: row?.position, lease_until: row?.lease_until }, 'waiting for the leading instance (or its lease to lapse)');
    }
    let total = 0;
    const fromZero = comparePositions(this.position, START) === 0;
    const hook = fromZero && comparePositions(target, START) > 0 ? this.projection.rebuild : undefined;
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
    await this.checkpoints.settle(this.projection.name);
    await this.checkpoints.release(this.projection.name, this.owner);
    this.leader = false;
    if (fromZero && total >= this.settleAfterEvents) await this.settleTables(null);
    return total;
  }

  /**
   * Rebuilds the read model from zero beside the live one, then swaps it in (one transaction) and returns the events
   * read. The live tables keep serving (and the live leader keeps applying) until the swap; a rebuild that fails leaves
   * them as they were. Events set aside are tried again from scratch: the rebuilt read model's dead letters replace
   * the live ones. One rebuild of a projection at a time, across processes.
   */
  async rebuild(onProgress?: (processed: number) => void): Promise<number> {
    await this.prepare();
    const p = this.projection;
    const schema = shadowSchema(p.name);
    const live = await liveSchema(this.db);
    const claim = await this.claimRebuild();
    const session = inSchema(this.db, schema);
    try {
      await dropSchema(this.db, schema);
      await this.db.raw('create schema ??', [schema]);
      await this.db.raw(`create table ??.?? (like ${DEAD_LETTERS} including defaults including constraints including indexes)`, [
        schema,
        DEAD_LETTERS,
      ]);
      await session.run((k) => p.migrate(k));
      await shareSequences(this.db, schema, live);
      if (p.rebuild) await session.run((k) => p.rebuild!.before(k));
      const shadow = {
        position: START as Position,
        total: 0,
        lane: { dead: new Set<string>(), letters: `${schema}.${DEAD_LETTERS}`, searchPath: [schema, live], rebuilding: true } as Lane,
      };
      await this.catchUpShadow(shadow, await this.store.lastPosition(), onProgress);
      // secondary indexes back before the swap: the tables go live whole
      if (p.rebuild) await session.run((k) => p.rebuild!.after(k));
      if (shadow.total >= this.settleAfterEvents) await this.settleTables(schema);
      shadow.lane.rebuilding = false;
      await this.swap(schema, live, shadow, onProgress);
      return shadow.total;
    } finally {
      await session.close();
      await claim.release();
      await dropSchema(this.db, schema).catch((err) => this.log.warn({ err: errorText(err), schema }, 'could not drop the rebuild schema'));
    }
  }

  /**
   * VACUUM (ANALYZE) of the projection's tables (in `schema`, or as the search path finds them): statistics for the
   * planner, and the visibility map and hint bits set once rather than by the first readers.
   */
  private async settleTables(schema: string | null): Promise<void> {
    const t0 = Date.now();
    for (const t of this.projection.tables) {
      await this.db
        .raw(schema ? 'vacuum (analyze) ??.??' : 'vacuum (analyze) ??', schema ? [schema, t] : [t])
        .catch((err) => this.log.warn({ err: errorText(err), table: t }, 'could not vacuum a rebuilt table'));
    }
    this.log.info({ ms: Date.now() - t0, tables: this.projection.tables.length }, 'rebuilt tables vacuumed and analyzed');
  }

  /** One rebuild of this projection at a time: a lease in its checkpoint row, renewed while the rebuild runs. */
  private async claimRebuild(): Promise<{ release(): Promise<void> }> {
    const name = this.projection.name;
    const take = () =>
      this.db('aivis_checkpoints')
        .where('name', name)
        .andWhere((q) => q.whereNull('rebuild_owner').orWhere('rebuild_owner', this.owner).orWhere('rebuild_until', '<', this.db.fn.now()))
        .update({ rebuild_owner: this.owner, rebuild_until: this.db.raw(`now() + interval '${REBUILD_LEASE_SECONDS} seconds'`) })
        .returning('name');
    if ((await take()).length === 0) {
      const row = await this.db('aivis_checkpoints').where('name', name).first('rebuild_until');
      throw new Error(
        `a rebuild of ${name} is already running in another process (its claim lasts until ${new Date(row.rebuild_until).toISOString()} unless renewed)`,
      );
    }
    const renew = setInterval(() => void take().catch(() => undefined), (REBUILD_LEASE_SECONDS * 1000) / 3);
    return {
      release: async () => {
        clearInterval(renew);
        await this.db('aivis_checkpoints').where({ name, rebuild_owner: this.owner }).update({ rebuild_owner: null, rebuild_until: null });
      },
    };
  }

  /** Applies the log to a rebuild's shadow until it has passed `target` (a batch read ahead while one is written). */
  private async catchUpShadow(
    shadow: { position: Position; total: number; lane: Lane },
    target: Position,
    onProgress?: (processed: number) => void,
  ): Promise<void> {
    const size = this.catchUpBatchSize;
    const interest = { handles: this.projection.handles, streamPrefixes: this.projection.streamPrefixes };
    const read = (after: Position) => this.decoded(readInterest(this.store, after, size, interest), false);
    let ahead: { after: Position; batch: Promise<DecodedBatch> } | null = null;
    for (;;) {
      const at = shadow.position;
      let b: DecodedBatch = ahead && comparePositions(ahead.after, at) === 0 ? await ahead.batch : await read(at);
      ahead = null;
      if (b.scanned === 0) {
        if (comparePositions(at, target) >= 0) return;
        // an empty read before the target is not the end: the visibility horizon can hide committed events for a moment
        await new Promise((r) => setTimeout(r, 5));
        continue;
      }
      if (b.scanned === size) {
        // read and decode the next batch while this one is written
        const next = read(b.scannedTo);
        next.catch(() => undefined);
        ahead = { after: b.scannedTo, batch: next };
      }
      let pending: Item[] | null = b.items;
      b = { ...b, items: [] };
      if (pending.length > 0) {
        const take = () => {
          const items = pending!;
          pending = null;
          return items;
        };
        try {
          shadow.lane = await this.applyShadow(take, shadow.lane, false);
        } catch (err) {
          if (!isPoison(err)) throw err;
          // read again rather than kept (as in step): the same stretch, applied piece by piece
          ahead = null;
          b = await read(at);
          const again = b.items;
          shadow.lane = await this.applyShadow(() => again, shadow.lane, true);
        }
      }
      shadow.position = b.scannedTo;
      shadow.total += b.scanned;
      onProgress?.(shadow.total);
      // past the target: done, though appends may still be arriving (the swap takes the rest)
      if (comparePositions(shadow.position, target) >= 0) return;
    }
  }

  /** One batch into the shadow (no checkpoint: a rebuild that stops starts over); returns the lane as it then is. */
  private async applyShadow(take: () => Item[], lane: Lane, isolating: boolean): Promise<Lane> {
    const next: Lane = { ...lane, dead: new Set(lane.dead) };
    await this.db.transaction(async (trx) => {
      await declareAppendsNone(trx);
      await this.applyItems(trx, take(), next, isolating);
    });
    return next;
  }

  /**
   * Swaps the shadow in: the live tables locked (their readers and a live batch finish first), the shadow brought up to
   * the live checkpoint if the live leader got ahead meanwhile, the tables and dead letters replaced and the checkpoint
   * set to the shadow's position with a new generation (the live leader is fenced and goes on from there).
   */
  private async swap(
    schema: string,
    live: string,
    shadow: { position: Position; total: number; lane: Lane },
    onProgress?: (processed: number) => void,
  ): Promise<void> {
    const p = this.projection;
    for (let attempt = 1; ; attempt++) {
      await this.catchUpShadow(shadow, await this.store.lastPosition(), onProgress);
      try {
        const done = await this.db.transaction(async (trx) => {
          await trx.raw(`set local lock_timeout = '10s'`);
          // first the live writers' lock: a live batch in flight finishes, the next waits here before it touches a table
          await liveWrite(trx, p.name, 'exclusive');
          await lockLive(trx, live, p.tables);
          const row = await trx('aivis_checkpoints').where('name', p.name).forUpdate().first('position');
          // the store is not read inside: on PGlite this transaction holds the one connection
          if (comparePositions(positionFromString(row.position), shadow.position) > 0 && attempt < 5) return false;
          await swapIn(trx, schema, live, p.tables);
          await trx(DEAD_LETTERS).where('projection', p.name).delete();
          await trx.raw(`insert into ${DEAD_LETTERS} select * from ??.??`, [schema, DEAD_LETTERS]);
          await trx('aivis_checkpoints')
            .where('name', p.name)
            .update({
              position: positionToString(shadow.position),
              generation: trx.raw('generation + 1'),
              status: 'running',
              error: null,
              updated_at: trx.fn.now(),
            });
          return true;
        });
        if (done) break;
      } catch (err) {
        // a live batch holding one table and waiting for another this swap holds: the deadlock's victim goes again
        const code = (err as { code?: string }).code;
        if ((code !== '40P01' && code !== '55P03') || attempt >= 5) throw err;
      }
    }
    this.position = shadow.position;
    this.dead = shadow.lane.dead;
    this.log.info(
      { position: positionToString(shadow.position), events: shadow.total, set_aside: shadow.lane.dead.size },
      'projection rebuilt beside the live one and swapped in',
    );
  }

  /**
   * Tries the events this projection set aside again (of one website, or of all), in the log's order within each
   * website: those that now apply are applied, and a website whose event still fails stays set aside from that event
   * on. The live leader is fenced (new generation) and reloads the dead letters.
   */
  async retry(websiteId?: string): Promise<RetryResult> {
    await this.prepare();
    const name = this.projection.name;
    const letters = (db: Knex) => {
      const q = db(DEAD_LETTERS).where('projection', name);
      if (websiteId) q.andWhere('website_id', websiteId);
      return q.orderBy('seq').select('event_id', 'stream_id', 'revision', 'website_id');
    };
    for (let attempt = 1; ; attempt++) {
      const rows: { event_id: string; stream_id: string; revision: string; website_id: string }[] = await letters(this.db);
      if (rows.length === 0) return { retried: 0, applied: 0, set_aside: 0 };
      // read before the transaction: on PGlite it holds the one connection the store reads through
      const events: RecordedEvent[] = [];
      for (const r of rows) {
        const [e] = await this.store.readStream(r.stream_id, { fromRevision: BigInt(r.revision), maxCount: 1 });
        if (!e || e.id !== r.event_id) throw new Error(`set-aside event ${r.event_id} is not at ${r.stream_id}@${r.revision} in the store`);
        events.push(e);
      }
      const items = await this.decode(events);
      try {
        const left = await this.db.transaction(async (trx) => {
          await liveWrite(trx, name, 'shared');
          // fences the live leader: its batch in flight is undone, and it reloads the dead letters
          await trx('aivis_checkpoints')
            .where('name', name)
            .update({ generation: trx.raw('generation + 1') });
          const now = await letters(trx);
          if (now.map((r) => r.event_id).join() !== rows.map((r) => r.event_id).join()) throw new LettersMoved();
          await trx(DEAD_LETTERS)
            .where('projection', name)
            .whereIn(
              'event_id',
              rows.map((r) => r.event_id),
            )
            .delete();
          const lane: Lane = { dead: new Set(), letters: DEAD_LETTERS, searchPath: null, rebuilding: false };
          await this.applyItems(trx, items, lane, true);
          const n = await trx(DEAD_LETTERS)
            .where('projection', name)
            .whereIn(
              'event_id',
              rows.map((r) => r.event_id),
            )
            .count<{ n: string }[]>('* as n');
          return Number(n[0].n);
        });
        this.log.info({ retried: rows.length, set_aside: left }, 'set-aside events tried again');
        return { retried: rows.length, applied: rows.length - left, set_aside: left };
      } catch (err) {
        const code = (err as { code?: string }).code;
        if (!(err instanceof LettersMoved || code === '40P01') || attempt >= 5) throw err;
      }
    }
  }

  /**
   * Resolves true once the projection has passed `pos` (on this instance or, if another leads, in the database: polled,
   * at first every 10 ms, then less often, see remotePollMs).
   */
  async waitFor(pos: Position, timeoutMs: number): Promise<boolean> {
    if (comparePositions(this.position, pos) >= 0) return true;
    // stopped on an event it cannot apply: it will not get there, and the caller need not wait to learn so
    if (this.failed) return false;
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
    for (let polls = 0; Date.now() < deadline; polls++) {
      const row = await this.db('aivis_checkpoints').where('name', this.projection.name).first('position', 'status');
      if (row && comparePositions(positionFromString(row.position), pos) >= 0) return true;
      if (row?.status === 'failed') return false;
      await new Promise((r) => setTimeout(r, remotePollMs(polls)));
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

/**
 * How long a wait on another instance's checkpoint sleeps after its `polls`-th read: 10, 10, 20, 20, 40, 40, 80, 80,
 * then 100 ms. A leader's checkpoint moves within tens of milliseconds of an append; a wait that lasts (a lagging or
 * stopped leader, up to a write's 5 s) reads it about 55 times.
 */
function remotePollMs(polls: number): number {
  return Math.min(100, 10 * 2 ** Math.floor(polls / 2));
}
