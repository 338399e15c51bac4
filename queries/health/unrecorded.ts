import type { Knex } from 'knex';
import { UNRECORDED } from '../../src/workers/unrecorded';

/** A unit or job that ended as failed because its outcome could not be recorded: which, whose, why, when. */
export interface UnrecordedEnd {
  kind: 'unit' | 'job';
  id: string;
  organization_id: string;
  website_id: string | null;
  reason: string;
  at: string;
}

/** How long such an end keeps /readyz degraded. */
const SHOWN_FOR = '24 hours';

/** The ends of the last day, newest first, at most `limit`. */
export async function unrecordedEnds(db: Knex, limit = 100): Promise<UnrecordedEnd[]> {
  const r = await db.raw(
    `select kind, id, organization_id, website_id, reason, at from ${UNRECORDED} where at > now() - ?::interval order by at desc, id limit ?`,
    [SHOWN_FOR, limit],
  );
  return r.rows.map((x: UnrecordedEnd & { at: Date }) => ({ ...x, at: new Date(x.at).toISOString() }));
}
