import type { Knex } from 'knex';
import type { EventType } from '../domain/events';
import type { Projection } from './projection';
import type { Sealer } from './sealed';

export const ERASURE_PROJECTION = 'subject-erasure';

/**
 * The safety net of erasure: shreds the subjects of every erasing event in the log, in the transaction that moves
 * its checkpoint. The sealing store shreds them right after the append; this covers a crash in between (and a
 * rebuild re-shreds, which changes nothing).
 */
export function createErasureProjection(sealer: Sealer): Projection {
  const handles = [...sealer.plans.values()].filter((p) => p.erases).map((p) => p.type as EventType);
  return {
    name: ERASURE_PROJECTION,
    version: 1,
    tables: [],
    async migrate(_db: Knex): Promise<void> {},
    handles,
    async apply(trx, events) {
      await sealer.keyring.shred(sealer.erasedBy(events), trx);
    },
  };
}
