import { knownEventTypes } from '../domain/events';
import { comparePositions, type EventStore, type Position, type RecordedEvent, type ScannedBatch } from './port';

/** What a reader wants from the log: the types it handles ('all' or a list), and stream prefixes per type. */
export interface FeedInterest {
  handles: readonly string[] | 'all';
  streamPrefixes?: Readonly<Partial<Record<string, string>>>;
}

export interface FeedReader {
  /**
   * Like EventStore.readAll: events after `after` in global order (at most maxCount), never skipping a late commit.
   * `idle`: a poll that nothing prompted (no append announced, nobody waiting), which may be answered "nothing new"
   * from another reader's empty read of the last QUIET_MS.
   */
  read(after: Position, maxCount: number, idle?: boolean): Promise<ScannedBatch>;
  close(): void;
}

const KNOWN = knownEventTypes();

/**
 * One catch-up read of the store for a reader's interest: by type where the store can filter (payloads of the other
 * types neither sent nor parsed; the scan still moves past them), every event otherwise.
 */
export async function readInterest(store: EventStore, after: Position, maxCount: number, interest: FeedInterest): Promise<ScannedBatch> {
  if (interest.handles !== 'all' && store.readAllOfTypes) {
    return store.readAllOfTypes(after, maxCount, interest.handles, KNOWN, (interest.streamPrefixes ?? {}) as Record<string, string>);
  }
  const events = await store.readAll(after, maxCount);
  return { events, scanned: events.length, scannedTo: events.length ? events[events.length - 1].position : after };
}
/** a reader that has not read for this long (it lost its lead, say) no longer holds the stretch back */
const IDLE_READER_MS = 10_000;
/**
 * How long an empty read of the log answers the idle polls of the process's other readers. An idle server's 26
 * projections each polled every 500 ms out of step: 52 reads of the log a second, each with its horizon check, for
 * nothing (the largest share of an idle server's statements). An append of this process or another one (NOTIFY)
 * wakes the readers for a read of their own; what an idle poll exists for (a commit nobody announced, or one hidden
 * behind an open transaction when its wake-up came) is seen at most this much later.
 */
export const QUIET_MS = 400;

/**
 * One catch-up read of the log serves every live projection of this process. The projections of an instance are
 * woken by the same append and read the same events: each read its batch on its own (and had the same payloads sent
 * and parsed again) until this. The feed keeps the latest stretch of the log it read, (start, end], with the payloads
 * any of its readers handles; a reader whose position is inside the stretch is served from it, a reader at its end
 * extends it (one read in flight, shared by whoever arrives meanwhile), and a reader behind it (it fell more than
 * `maxEvents` behind, or was away) reads the store itself.
 *
 * Serving from memory keeps the store's guarantee: a read returns every event committed below the horizon at the time
 * it ran, so a stretch read earlier is complete up to its end, and a later read continues from there.
 */
export class SharedFeed {
  private readonly readers = new Set<{ interest: FeedInterest; at: Position | null; lastRead: number }>();
  private union: FeedInterest | null = null;
  /** the stretch held: events with payloads in (start, end], in order */
  private start: Position | null = null;
  private end: Position | null = null;
  private events: RecordedEvent[] = [];
  private extending: { from: Position; generation: number; done: Promise<void> } | null = null;
  /** the read under way that starts a stretch at `after`, which readers arriving from the same place share */
  private starting: { after: Position; generation: number; done: Promise<ScannedBatch> } | null = null;
  /**
   * Bumped when readers come or go: a read asked for before (with the payloads the readers of then wanted) may still be
   * under way, and must not become the stretch, or a reader that came meanwhile would be served events without its
   * payloads and move past them (a projection that took its lease while another one read skipped its events)
   */
  private generation = 0;
  /** a read found nothing committed after `after` below the horizon, at `until - QUIET_MS` (idle polls until `until`) */
  private quiet: { after: Position; until: number } | null = null;
  /** the idle poll under way, which the idle polls of readers at or past `after` wait for */
  private probe: { after: Position; done: Promise<ScannedBatch> } | null = null;

  constructor(
    private readonly store: EventStore,
    private readonly options: { maxEvents?: number; fetchSize?: number } = {},
  ) {}

  /** events per read of the stretch (a reader may take fewer) */
  private get fetchSize(): number {
    return this.options.fetchSize ?? 1000;
  }

  reader(interest: FeedInterest): FeedReader {
    const r = { interest, at: null as Position | null, lastRead: 0 };
    this.readers.add(r);
    this.reset();
    return {
      read: (after, maxCount, idle = false) => {
        r.at = after;
        r.lastRead = Date.now();
        return idle ? this.idleRead(after, maxCount, interest) : this.read(after, maxCount, interest);
      },
      close: () => {
        this.readers.delete(r);
        this.reset();
      },
    };
  }

  /**
   * An idle poll: "nothing new" when a read found nothing after a place at or before `after` in the last QUIET_MS, or
   * when the idle poll under way from such a place finds nothing; else a read, which the idle polls arriving meanwhile
   * wait for (the readers' polls fall in step: without it, each of them read as the window ran out).
   */
  private async idleRead(after: Position, maxCount: number, own: FeedInterest): Promise<ScannedBatch> {
    const nothing = { events: [], scanned: 0, scannedTo: after };
    const q = this.quiet;
    if (q && q.until > Date.now() && comparePositions(after, q.after) >= 0) return nothing;
    const p = this.probe;
    if (p && comparePositions(after, p.after) >= 0) {
      if ((await p.done.catch(() => null))?.scanned === 0) return nothing;
      return this.read(after, maxCount, own);
    }
    const done = this.read(after, maxCount, own);
    const probe = { after, done };
    this.probe = probe;
    try {
      return await done;
    } finally {
      if (this.probe === probe) this.probe = null;
    }
  }

  /** Readers came or went: the payloads wanted may differ, so the stretch starts over. */
  private reset(): void {
    this.generation++;
    this.union = null;
    this.start = this.end = null;
    this.events = [];
  }

  /** Every type some reader handles; a type's prefix only when every reader of that type has the same one. */
  private interests(): FeedInterest {
    if (this.union) return this.union;
    const types = new Set<string>();
    const prefixes = new Map<string, string | null>();
    let all = false;
    for (const { interest } of this.readers) {
      if (interest.handles === 'all') {
        all = true;
        continue;
      }
      for (const t of interest.handles) {
        types.add(t);
        const p = interest.streamPrefixes?.[t] ?? null;
        prefixes.set(t, prefixes.has(t) && prefixes.get(t) !== p ? null : p);
      }
    }
    const kept: Record<string, string> = {};
    if (!all) for (const [t, p] of prefixes) if (p !== null) kept[t] = p;
    this.union = { handles: all ? 'all' : [...types], streamPrefixes: kept };
    return this.union;
  }

  /** A read of the store for what every reader wants, or for what one reader wants. */
  private async fetch(after: Position, maxCount: number, own?: FeedInterest): Promise<ScannedBatch> {
    const asked = Date.now();
    const b = await readInterest(this.store, after, maxCount, own ?? this.interests());
    // scanned counts every row read, of any type: none means nothing after `after` below the horizon when asked
    if (b.scanned > 0) this.quiet = null;
    else if (!this.quiet || comparePositions(after, this.quiet.after) >= 0) this.quiet = { after, until: asked + QUIET_MS };
    return b;
  }

  private async read(after: Position, maxCount: number, own: FeedInterest): Promise<ScannedBatch> {
    for (;;) {
      const { start, end } = this;
      if (start === null || end === null || comparePositions(after, end) > 0) {
        // nothing held, or this reader is ahead of it: the stretch starts here, with one read for the readers that
        // arrive from the same place meanwhile (an instance's runners begin together, on a log with nothing new)
        const generation = this.generation;
        const s = this.starting;
        if (s && s.generation === generation && comparePositions(s.after, after) === 0) return cut(await s.done, maxCount);
        const starting = { after, generation, done: this.fetch(after, Math.max(maxCount, this.fetchSize)) };
        this.starting = starting;
        let b: ScannedBatch;
        try {
          b = await starting.done;
        } finally {
          if (this.starting === starting) this.starting = null;
        }
        if (b.scanned > 0 && generation === this.generation && (this.end === null || comparePositions(after, this.end) > 0)) {
          this.start = after;
          this.end = b.scannedTo;
          this.events = b.events.slice();
        }
        return cut(b, maxCount);
      }
      // behind the stretch: this reader reads on its own until it reaches it
      if (comparePositions(after, start) < 0) return this.fetch(after, maxCount, own);
      if (comparePositions(after, end) < 0) return this.serve(after, maxCount);
      // at the end: extend the stretch (once for everyone waiting here), then serve from it
      const generation = this.generation;
      if (this.extending && (this.extending.generation !== generation || comparePositions(this.extending.from, end) !== 0)) {
        // a read from an older end, or for the readers of before (the stretch started over meanwhile): let it settle,
        // then look again
        await this.extending.done;
        continue;
      }
      if (!this.extending) {
        const from = end;
        const done = this.fetch(from, Math.max(maxCount, this.fetchSize))
          .then((b) => {
            if (b.scanned > 0 && generation === this.generation && this.end !== null && comparePositions(this.end, from) === 0) {
              for (const e of b.events) this.events.push(e);
              this.end = b.scannedTo;
              this.trim();
            }
          })
          .finally(() => {
            this.extending = null;
          });
        this.extending = { from, generation, done };
      }
      await this.extending.done;
      // readers came or went meanwhile: what was read was not kept
      if (generation !== this.generation) continue;
      // nothing new was committed below the horizon
      if (this.end !== null && comparePositions(this.end, end) === 0) return { events: [], scanned: 0, scannedTo: after };
    }
  }

  /** The held events after `after`, at most maxCount; the checkpoint may move to the end when all were taken. */
  private serve(after: Position, maxCount: number): ScannedBatch {
    const ev = this.events;
    let lo = 0;
    let hi = ev.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (comparePositions(ev[mid].position, after) <= 0) lo = mid + 1;
      else hi = mid;
    }
    const events = ev.slice(lo, lo + maxCount);
    const all = lo + maxCount >= ev.length;
    // (after, end] is not empty: at least one event was scanned even when none of them has a payload for anyone
    return { events, scanned: Math.max(events.length, 1), scannedTo: all ? this.end! : events[events.length - 1].position };
  }

  /** Drops what every active reader has passed, and the oldest events beyond maxEvents. */
  private trim(): void {
    const now = Date.now();
    let low: Position | null = null;
    for (const r of this.readers) {
      if (now - r.lastRead > IDLE_READER_MS || r.at === null) continue;
      if (low === null || comparePositions(r.at, low) < 0) low = r.at;
    }
    let drop = 0;
    if (low !== null) while (drop < this.events.length && comparePositions(this.events[drop].position, low) <= 0) drop++;
    const max = this.options.maxEvents ?? 5_000;
    if (this.events.length - drop > max) drop = this.events.length - max;
    if (drop === 0) return;
    const lastDropped = this.events[drop - 1].position;
    this.events = this.events.slice(drop);
    if (this.start === null || comparePositions(lastDropped, this.start) > 0) this.start = lastDropped;
    if (low !== null && comparePositions(low, this.start) > 0 && comparePositions(low, this.end!) <= 0) this.start = low;
  }
}

/** A fetched batch cut to maxCount events (the stretch keeps all of them). */
function cut(b: ScannedBatch, maxCount: number): ScannedBatch {
  if (b.events.length <= maxCount) return b;
  const events = b.events.slice(0, maxCount);
  return { events, scanned: events.length, scannedTo: events[events.length - 1].position };
}
