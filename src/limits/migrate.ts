import type { Knex } from 'knex';
import { migrateHolds } from './holds';
import { migrateRateLimits } from './rate';
import { migrateSlots } from './slots';

/** The limits' tables (request budgets, places held, job slots): operational counters, not read models. */
export async function migrateLimits(db: Knex): Promise<void> {
  await migrateRateLimits(db);
  await migrateHolds(db);
  await migrateSlots(db);
}
