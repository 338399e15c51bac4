import type { Sealer } from '../eventstore/sealed';
import type { Bus, BusMessage } from './port';

/**
 * The bus with erasable fields sealed in transit and at rest (JetStream keeps messages on disk): what is published
 * is sealed (the relay already sends the log's ciphertext; anything else is sealed here, an erased subject's fields
 * as null), and each message is opened just before its handler runs, with the subject keys as they are then: a
 * message about a subject erased meanwhile reaches the worker with those fields null.
 */
export function sealedBus(bus: Bus, sealer: Sealer): Bus {
  return {
    name: bus.name,
    async publish(messages) {
      await bus.publish(await sealer.seal(messages, 'erase'));
    },
    consume(options) {
      const handler = options.handler as (msg: BusMessage, ...rest: unknown[]) => Promise<void>;
      return bus.consume({ ...options, handler: async (msg: BusMessage, ...rest: unknown[]) => handler((await sealer.open([msg]))[0], ...rest) });
    },
    backlog: (durable) => bus.backlog(durable),
    ping: () => bus.ping(),
    close: () => bus.close(),
  };
}
