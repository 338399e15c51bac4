import type { Knex } from 'knex';
import type { EventType } from '../domain/events';
import { positionToString, type TypedEvent } from '../eventstore/port';
import type { Projection } from '../eventstore/projection';
import { storedData } from '../eventstore/sealed';
import type { Bus, BusMessage } from './port';

export const toBusMessage = (e: TypedEvent): BusMessage => ({
  id: e.id,
  type: e.type,
  // as the log keeps it: erasable fields stay sealed on the bus
  data: storedData(e),
  metadata: e.metadata,
  streamId: e.streamId,
  position: positionToString(e.position),
});

/**
 * Relays events to the bus: every event, or the types given (the ones some worker consumes), of the streams
 * `streamPrefixes` names for a type. The runner stores the
 * checkpoint only after publish resolves, so a crash republishes the last batch: at-least-once, made
 * effectively-once by the bus dropping repeated ids.
 */
export function createRelayProjection(
  bus: Bus,
  types: readonly EventType[] | 'all' = 'all',
  streamPrefixes?: Projection['streamPrefixes'],
): Projection {
  return {
    name: 'bus-relay',
    version: 1,
    tables: [],
    async migrate(_db: Knex): Promise<void> {},
    handles: types,
    streamPrefixes,
    async apply(_trx: Knex.Transaction, events: TypedEvent[]): Promise<void> {
      if (events.length > 0) await bus.publish(events.map(toBusMessage));
    },
  };
}
