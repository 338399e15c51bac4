import type { Knex } from 'knex';
import { isPoison } from '../eventstore/dead-letters';
import type { Logger } from '../logger';

/**
 * Work whose outcome the store refused on its content (a unit's answer, a job step's events) and that ended as failed
 * instead: one row per unit or job, what /readyz lists. Operational, like the limits' tables, not a read model.
 */
export const UNRECORDED = 'aivis_unrecorded';

/** The error kind of a unit or job that ended because its outcome could not be recorded. */
export const UNRECORDABLE = 'unrecordable';

export async function migrateUnrecorded(db: Knex): Promise<void> {
  await db.transaction(async (trx) => {
    await trx.raw(`select pg_advisory_xact_lock(hashtextextended('aivis-migrate-unrecorded', 0))`);
    await trx.raw(`
      create table if not exists ${UNRECORDED} (
        id text primary key,
        kind text not null,
        organization_id text not null,
        website_id text,
        reason text not null,
        at timestamptz not null default now()
      );
      create index if not exists ${UNRECORDED}_at on ${UNRECORDED} (at);`);
  });
}

/** Postgres's error conditions an outcome meets most, by SQLSTATE, else by class. */
const CONDITIONS: Record<string, string> = {
  '22P02': 'invalid text',
  '22P05': 'untranslatable character',
  '22021': 'invalid byte sequence',
  '22001': 'value too long',
  '22003': 'value out of range',
  '54000': 'too large',
};
const CLASSES: Record<string, string> = { '22': 'invalid data', '23': 'broken constraint', '54': 'over a limit' };

/**
 * Why the store refused an outcome for good (a data error on what was given, which an append again would meet too),
 * as a fixed text with the error's code, never the refused data; null for a failure a retry may get past (the
 * database or the connection, a race for an event id).
 */
export function unrecordableReason(err: unknown): string | null {
  const code = (err as { code?: unknown } | null)?.code;
  if (!isPoison(err) || code === '23505') return null;
  if (typeof code === 'string') return `outcome could not be recorded: ${CONDITIONS[code] ?? CLASSES[code.slice(0, 2)]} (${code})`;
  return `outcome could not be recorded: ${(err as Error).name}`;
}

export interface UnrecordedEnd {
  /** the unit's request id, or the job's id */
  id: string;
  kind: 'unit' | 'job';
  organization_id: string;
  website_id: string | null;
  reason: string;
}

/** Notes a unit or job that ends on an outcome it could not record (once per id), and logs it. */
export async function noteUnrecorded(db: Knex, logger: Logger, end: UnrecordedEnd, err: unknown): Promise<void> {
  logger.error({ ...end, error_code: (err as { code?: unknown } | null)?.code }, `${end.kind} ends as failed: its ${end.reason}`);
  await db(UNRECORDED).insert(end).onConflict('id').ignore();
}
