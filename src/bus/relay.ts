import type { Knex } from 'knex';
import type { EventType } from '../domain/events';
import { positionToString, type RecordedEvent, type TypedEvent } from '../eventstore/port';
import type { Projection } from '../eventstore/projection';
import { storedData } from '../eventstore/sealed';
import type { Bus, BusMessage } from './port';

/** An event of the log in a bus message's shape, its sealed fields open (what a follower of the log hands its workers). */
export const openedMessage = (e: RecordedEvent): BusMessage => ({
  id: e.id,
  type: e.type,
  data: e.data,
  metadata: e.metadata,
  streamId: e.streamId,
  position: positionToString(e.position),
});

// as the log keeps it: erasable fields stay sealed on the bus
export const toBusMessage = (e: TypedEvent): BusMessage => ({ ...openedMessage(e), data: storedData(e) });

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
