import { coalescing } from '../domain/coalesce';
import type { Sealer } from '../eventstore/sealed';
import type { Bus, BusMessage } from './port';

/**
 * The bus with erasable fields sealed in transit and at rest (JetStream keeps messages on disk): what is published
 * is sealed (the relay already sends the log's ciphertext; anything else is sealed here, an erased subject's fields
 * as null), and each message is opened just before its handler runs (those handled at once together), with the subject
 * keys as they are then: a message about a subject erased meanwhile reaches the worker with those fields null.
 */
export function sealedBus(bus: Bus, sealer: Sealer): Bus {
  return {
    name: bus.name,
    async publish(messages) {
      await bus.publish(await sealer.seal(messages, 'erase'));
    },
    consume(options) {
      const handler = options.handler as (msg: BusMessage, ...rest: unknown[]) => Promise<void>;
      // messages handled at once are opened together: one read of their subjects' keys
      const open = coalescing((msgs: BusMessage[]) => sealer.open(msgs), { alone: true });
      return bus.consume({ ...options, handler: async (msg: BusMessage, ...rest: unknown[]) => handler(await open(msg), ...rest) });
    },
    backlog: (durable) => bus.backlog(durable),
    ping: () => bus.ping(),
    close: () => bus.close(),
  };
}
