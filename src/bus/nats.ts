import { readFileSync } from 'node:fs';
import {
  AckPolicy,
  connect,
  DeliverPolicy,
  DiscardPolicy,
  Events,
  JSONCodec,
  nanos,
  RetentionPolicy,
  StorageType,
  type ConsumerConfig,
  type ConsumerMessages,
  type JetStreamClient,
  type JetStreamManager,
  type JsMsg,
  type NatsConnection,
  type Consumer as JsConsumer,
  type StreamConfig,
} from 'nats';
import type { Logger } from '../logger';
import { z } from 'zod';
import { backoffFor, DEFAULT_BACKOFF_MS, DEFAULT_CONCURRENCY, DEFAULT_MAX_DELIVER, type DeliveryHandler } from './memory';
import type { Bus, BusMessage, ConsumeOptions, Consumer } from './port';

const NatsConfig = z.object({
  stream: z.object({
    name: z.string().min(1),
    subject_prefix: z.string().min(1),
    storage: z.enum(['file', 'memory']),
    retention: z.enum(['limits', 'interest', 'workqueue']),
    discard: z.enum(['old', 'new']),
    max_age_ms: z.number().int().nonnegative(),
    max_bytes: z.number().int(),
    duplicate_window_ms: z.number().int().positive(),
    num_replicas: z.number().int().positive(),
  }),
  consumer: z.object({
    ack_wait_ms: z.number().int().positive(),
    max_ack_pending: z.number().int().positive(),
    fetch_expires_ms: z.number().int().min(1000),
  }),
  connection: z.object({
    reconnect_time_wait_ms: z.number().int().positive(),
    reconnect_jitter_ms: z.number().int().nonnegative(),
    ping_interval_ms: z.number().int().positive(),
    max_ping_out: z.number().int().positive(),
  }),
});
export type NatsConfig = z.infer<typeof NatsConfig>;

export function loadNatsConfig(): NatsConfig {
  const raw = readFileSync(new URL('../../infra/nats.json', import.meta.url), 'utf8');
  return NatsConfig.parse(JSON.parse(raw));
}

export interface NatsBusOptions {
  /** stream name (default from infra/nats.json: AIVIS_EVENTS); tests use their own */
  stream?: string;
  /** subject prefix (default aivis.events); streams on one server must not overlap */
  subjectPrefix?: string;
  /** overrides of infra/nats.json consumer settings, for tests */
  ackWaitMs?: number;
  fetchExpiresMs?: number;
  /** how long one try waits for the connection and then for JetStream's ack (default 5000) */
  publishTimeoutMs?: number;
  /** tries per message before publish() rejects (default 3; the caller, e.g. the relay, retries the batch) */
  publishAttempts?: number;
  /** connection name shown by the server */
  name?: string;
}

const TOKEN = /^[A-Za-z0-9_-]+$/;
/** messages published without waiting for their acks */
const PUBLISH_WINDOW = 256;
const codec = JSONCodec<BusMessage>();
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

const apiErrCode = (err: unknown): number | undefined => (err as { api_error?: { err_code?: number } })?.api_error?.err_code;
const STREAM_NOT_FOUND = 10059;
const CONSUMER_NOT_FOUND = 10014;

function supportsMultipleFilters(nc: NatsConnection): boolean {
  const m = /^(\d+)\.(\d+)/.exec(nc.info?.version ?? '');
  return !!m && (Number(m[1]) > 2 || (Number(m[1]) === 2 && Number(m[2]) >= 10));
}

/** A retryable publish failure: no ack in time, or JetStream not (yet) answering after a restart. */
const isTransient = (err: unknown): boolean => {
  const code = String((err as { code?: unknown })?.code ?? '');
  return code === 'TIMEOUT' || code === '503' || code === 'DISCONNECT' || code === 'CONNECTION_REFUSED';
};

/**
 * NATS JetStream bus. One stream holds every event under `<prefix>.<EventType>`; publishing sets the
 * message id to the event id so JetStream drops republished events within the duplicate window.
 * Each consume() is a loop over a durable pull consumer shared by every process using that durable.
 */
export async function openNatsBus(url: string, logger: Logger, options: NatsBusOptions = {}): Promise<Bus> {
  const cfg = loadNatsConfig();
  const streamName = options.stream ?? cfg.stream.name;
  const prefix = options.subjectPrefix ?? cfg.stream.subject_prefix;
  const ackWaitMs = options.ackWaitMs ?? cfg.consumer.ack_wait_ms;
  const fetchExpiresMs = Math.max(1000, options.fetchExpiresMs ?? cfg.consumer.fetch_expires_ms);
  const publishAttempts = Math.max(1, options.publishAttempts ?? 3);
  const publishTimeoutMs = options.publishTimeoutMs ?? 5000;
  const log = logger.child({ component: 'bus', bus: 'nats', stream: streamName });
  const subjectOf = (type: string) => {
    if (!TOKEN.test(type)) throw new Error(`event type ${JSON.stringify(type)} is not a valid subject token`);
    return `${prefix}.${type}`;
  };

  const nc = await connect({
    servers: url,
    name: options.name ?? 'aivis',
    maxReconnectAttempts: -1,
    reconnectTimeWait: cfg.connection.reconnect_time_wait_ms,
    reconnectJitter: cfg.connection.reconnect_jitter_ms,
    pingInterval: cfg.connection.ping_interval_ms,
    maxPingOut: cfg.connection.max_ping_out,
    // no Error (a captured stack) made ahead of every request in case it times out: one per publish ack and pull
    // request was ~2% of a worker's CPU; a timeout still fails with its code (TIMEOUT), which is what the retries read
    noAsyncTraces: true,
  });
  const consumers = new Set<NatsConsumer>();
  // requests sent while disconnected are buffered but their replies are lost on reconnect: wait for the link instead
  let connected = true;
  const onReconnect = new Set<() => void>();
  const whenConnected = (timeoutMs: number): Promise<boolean> =>
    connected || nc.isClosed()
      ? Promise.resolve(connected)
      : new Promise((resolve) => {
          const done = () => {
            clearTimeout(timer);
            onReconnect.delete(done);
            resolve(connected);
          };
          const timer = setTimeout(done, timeoutMs);
          timer.unref();
          onReconnect.add(done);
        });
  const onDisconnect = new Set<() => void>();
  /** a request in flight when the connection drops never gets its reply: fail it now rather than at its timeout */
  const failOnDisconnect = <T>(p: Promise<T>): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      const fail = () => reject(Object.assign(new Error('nats disconnected'), { code: 'DISCONNECT' }));
      onDisconnect.add(fail);
      p.then(resolve, reject).finally(() => onDisconnect.delete(fail));
    });
  void (async () => {
    for await (const s of nc.status()) {
      if (s.type === Events.Disconnect) {
        connected = false;
        log.warn({ server: s.data }, 'nats disconnected');
        for (const c of consumers) c.interrupt();
        for (const f of [...onDisconnect]) f();
      } else if (s.type === Events.Reconnect) {
        connected = true;
        log.info({ server: s.data }, 'nats reconnected');
        for (const f of [...onReconnect]) f();
      } else if (s.type === Events.Error) log.error({ err: s.data }, 'nats error');
    }
  })().catch(() => {});
  void nc.closed().then(() => {
    connected = false;
    for (const f of [...onReconnect]) f();
  });

  let closed = false;
  let js: JetStreamClient;
  let jsm: JetStreamManager;
  try {
    jsm = await nc.jetstreamManager();
    js = nc.jetstream();
    await ensureStream();
  } catch (err) {
    await nc.close().catch(() => {});
    throw err;
  }

  async function ensureStream(): Promise<void> {
    const want: Partial<StreamConfig> = {
      name: streamName,
      subjects: [`${prefix}.>`],
      storage: cfg.stream.storage === 'file' ? StorageType.File : StorageType.Memory,
      retention:
        cfg.stream.retention === 'limits'
          ? RetentionPolicy.Limits
          : cfg.stream.retention === 'interest'
            ? RetentionPolicy.Interest
            : RetentionPolicy.Workqueue,
      discard: cfg.stream.discard === 'old' ? DiscardPolicy.Old : DiscardPolicy.New,
      max_age: nanos(cfg.stream.max_age_ms),
      max_bytes: cfg.stream.max_bytes,
      duplicate_window: nanos(cfg.stream.duplicate_window_ms),
      num_replicas: cfg.stream.num_replicas,
    };
    let current: StreamConfig;
    try {
      current = (await jsm.streams.info(streamName)).config;
    } catch (err) {
      if (apiErrCode(err) !== STREAM_NOT_FOUND) throw err;
      await jsm.streams.add(want);
      log.info({ subjects: want.subjects }, 'stream created');
      return;
    }
    const differs =
      current.subjects.join(' ') !== want.subjects!.join(' ') ||
      current.storage !== want.storage ||
      current.retention !== want.retention ||
      current.discard !== want.discard ||
      current.max_age !== want.max_age ||
      current.max_bytes !== want.max_bytes ||
      current.duplicate_window !== want.duplicate_window ||
      current.num_replicas !== want.num_replicas;
    if (differs) {
      const { name: _name, ...update } = want;
      await jsm.streams.update(streamName, update);
      log.info('stream updated to match infra/nats.json');
    }
  }

  async function publishOne(msg: BusMessage): Promise<void> {
    const subject = subjectOf(msg.type);
    const payload = codec.encode(msg);
    for (let attempt = 1; ; attempt++) {
      try {
        if (!(await whenConnected(publishTimeoutMs))) throw Object.assign(new Error('nats disconnected'), { code: 'DISCONNECT' });
        const ack = await failOnDisconnect(js.publish(subject, payload, { msgID: msg.id, timeout: publishTimeoutMs }));
        if (ack.duplicate) log.debug({ event_id: msg.id, seq: ack.seq }, 'duplicate publish dropped');
        return;
      } catch (err) {
        // safe to repeat: the message id makes a second copy a duplicate
        if (attempt >= publishAttempts || closed || !isTransient(err)) throw err;
        await sleep(250 * attempt);
        // no responders: the server may have come back without the stream
        if (String((err as { code?: unknown }).code) === '503') await ensureStream().catch(() => undefined);
      }
    }
  }

  class NatsConsumer implements Consumer {
    private readonly types: Set<string>;
    private readonly subjects: Set<string>;
    private readonly concurrency: number;
    private readonly maxDeliver: number;
    private readonly backoffMs: readonly number[];
    private readonly handler: DeliveryHandler;
    private readonly inFlight = new Set<Promise<void>>();
    private readonly clog: Logger;
    private stopping = false;
    private batch: ConsumerMessages | null = null;
    private pull: JsConsumer | null = null;
    private wake: (() => void) | null = null;
    private loopDone: Promise<void> = Promise.resolve();

    constructor(private readonly opts: ConsumeOptions) {
      this.types = new Set(opts.types);
      this.subjects = new Set([...this.types].map(subjectOf));
      this.concurrency = Math.max(1, opts.concurrency ?? DEFAULT_CONCURRENCY);
      this.maxDeliver = Math.max(1, opts.maxDeliver ?? DEFAULT_MAX_DELIVER);
      this.backoffMs = opts.backoffMs ?? DEFAULT_BACKOFF_MS;
      this.handler = opts.handler as DeliveryHandler;
      this.clog = log.child({ durable: opts.durable });
    }

    private config(): Partial<ConsumerConfig> {
      const subjects = [...this.types].map(subjectOf).sort();
      // servers before 2.10 take one filter: several types share the stream-wide one and are filtered here
      const filter =
        subjects.length === 1
          ? { filter_subject: subjects[0] }
          : supportsMultipleFilters(nc)
            ? { filter_subjects: subjects }
            : { filter_subject: `${prefix}.>` };
      return {
        durable_name: this.opts.durable,
        ack_policy: AckPolicy.Explicit,
        deliver_policy: DeliverPolicy.All,
        ack_wait: nanos(ackWaitMs),
        max_deliver: this.maxDeliver,
        max_ack_pending: cfg.consumer.max_ack_pending,
        ...filter,
      };
    }

    /** Creates the durable, or updates it when its settings differ (every process converges on the latest). */
    async ensure(): Promise<void> {
      const want = this.config();
      let current: ConsumerConfig;
      try {
        current = (await jsm.consumers.info(streamName, this.opts.durable)).config;
      } catch (err) {
        const code = apiErrCode(err);
        if (code === STREAM_NOT_FOUND) await ensureStream();
        else if (code !== CONSUMER_NOT_FOUND) throw err;
        await jsm.consumers.add(streamName, want);
        this.clog.info({ filter: want.filter_subject ?? want.filter_subjects }, 'durable consumer created');
        return;
      }
      const filterOf = (c: Partial<ConsumerConfig>) =>
        (c.filter_subjects?.length ? [...c.filter_subjects].sort() : c.filter_subject ? [c.filter_subject] : []).join(' ');
      if (
        filterOf(current) !== filterOf(want) ||
        current.ack_wait !== want.ack_wait ||
        current.max_deliver !== want.max_deliver ||
        current.max_ack_pending !== want.max_ack_pending
      ) {
        const { durable_name: _d, ack_policy: _a, deliver_policy: _p, ...update } = want;
        // the update merges into the current config: clear the filter field not in use
        if (want.filter_subject) update.filter_subjects = undefined;
        else update.filter_subject = undefined;
        await jsm.consumers.update(streamName, this.opts.durable, update);
        this.clog.info({ filter: want.filter_subject ?? want.filter_subjects }, 'durable consumer updated');
      }
    }

    /** ends the pending pull: after a reconnect the loop pulls afresh (and recreates what the server lost) */
    interrupt(): void {
      void this.batch?.close().catch(() => {});
    }

    start(): void {
      this.loopDone = this.loop();
    }

    private async loop(): Promise<void> {
      let failures = 0;
      while (!this.stopping) {
        // pull when half the slots are free: a pull per finished message cost a request (and its reply) each
        if (this.inFlight.size > 0 && this.inFlight.size > this.concurrency / 2) {
          await new Promise<void>((r) => (this.wake = r));
          this.wake = null;
          continue;
        }
        if (!connected) {
          await Promise.race([whenConnected(60_000), new Promise<void>((r) => (this.wake = r))]);
          this.wake = null;
          continue;
        }
        try {
          this.pull ??= await failOnDisconnect(js.consumers.get(streamName, this.opts.durable));
          if (this.stopping) break;
          const batch = await this.pull.fetch({
            max_messages: this.concurrency - this.inFlight.size,
            expires: fetchExpiresMs,
          });
          this.batch = batch;
          for await (const m of batch) this.dispatch(m);
          this.batch = null;
          failures = 0;
        } catch (err) {
          this.batch = null;
          this.pull = null;
          if (this.stopping || closed) break;
          failures++;
          if (failures === 1 || failures % 30 === 0) this.clog.warn({ err, failures }, 'pull failed; retrying');
          await new Promise<void>((r) => {
            this.wake = r;
            setTimeout(r, Math.min(100 * 2 ** failures, 2000));
          });
          this.wake = null;
          // the server may have come back without our stream or consumer (e.g. a fresh store)
          if (!this.stopping && connected) await failOnDisconnect(this.ensure()).catch(() => {});
        }
      }
    }

    private dispatch(m: JsMsg): void {
      // outside this durable's types (a stream-wide filter on servers before 2.10): told by its subject, never parsed,
      // and holding no slot
      if (!this.subjects.has(m.subject)) {
        m.ack();
        return;
      }
      if (this.stopping) {
        m.nak(); // another instance takes it now rather than after ack_wait
        return;
      }
      const p = this.handle(m)
        .catch((err) => this.clog.error({ err, seq: m.seq }, 'bus: could not settle message (it will be redelivered)'))
        .finally(() => {
          this.inFlight.delete(p);
          this.wake?.();
        });
      this.inFlight.add(p);
    }

    private async handle(m: JsMsg): Promise<void> {
      let msg: BusMessage;
      try {
        msg = codec.decode(m.data);
      } catch (err) {
        this.clog.error({ err, subject: m.subject, seq: m.seq }, 'bus: undecodable message terminated');
        m.term();
        return;
      }
      const count = m.info.redeliveryCount;
      const progress = setInterval(() => m.working(), Math.max(1000, Math.floor(ackWaitMs / 3)));
      try {
        await this.handler(msg, { count, maxDeliver: this.maxDeliver });
        m.ack();
      } catch (err) {
        if (count >= this.maxDeliver) {
          this.clog.error({ err, event_id: msg.id, type: msg.type, delivery: count }, 'bus: message given up after max deliveries');
          m.term();
        } else {
          m.nak(backoffFor(this.backoffMs, count));
        }
      } finally {
        clearInterval(progress);
      }
    }

    async stop(): Promise<void> {
      if (!this.stopping) {
        this.stopping = true;
        this.wake?.();
        await this.batch?.close().catch(() => {});
        consumers.delete(this);
      }
      await this.loopDone;
      while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
    }
  }

  return {
    name: 'nats',

    async publish(messages: BusMessage[]): Promise<void> {
      if (closed) throw new Error('bus is closed');
      // pipelined: the messages go out on the connection in order without waiting for each ack (a window at a
      // time, so a large batch does not flood the server); a failed one is retried by publishOne itself
      for (let i = 0; i < messages.length; i += PUBLISH_WINDOW) {
        const window = messages.slice(i, i + PUBLISH_WINDOW).map((m) => publishOne(m));
        const settled = await Promise.allSettled(window);
        const failed = settled.find((r) => r.status === 'rejected');
        if (failed) throw (failed as PromiseRejectedResult).reason;
      }
    },

    async consume(opts: ConsumeOptions): Promise<Consumer> {
      if (closed) throw new Error('bus is closed');
      const c = new NatsConsumer(opts);
      await c.ensure();
      consumers.add(c);
      c.start();
      return c;
    },

    async backlog(durable: string): Promise<number> {
      try {
        const info = await failOnDisconnect(jsm.consumers.info(streamName, durable));
        return info.num_pending + info.num_ack_pending;
      } catch (err) {
        const code = apiErrCode(err);
        if (code === CONSUMER_NOT_FOUND || code === STREAM_NOT_FOUND) return 0;
        throw err;
      }
    },

    async ping(): Promise<void> {
      if (!connected) throw new Error('nats is disconnected');
      await failOnDisconnect(jsm.getAccountInfo());
    },

    async close(): Promise<void> {
      if (closed) return;
      await Promise.all([...consumers].map((c) => c.stop()));
      closed = true;
      if (!nc.isClosed()) await nc.drain().catch(() => nc.close());
    },
  };
}
