import type { Logger } from '../logger';
import type { Delivery } from '../bus/memory';
import type { Bus, BusMessage, Consumer } from '../bus/port';
import { problemLog } from '../app/problem';
import type { EventStore } from '../eventstore/port';

/** What every bus worker is given: the bus it consumes, the store its commands append to, the logger. */
export interface BusWorkerDeps {
  store: EventStore;
  bus: Bus;
  logger: Logger;
}

export interface WorkerOptions {
  bus: Bus;
  /** the durable consumer name, shared by every instance of this worker */
  name: string;
  types: readonly string[];
  /** does the slow work and appends its results through commands; throwing makes the bus retry */
  handle: (msg: BusMessage, delivery?: Delivery) => Promise<void>;
  concurrency?: number;
  maxDeliver?: number;
  backoffMs?: readonly number[];
  logger: Logger;
}

/** Starts a bus consumer that logs one line per failed delivery; stop() waits for the work in hand. */
export async function startWorker(options: WorkerOptions): Promise<Consumer> {
  const log = options.logger.child({ worker: options.name });
  const consumer = await options.bus.consume({
    durable: options.name,
    types: options.types,
    concurrency: options.concurrency,
    maxDeliver: options.maxDeliver,
    backoffMs: options.backoffMs,
    handler: async (msg: BusMessage, delivery?: Delivery) => {
      try {
        await options.handle(msg, delivery);
      } catch (err) {
        log.warn(
          {
            ...problemLog(err),
            event_id: msg.id,
            type: msg.type,
            delivery: delivery?.count,
            max_deliver: delivery?.maxDeliver,
            will_retry: delivery ? delivery.count < delivery.maxDeliver : undefined,
          },
          'worker failed to handle event',
        );
        throw err;
      }
    },
  });
  log.info({ types: options.types, concurrency: options.concurrency ?? 1 }, 'worker started');
  return {
    async stop() {
      await consumer.stop();
      log.info('worker stopped');
    },
  };
}
