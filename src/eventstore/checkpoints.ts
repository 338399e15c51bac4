import type { Knex } from 'knex';

/** how long a checkpoint write extends its runner's lease */
export const LEASE_SECONDS = 15;

/** A checkpoint to move: `name`'s, to `position`, if `owner` still leads `generation`. */
export interface CheckpointMove {
  name: string;
  owner: string;
  generation: bigint;
  position: string;
}

interface Move extends CheckpointMove {
  settle(moved: boolean): void;
  fail(err: unknown): void;
}

/**
 * Moves checkpoints on `conn` (a runner's batch transaction, or the database) in one statement, each only where its
 * owner still leads its generation, and renews those leases; returns the names moved. Its commit need not wait for its
 * WAL flush (set with it, no round trip of its own): a crash loses the last moves, and the runners read those events
 * again.
 */
export async function moveCheckpoints(conn: Knex, moves: readonly CheckpointMove[]): Promise<Set<string>> {
  const r = await conn.raw(
    `update aivis_checkpoints as c set position = v.position, lease_until = now() + interval '${LEASE_SECONDS} seconds', updated_at = now()
      from (values ${moves.map(() => '(?, ?, ?::bigint, ?)').join(', ')}) as v(name, owner, generation, position)
      where c.name = v.name and c.lease_owner = v.owner and c.generation = v.generation
      returning c.name, set_config('synchronous_commit', 'off', true)`,
    moves.flatMap((m) => [m.name, m.owner, m.generation.toString(), m.position]),
  );
  return new Set((r.rows as { name: string }[]).map((row) => row.name));
}

/** A checkpoint row's fence: the generation and the instance leading it. */
interface Fence {
  generation: string;
  leaseOwner: string | null;
}

/**
 * One process's runners' shared access to their checkpoint rows (each runner alone gets its own).
 *
 * Moves: the checkpoint moves of the runners whose batch applied nothing (every event in it was another
 * projection's), written in one statement. An append wakes every projection of the instance; most of them have nothing
 * to apply and only move their checkpoint past it. Each did that in its own statement (about 20 round trips and
 * commits per append, half of the statements a test run sent); the moves that arrive in the same turn of the event loop
 * now share one. Each move is still fenced on its own row (owner and generation), and it renews its lease as before.
 */
export class CheckpointWrites {
  private pending = new Map<string, Move>();
  private scheduled = false;
  /** every checkpoint's fence, as read at `at` (ms), shared by the runners' idle checks */
  private fences: { at: number; rows: Promise<Map<string, Fence>> } | null = null;

  constructor(private readonly db: Knex) {}

  /** Moves `name`'s checkpoint to `position` if `owner` still leads `generation`; false when fenced. */
  move(name: string, owner: string, generation: bigint, position: string): Promise<boolean> {
    return new Promise((settle, fail) => {
      // one runner per projection in a process, and a runner waits for its move before the next: a second move of the
      // same name in one turn would be another process's runner sharing this writer, which none does; keep it apart
      if (this.pending.has(name)) void this.flush();
      this.pending.set(name, { name, owner, generation, position, settle, fail });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => void this.flush());
      }
    });
  }

  /**
   * Whether `owner` still leads `generation` of `name`, from one read of every checkpoint's fence that the process's
   * runners share: read again when older than `maxAgeMs`, or not newer than `since` (the caller's own lease, which an
   * older read would not show). An idle runner looks every poll interval; each runner did so with its own query (two
   * dozen a second per instance at rest).
   */
  async stillLeads(name: string, owner: string, generation: bigint, maxAgeMs: number, since: number): Promise<boolean> {
    const now = Date.now();
    if (!this.fences || now - this.fences.at > maxAgeMs || this.fences.at <= since) {
      const read = this.db('aivis_checkpoints')
        .select('name', 'generation', 'lease_owner')
        .then((rows: { name: string; generation: string | number; lease_owner: string | null }[]) => {
          return new Map(rows.map((r) => [r.name, { generation: String(r.generation), leaseOwner: r.lease_owner }]));
        });
      const fences = { at: now, rows: read };
      this.fences = fences;
      read.catch(() => {
        if (this.fences === fences) this.fences = null;
      });
    }
    const fence = (await this.fences.rows).get(name);
    return fence !== undefined && fence.generation === generation.toString() && fence.leaseOwner === owner;
  }

  private async flush(): Promise<void> {
    const moves = [...this.pending.values()];
    this.pending = new Map();
    this.scheduled = false;
    if (moves.length === 0) return;
    try {
      const moved = await moveCheckpoints(this.db, moves);
      for (const m of moves) m.settle(moved.has(m.name));
    } catch (err) {
      for (const m of moves) m.fail(err);
    }
  }
}
