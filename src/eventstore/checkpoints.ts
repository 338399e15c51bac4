import type { Knex } from 'knex';
import { prepared } from '../db';
import { DEAD_LETTERS } from './dead-letters';

/** how long a checkpoint write extends its runner's lease (by default: RuntimeOptions.projectionLeaseS) */
export const LEASE_SECONDS = 15;

/** A checkpoint to move: `name`'s, to `position`, if `owner` still leads `generation`. */
export interface CheckpointMove {
  name: string;
  owner: string;
  generation: bigint;
  position: string;
}

/**
 * Moves checkpoints on `conn` (a runner's batch transaction, or the database) in one statement, each only where its
 * owner still leads its generation, and renews those leases; returns the names moved. Its commit need not wait for its
 * WAL flush (set with it, no round trip of its own): a crash loses the last moves, and the runners read those events
 * again. `first`: a one-row query the statement runs before it moves anything (a batch's live-write lock), in the same
 * round trip.
 */
export async function moveCheckpoints(
  conn: Knex,
  moves: readonly CheckpointMove[],
  first?: { sql: string; bindings: readonly Knex.RawBinding[] },
  leaseSeconds = LEASE_SECONDS,
): Promise<Set<string>> {
  const { name, text } = moveStatement(first?.sql);
  const rows = await prepared<{ name: string }>(conn, name, text, [
    leaseSeconds,
    ...(first?.bindings ?? []),
    moves.map((m) => m.name),
    moves.map((m) => m.owner),
    moves.map((m) => m.generation.toString()),
    moves.map((m) => m.position),
  ]);
  return new Set(rows.map((row) => row.name));
}

/** The move's statement for each `first` (a handful: the live-write locks), named once: the moves go in as arrays. */
const moveStatements = new Map<string, { name: string; text: string }>();
function moveStatement(firstSql = ''): { name: string; text: string } {
  let st = moveStatements.get(firstSql);
  if (!st) {
    let n = 1;
    const f = firstSql.replace(/\?/g, () => `$${++n}`);
    const a = [++n, ++n, ++n, ++n].map((i) => `$${i}`);
    st = {
      name: `aivis_checkpoints_move_${moveStatements.size}`,
      text: `update aivis_checkpoints as c set position = v.position, lease_until = now() + make_interval(secs => $1), updated_at = now()
      from ${f ? `(${f}) as f, ` : ''}unnest(${a[0]}::text[], ${a[1]}::text[], ${a[2]}::bigint[], ${a[3]}::text[]) as v(name, owner, generation, position)
      where c.name = v.name and c.lease_owner = v.owner and c.generation = v.generation
      returning c.name, set_config('synchronous_commit', 'off', true)`,
    };
    moveStatements.set(firstSql, st);
  }
  return st;
}

/** A lease taken or renewed: the checkpoint as it then stands. */
export interface LeaseTaken {
  position: string;
  generation: string;
  status: string;
  error: string | null;
}

/**
 * What the runners of a process ask in one turn of the event loop, by `name owner`, sent in one statement at the turn's
 * end (setImmediate: the runners an append or a start woke together ask in the same turn); `send` answers each pair.
 */
class PerTurn<T> {
  private asked = new Map<string, { name: string; owner: string; waiting: { resolve(r: T): void; reject(e: unknown): void }[] }>();

  constructor(private readonly send: (asked: { name: string; owner: string }[]) => Promise<(name: string, owner: string) => T>) {}

  ask(name: string, owner: string): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      if (this.asked.size === 0) setImmediate(() => void this.flush());
      const key = `${name} ${owner}`;
      const entry = this.asked.get(key) ?? { name, owner, waiting: [] };
      entry.waiting.push({ resolve, reject });
      this.asked.set(key, entry);
    });
  }

  private async flush(): Promise<void> {
    const batch = [...this.asked.values()];
    this.asked = new Map();
    try {
      const answer = await this.send(batch);
      for (const b of batch) for (const w of b.waiting) w.resolve(answer(b.name, b.owner));
    } catch (err) {
      for (const b of batch) for (const w of b.waiting) w.reject(err);
    }
  }
}

/** A checkpoint row's fence: the generation and the instance leading it, and whether its lease is free to take. */
interface Fence {
  generation: string;
  leaseOwner: string | null;
  /** nobody holds the lease, or it has lapsed (as the database's clock said at the read) */
  free: boolean;
}

/**
 * How long a deferred move (a runner that had nothing to apply) may wait to go with others: the runner's own position
 * moves at once (this instance's waiters see it), the stored one within this (another instance's waiters, which poll
 * it, and a restart, which reads the few events again and applies none of them).
 */
export const DEFER_MS = 40;

interface Deferred {
  move: CheckpointMove;
  /** the move found the runner no longer leading (a rebuild's swap, a retry, another instance's lease) */
  fenced(): void;
}

/**
 * One process's runners' shared access to their checkpoint rows (each runner alone gets its own).
 *
 * Deferred moves: an append wakes every projection of the instance; most have nothing to apply and only move their
 * checkpoint past it. Each did that in its own statement and commit (about 20 per append), then one statement per turn
 * of the event loop (still 18,000 of the 235,000 statements of a test run); now the moves of DEFER_MS go together, the
 * latest per runner. Each is still fenced on its own row (owner and generation) and renews its lease; one that finds its
 * runner fenced tells it, and the runner reloads at its next step.
 */
export class CheckpointWrites {
  private deferred = new Map<string, Deferred>();
  private deferTimer: ReturnType<typeof setTimeout> | null = null;
  /** deferred moves sent and not yet answered, by name */
  private sending = new Map<string, Promise<void>>();
  /** every checkpoint's fence, as read at `at` (ms), shared by the runners' idle checks */
  private fences: { at: number; rows: Promise<Map<string, Fence>> } | null = null;

  /** lease takes and renewals of this turn, sent in one statement at its end */
  private readonly takes = new PerTurn<LeaseTaken | null>((asked) => this.sendTakes(asked));
  /** set-aside reads of this turn (runners taking the lead together), likewise */
  private readonly deadReads = new PerTurn<string[]>((asked) => this.sendDeadReads(asked));
  /** lease releases of this turn (runners stopping together), likewise */
  private readonly releases = new PerTurn<void>((asked) => this.sendReleases(asked));

  /** `leaseSeconds`: how long a take, a renewal or a move holds the lease (a dead instance's runners are taken over after it) */
  constructor(
    private readonly db: Knex,
    readonly leaseSeconds = LEASE_SECONDS,
  ) {}

  /**
   * Takes or renews `name`'s lease for `owner` if nobody holds it, it has lapsed or it is `owner`'s: the checkpoint as
   * it then stands, or null when another holds it. The takes of one turn go in one statement: an instance's runners
   * start together and renew together.
   */
  take(name: string, owner: string): Promise<LeaseTaken | null> {
    return this.takes.ask(name, owner);
  }

  /**
   * The websites `name`'s projection has set aside, as a runner taking the lead reads them; the reads of one turn in one
   * statement. Not read with the lease: an update that waited for a retry's lock on the row sees its new generation, but
   * its subqueries would still see the dead letters as they were before the retry.
   */
  setAside(name: string): Promise<string[]> {
    return this.deadReads.ask(name, '');
  }

  private async sendDeadReads(asked: { name: string }[]): Promise<(name: string) => string[]> {
    const r = await this.db.raw(
      `select projection, array_agg(distinct website_id) as dead from ${DEAD_LETTERS} where projection = any(?) group by projection`,
      [asked.map((a) => a.name)],
    );
    const dead = new Map((r.rows as { projection: string; dead: string[] }[]).map((row) => [row.projection, row.dead]));
    return (name) => dead.get(name) ?? [];
  }

  /** Gives `name`'s lease up if `owner` holds it; the releases of one turn (an instance stopping) in one statement. */
  release(name: string, owner: string): Promise<void> {
    return this.releases.ask(name, owner);
  }

  private async sendTakes(asked: { name: string; owner: string }[]): Promise<(name: string, owner: string) => LeaseTaken | null> {
    const r = await this.db.raw(
      `update aivis_checkpoints as c set lease_owner = v.owner, lease_until = now() + make_interval(secs => ?)
        from (values ${asked.map(() => '(?, ?)').join(', ')}) as v(name, owner)
        where c.name = v.name and (c.lease_owner is null or c.lease_owner = v.owner or c.lease_until < now())
        returning c.name, c.lease_owner, c.position, c.generation::text as generation, c.status, c.error`,
      [this.leaseSeconds, ...asked.flatMap((a) => [a.name, a.owner])],
    );
    const rows = r.rows as (LeaseTaken & { name: string; lease_owner: string })[];
    // two owners of one name in a batch: the row went to one of them, which it names
    return (name, owner) => {
      const row = rows.find((x) => x.name === name && x.lease_owner === owner);
      return row ? { position: row.position, generation: row.generation, status: row.status, error: row.error } : null;
    };
  }

  private async sendReleases(asked: { name: string; owner: string }[]): Promise<() => void> {
    await this.db.raw(
      `update aivis_checkpoints as c set lease_owner = null, lease_until = null
        from (values ${asked.map(() => '(?, ?)').join(', ')}) as v(name, owner)
        where c.name = v.name and c.lease_owner = v.owner`,
      asked.flatMap((a) => [a.name, a.owner]),
    );
    return () => undefined;
  }

  /**
   * Whether `owner` still leads `generation` of `name`, from one read of every checkpoint's fence that the process's
   * runners share: read again when older than `maxAgeMs`, or not newer than `since` (the caller's own lease, which an
   * older read would not show). An idle runner looks every poll interval; each runner did so with its own query (two
   * dozen a second per instance at rest).
   */
  async stillLeads(name: string, owner: string, generation: bigint, maxAgeMs: number, since: number): Promise<boolean> {
    const fence = (await this.readFences(maxAgeMs, since)).get(name);
    return fence !== undefined && fence.generation === generation.toString() && fence.leaseOwner === owner;
  }

  /**
   * Whether `owner` may try to take `name`'s lease: nobody holds it, it has lapsed, it is `owner`'s already, or the row
   * is not there yet; from the same shared read, at most `maxAgeMs` old. A runner that does not lead asks this before
   * its conditional update (every 2 s, each follower of an instance sent one that changed nothing: about 12 statements
   * a second for two instances' 30 projections, at rest as under load).
   */
  async mayTake(name: string, owner: string, maxAgeMs: number): Promise<boolean> {
    const fence = (await this.readFences(maxAgeMs, 0)).get(name);
    return fence === undefined || fence.free || fence.leaseOwner === owner;
  }

  private readFences(maxAgeMs: number, since: number): Promise<Map<string, Fence>> {
    const now = Date.now();
    if (!this.fences || now - this.fences.at > maxAgeMs || this.fences.at <= since) {
      const read = this.db
        .raw(
          `select name, generation, lease_owner, (lease_owner is null or lease_until is null or lease_until < now()) as free from aivis_checkpoints`,
        )
        .then((r: { rows: { name: string; generation: string | number; lease_owner: string | null; free: boolean }[] }) => {
          return new Map(r.rows.map((row) => [row.name, { generation: String(row.generation), leaseOwner: row.lease_owner, free: row.free }]));
        });
      const fences = { at: now, rows: read };
      this.fences = fences;
      read.catch(() => {
        if (this.fences === fences) this.fences = null;
      });
    }
    return this.fences.rows;
  }

  /**
   * Moves `move.name`'s checkpoint within DEFER_MS, in one statement with the others deferred meanwhile; a later move
   * of the same name replaces it; `fenced` is called if the move finds its runner no longer leading.
   */
  defer(move: CheckpointMove, fenced: () => void): void {
    this.deferred.set(move.name, { move, fenced });
    this.deferTimer ??= setTimeout(() => void this.sendDeferred(), DEFER_MS);
  }

  /**
   * Before a runner writes its checkpoint in a batch's transaction: its deferred move dropped if not sent (the batch
   * writes a later position), awaited if sent (it must not land after the batch's and move the checkpoint back).
   */
  async yieldTo(name: string): Promise<void> {
    this.deferred.delete(name);
    await this.sending.get(name);
  }

  /** Sends the deferred moves now and waits for `name`'s (before its lease is read or released, and at a stop). */
  async settle(name: string): Promise<void> {
    if (this.deferred.size > 0) await this.sendDeferred();
    await this.sending.get(name);
  }

  private sendDeferred(): Promise<void> {
    if (this.deferTimer) clearTimeout(this.deferTimer);
    this.deferTimer = null;
    const list = [...this.deferred.values()];
    this.deferred.clear();
    if (list.length === 0) return Promise.resolve();
    const sent: Promise<void> = moveCheckpoints(
      this.db,
      list.map((d) => d.move),
      undefined,
      this.leaseSeconds,
    )
      .then(
        (moved) => {
          for (const d of list) if (!moved.has(d.move.name)) d.fenced();
        },
        // not stored: the runners' positions are ahead of their checkpoints until their next move, which is harmless
        // (a restart reads those events again and applies none)
        () => undefined,
      )
      .finally(() => {
        for (const d of list) if (this.sending.get(d.move.name) === sent) this.sending.delete(d.move.name);
      });
    for (const d of list) this.sending.set(d.move.name, sent);
    return sent;
  }
}
