import { describe } from 'vitest';
import { onRealPostgres } from './db';

/**
 * `describe` for a suite that needs a Postgres server (DATABASE_URL): two instances or processes sharing one
 * database, or what embedded PGlite lacks. Without one the suite is skipped and one line says so:
 * `<what> skipped: DATABASE_URL unset (<why>)`.
 */
export function onPostgresServer(what: string, why?: string) {
  if (!onRealPostgres) console.log(`${what} skipped: DATABASE_URL unset${why ? ` (${why})` : ''}`);
  return describe.skipIf(!onRealPostgres);
}
