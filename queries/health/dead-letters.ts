import type { Knex } from 'knex';
import { DEAD_LETTERS } from '../../src/eventstore/dead-letters';

/** A website a projection has set aside: the event it could not apply, why, since when, and how many wait behind it. */
export interface SetAsideSite {
  projection: string;
  website_id: string;
  event_id: string;
  type: string;
  error: string;
  since: string;
  held: number;
}

/** Websites set aside by any projection (dead letters), oldest first, at most `limit`. */
export async function deadLetteredSites(db: Knex, limit = 100): Promise<SetAsideSite[]> {
  const r = await db.raw(
    `select f.projection, f.website_id, f.event_id, f.type, f.error, f.recorded_at as since,
            (select count(*)::int from ${DEAD_LETTERS} h where h.projection = f.projection and h.website_id = f.website_id and h.state = 'held') as held
       from ${DEAD_LETTERS} f
      where f.state = 'failed'
      order by f.recorded_at, f.seq
      limit ?`,
    [limit],
  );
  return r.rows.map((x: SetAsideSite & { since: Date }) => ({ ...x, since: new Date(x.since).toISOString() }));
}

/** True when a projection (one of `projections`, or any) has set the website aside: what it reads there is behind. */
export async function isDeadLettered(db: Knex, websiteId: string, projections?: readonly string[]): Promise<boolean> {
  const q = db(DEAD_LETTERS).where('website_id', websiteId);
  if (projections) q.whereIn('projection', projections);
  return (await q.first('event_id')) !== undefined;
}
