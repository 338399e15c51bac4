import type { EventMetadata } from '../domain/events';

/** One event as carried on the bus. Message id = event id, so a republished event is dropped as a duplicate. */
export interface BusMessage {
  id: string;
  type: string;
  data: unknown;
  metadata: EventMetadata;
  streamId: string;
  /** global position, "a:b" */
  position: string;
}

export interface ConsumeOptions {
  /** durable consumer name shared by every instance: each message goes to one of them */
  durable: string;
  /** event types to receive */
  types: readonly string[];
  handler: (msg: BusMessage) => Promise<void>;
  /** messages handled at once by this instance (default 1) */
  concurrency?: number;
  /** deliveries before a message is given up (default 5) */
  maxDeliver?: number;
  /** redelivery delays after a failure, in ms (default [250, 1000, 5000, 15000]) */
  backoffMs?: readonly number[];
}

export interface Consumer {
  stop(): Promise<void>;
}

export interface Bus {
  readonly name: string;
  /** Publishes in order (a message retried after a failure may land after later ones); resolves once the bus has stored every message (JetStream ack). */
  publish(messages: BusMessage[]): Promise<void>;
  consume(options: ConsumeOptions): Promise<Consumer>;
  /**
   * Messages a durable has not settled yet: waiting, in flight, or waiting to be delivered again; 0 for a durable
   * nobody created. A sweeper reads 0 as "nothing is on its way".
   */
  backlog(durable: string): Promise<number>;
  ping(): Promise<void>;
  close(): Promise<void>;
}
