import type { Knex } from 'knex';
import type { EventType } from '../domain/events';
import type { TypedEvent } from './port';

/**
 * A read model (or any checkpointed consumer of the event log, such as the bus relay).
 * The runner calls apply with a batch inside one transaction that also stores the checkpoint.
 */
export interface Projection {
  name: string;
  /** bump when the read model's shape or derivation changes: its tables are dropped and rebuilt from zero */
  version: number;
  /** tables owned by this projection, emptied on rebuild and dropped on a version change */
  tables: readonly string[];
  /** creates the tables (idempotent); runs at start */
  migrate(db: Knex): Promise<void>;
  /** event types handled; 'all' receives every known event */
  handles: readonly EventType[] | 'all';
  apply(trx: Knex.Transaction, events: TypedEvent[]): Promise<void>;
  /**
   * Around a catch-up from position 0 (after reset() or a version change) by runToHead: `before` may drop what only
   * queries need (secondary indexes) and `after` restores it; migrate must restore it too, in case a rebuild fails.
   */
  rebuild?: { before(db: Knex): Promise<void>; after(db: Knex): Promise<void> };
}
