import type { Bus, BusMessage, ConsumeOptions, Consumer } from './port';

/** How often a message has been delivered; buses pass it to handlers as a second argument. */
export interface Delivery {
  /** 1 on the first delivery */
  count: number;
  /** deliveries after which a failing message is given up */
  maxDeliver: number;
}
export type DeliveryHandler = (msg: BusMessage, delivery: Delivery) => Promise<void>;

export const DEFAULT_CONCURRENCY = 1;
export const DEFAULT_MAX_DELIVER = 5;
export const DEFAULT_BACKOFF_MS: readonly number[] = [250, 1000, 5000, 15000];

/** Redelivery delay after the delivery numbered `count` failed. */
export const backoffFor = (backoffMs: readonly number[], count: number): number =>
  backoffMs.length === 0 ? 0 : backoffMs[Math.min(Math.max(count, 1), backoffMs.length) - 1];

interface MinimalLogger {
  error(obj: object, msg?: string): void;
}

export interface MemoryBusOptions {
  /** ids remembered to drop duplicates (default 10 minutes, like the JetStream duplicate window) */
  duplicateWindowMs?: number;
  /** a message is kept at least this long for durables that subscribe later (default 10 minutes) */
  retainMs?: number;
  logger?: MinimalLogger;
}

interface Stored {
  seq: number;
  msg: BusMessage;
  at: number;
}

interface Instance {
  handler: DeliveryHandler;
  concurrency: number;
  maxDeliver: number;
  backoffMs: readonly number[];
  inFlight: Set<Promise<void>>;
  stopping: boolean;
}

interface Durable {
  name: string;
  types: Set<string>;
  /** next sequence not yet considered */
  cursor: number;
  /** failed messages whose backoff has elapsed, delivered before new ones */
  ready: Stored[];
  /** deliveries so far of messages not yet settled */
  counts: Map<number, number>;
  timers: Set<NodeJS.Timeout>;
  instances: Instance[];
  next: number;
}

/**
 * In-process bus for the embedded single-process mode, with the JetStream semantics the workers rely on:
 * duplicate ids dropped within a window, one delivery per durable shared by its consumers, retries with
 * backoff up to maxDeliver, bounded concurrency. Messages live in memory: a process restart loses undelivered ones.
 */
export function createMemoryBus(options: MemoryBusOptions = {}): Bus {
  const duplicateWindowMs = options.duplicateWindowMs ?? 10 * 60_000;
  const retainMs = options.retainMs ?? 10 * 60_000;
  const logger = options.logger;
  const seen = new Map<string, number>();
  const log: Stored[] = [];
  let nextSeq = 0;
  const durables = new Map<string, Durable>();
  let closed = false;

  const storedAt = (seq: number): Stored | undefined => {
    const first = log[0];
    return first ? log[seq - first.seq] : undefined;
  };

  function trim(now: number) {
    for (const [id, at] of seen) {
      if (now - at < duplicateWindowMs) break;
      seen.delete(id);
    }
    let floor = nextSeq;
    for (const d of durables.values()) floor = Math.min(floor, d.cursor);
    let drop = 0;
    while (drop < log.length && log[drop].seq < floor && now - log[drop].at >= retainMs) drop++;
    if (drop > 0) log.splice(0, drop);
  }

  function take(d: Durable): Stored | undefined {
    const retry = d.ready.shift();
    if (retry) return retry;
    while (d.cursor < nextSeq) {
      const s = storedAt(d.cursor);
      d.cursor++;
      if (s && d.types.has(s.msg.type)) return s;
    }
    return undefined;
  }

  function freeInstance(d: Durable): Instance | undefined {
    for (let i = 0; i < d.instances.length; i++) {
      const inst = d.instances[(d.next + i) % d.instances.length];
      if (!inst.stopping && inst.inFlight.size < inst.concurrency) {
        d.next = (d.next + i + 1) % d.instances.length;
        return inst;
      }
    }
    return undefined;
  }

  function pump(d: Durable) {
    if (closed) return;
    for (;;) {
      const inst = freeInstance(d);
      if (!inst) return;
      const s = take(d);
      if (!s) return;
      run(d, inst, s);
    }
  }

  function run(d: Durable, inst: Instance, s: Stored) {
    const count = (d.counts.get(s.seq) ?? 0) + 1;
    d.counts.set(s.seq, count);
    const p = (async () => {
      await null; // never run a handler inside publish() or pump()
      try {
        await inst.handler(s.msg, { count, maxDeliver: inst.maxDeliver });
        d.counts.delete(s.seq);
      } catch (err) {
        if (count >= inst.maxDeliver) {
          d.counts.delete(s.seq);
          logger?.error(
            { err, durable: d.name, event_id: s.msg.id, type: s.msg.type, delivery: count },
            'bus: message given up after max deliveries',
          );
          return;
        }
        const timer = setTimeout(
          () => {
            d.timers.delete(timer);
            d.ready.push(s);
            pump(d);
          },
          backoffFor(inst.backoffMs, count),
        );
        d.timers.add(timer);
      }
    })().finally(() => {
      inst.inFlight.delete(p);
      pump(d);
    });
    inst.inFlight.add(p);
  }

  return {
    name: 'memory',

    async publish(messages: BusMessage[]): Promise<void> {
      if (closed) throw new Error('bus is closed');
      const now = Date.now();
      trim(now);
      for (const msg of messages) {
        if (seen.has(msg.id)) continue;
        seen.set(msg.id, now);
        log.push({ seq: nextSeq++, msg, at: now });
      }
      for (const d of durables.values()) pump(d);
    },

    async consume(opts: ConsumeOptions): Promise<Consumer> {
      if (closed) throw new Error('bus is closed');
      let d = durables.get(opts.durable);
      if (!d) {
        const first = log[0];
        d = {
          name: opts.durable,
          types: new Set(opts.types),
          cursor: first ? first.seq : nextSeq,
          ready: [],
          counts: new Map(),
          timers: new Set(),
          instances: [],
          next: 0,
        };
        durables.set(opts.durable, d);
      }
      // like a JetStream consumer update: the latest subscriber's filter applies to the durable
      d.types = new Set(opts.types);
      const inst: Instance = {
        handler: opts.handler as DeliveryHandler,
        concurrency: Math.max(1, opts.concurrency ?? DEFAULT_CONCURRENCY),
        maxDeliver: Math.max(1, opts.maxDeliver ?? DEFAULT_MAX_DELIVER),
        backoffMs: opts.backoffMs ?? DEFAULT_BACKOFF_MS,
        inFlight: new Set(),
        stopping: false,
      };
      d.instances.push(inst);
      const durable = d;
      pump(durable);
      return {
        async stop() {
          if (!inst.stopping) {
            inst.stopping = true;
            durable.instances = durable.instances.filter((i) => i !== inst);
            durable.next = 0;
          }
          while (inst.inFlight.size > 0) await Promise.allSettled([...inst.inFlight]);
        },
      };
    },

    async backlog(durable: string): Promise<number> {
      const d = durables.get(durable);
      if (!d) return 0;
      let waiting = 0;
      for (let seq = d.cursor; seq < nextSeq; seq++) {
        const s = storedAt(seq);
        if (s && d.types.has(s.msg.type)) waiting++;
      }
      // counts: delivered and not settled (in flight, waiting for their backoff, or ready to go again)
      return waiting + d.counts.size;
    },

    async ping(): Promise<void> {
      if (closed) throw new Error('bus is closed');
    },

    async close(): Promise<void> {
      if (closed) return;
      const all = [...durables.values()].flatMap((d) => d.instances);
      for (const inst of all) inst.stopping = true;
      while (all.some((i) => i.inFlight.size > 0)) await Promise.allSettled(all.flatMap((i) => [...i.inFlight]));
      closed = true;
      for (const d of durables.values()) for (const t of d.timers) clearTimeout(t);
      durables.clear();
    },
  };
}
