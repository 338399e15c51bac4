import type { Knex } from 'knex';
import { migrateHolds } from './holds';
import { migrateRateLimits } from './rate';
import { migrateSlots } from './slots';

/**
 * The limits' tables (request budgets, places held, job slots): operational counters, not read models. One transaction
 * under an advisory lock: instances starting together would otherwise race on `create table if not exists`.
 */
export async function migrateLimits(db: Knex): Promise<void> {
  await db.transaction(async (trx) => {
    await trx.raw(`select pg_advisory_xact_lock(hashtextextended('aivis-migrate-limits', 0))`);
    await migrateRateLimits(trx);
    await migrateHolds(trx);
    await migrateSlots(trx);
  });
}
