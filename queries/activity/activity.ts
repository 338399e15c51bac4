import type { Knex } from 'knex';
import { z } from 'zod';
import { inScope } from '../access';
import { onePageAndMore, pageInfo, pageRows } from '../paging';
import { text, Uuid } from '../../src/domain/schemas';
import type { Principal } from '../../src/domain/principal';
import { iso } from '../timestamps';

export const ActivityFilters = z.object({
  website_id: Uuid.optional().describe("Only this website's changes; omitted = every change the key may see"),
  entity_type: text()
    .max(50, 'must be at most 50 characters')
    .optional()
    .describe('Only changes to this kind of record, e.g. website, competitor, topic, prompt, prompt_schedule, saved_view, run, response'),
  change_type: text()
    .max(50, 'must be at most 50 characters')
    .optional()
    .describe('Only this kind of change, e.g. created, updated, deleted, restored, archived, started, imported'),
  since: text()
    .datetime({ offset: true, message: 'must be an ISO 8601 date-time' })
    .optional()
    .describe('Earliest change, an ISO 8601 date-time with Z or an offset'),
  until: text()
    .datetime({ offset: true, message: 'must be an ISO 8601 date-time' })
    .optional()
    .describe('Latest change, an ISO 8601 date-time with Z or an offset'),
  order: z
    .enum(['desc', 'asc'], { error: "must be 'desc' or 'asc'" })
    .default('desc')
    .describe("'desc' (default): newest first; 'asc': oldest first"),
  page_num: z.coerce
    .number({ error: 'must be an integer' })
    .int('must be an integer')
    .min(0, 'must be at least 0')
    .default(0)
    .describe('Page number, from 0 (default 0)'),
  page_size: z.coerce
    .number({ error: 'must be an integer' })
    .int('must be an integer')
    .min(1, 'must be between 1 and 100')
    .max(100, 'must be between 1 and 100')
    .default(40)
    .describe('Entries per page, 1 to 100 (default 40)'),
});
export type ActivityFilters = z.infer<typeof ActivityFilters>;

/** One entry of the activity feed (rm_activity) as the API answers it. */
export const ActivityEntry = z.object({
  id: z.string(),
  website_id: z.string().nullable(),
  entity_type: z.string(),
  change_type: z.string(),
  entity_ids: z.array(z.string()).nullable(),
  via_api_key: z.boolean(),
  actor: z.object({ user: z.object({ id: z.string(), email: z.string() }).nullable() }),
  created_at: z.string(),
});
export type ActivityEntry = z.infer<typeof ActivityEntry>;

export const ActivityPage = z.object({ data: z.array(ActivityEntry), page_num: z.number(), page_size: z.number(), has_more: z.boolean() });
export type ActivityPage = z.infer<typeof ActivityPage>;

/**
 * The organization's changes, newest first by default. A scoped key sees its websites' entries only; a person
 * outside the key's websites is shown as null.
 */
export async function getActivity(db: Knex, p: Principal, f: ActivityFilters): Promise<ActivityPage> {
  // the person: an organization's owner (rm_users) or anyone its team has (rm_team_users), with what they reach
  const q = db('rm_activity as a')
    .leftJoin('rm_users as u', 'u.id', 'a.actor_user_id')
    .leftJoin('rm_team_users as tu', 'tu.id', 'a.actor_user_id')
    .leftJoin('rm_team_members as tm', (j) => j.on('tm.user_id', 'a.actor_user_id').andOn('tm.organization_id', 'a.organization_id'))
    .where('a.organization_id', p.organizationId)
    .select(
      'a.*',
      db.raw('coalesce(tu.email, u.email) as email'),
      db.raw(`tm.user_id is not null as organization_member`),
      db.raw(
        `(exists (select 1 from rm_team_website_members wm where wm.user_id = a.actor_user_id and wm.website_id = a.website_id)
          or exists (select 1 from rm_team_group_members gm join rm_team_group_websites gw on gw.group_id = gm.group_id
                      where gm.user_id = a.actor_user_id and gw.website_id = a.website_id)) as reaches_website`,
      ),
    );
  if (p.websiteIds !== null) q.whereIn('a.website_id', p.websiteIds);
  if (f.website_id) q.where('a.website_id', f.website_id);
  if (f.entity_type) q.where('a.entity_type', f.entity_type);
  if (f.change_type) q.where('a.change_type', f.change_type);
  if (f.since) q.where('a.created_at', '>=', f.since);
  if (f.until) q.where('a.created_at', '<=', f.until);
  const rows = await onePageAndMore(
    q.orderBy([
      { column: 'a.created_at', order: f.order },
      { column: 'a.seq', order: f.order },
    ]),
    f,
  );
  const data: ActivityEntry[] = pageRows(rows, f).map((r) => {
    // an organization member reaches every website; a person is only shown to a scoped key if they reach its websites
    const personVisible =
      r.actor_kind === 'user' &&
      r.email &&
      (p.websiteIds === null || (r.website_id && inScope(p, r.website_id) && (r.organization_member || r.reaches_website)));
    return {
      id: r.id,
      website_id: r.website_id,
      entity_type: r.entity_type,
      change_type: r.change_type,
      entity_ids: r.entity_ids,
      via_api_key: r.via_api_key,
      actor: { user: personVisible ? { id: r.actor_user_id, email: r.email } : null },
      created_at: iso(r.created_at),
    };
  });
  return { data, ...pageInfo(rows, f) };
}
