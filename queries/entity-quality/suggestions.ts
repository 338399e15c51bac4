import type { Knex } from 'knex';
import { iso } from '../timestamps';
import type { SuggestionsAnswer } from './views';

export interface SuggestionsRequest {
  /** UTC days, inclusive; absent: unbounded */
  from?: string;
  to?: string;
  min_answers: number;
}

/**
 * The names a website's answers put forward in the range that are neither its brand, a tracked competitor (name or
 * identifier) nor dismissed, with at least min_answers answers: most answers first, then the name.
 */
export async function listSuggestions(db: Knex, websiteId: string, q: SuggestionsRequest): Promise<SuggestionsAnswer> {
  const range = `d.website_id = :site ${q.from ? 'and d.day >= cast(:from as date)' : ''} ${q.to ? 'and d.day <= cast(:to as date)' : ''}`;
  const r = await db.raw(
    `with totals as (
       select d.key, sum(d.answers)::int as answers, min(d.first_seen) as first_seen, max(d.last_seen) as last_seen
         from rm_suggestion_days d where ${range} group by d.key having sum(d.answers) >= :min
     ), kept as (
       select t.* from totals t
        where not exists (select 1 from rm_suggestion_entities e where e.website_id = :site and t.key = any(e.keys))
          and not exists (select 1 from rm_suggestion_dismissed x where x.website_id = :site and x.key = t.key)
     )
     select k.key, k.answers, k.first_seen, k.last_seen,
       (select d.name from rm_suggestion_days d where ${range} and d.key = k.key order by d.first_seen limit 1) as name,
       array(select u.id from rm_suggestion_days d, unnest(d.examples) with ordinality u(id, n)
              where ${range} and d.key = k.key order by d.day desc, u.n limit 3) as examples,
       array(select distinct u.h from rm_suggestion_days d, unnest(d.domains) u(h) where ${range} and d.key = k.key order by u.h) as domains
       from kept k
      order by k.answers desc, k.key`,
    { site: websiteId, from: q.from ?? null, to: q.to ?? null, min: q.min_answers },
  );
  return {
    suggestions: r.rows.map((row: { name: string; answers: number; first_seen: Date; last_seen: Date; examples: string[]; domains: string[] }) => ({
      name: row.name,
      answers: row.answers,
      first_seen: iso(row.first_seen),
      last_seen: iso(row.last_seen),
      example_response_ids: row.examples,
      domains: row.domains,
    })),
  };
}

/** Whether a website's brand or a tracked competitor goes by this key (name or identifier). */
export async function trackedName(db: Knex, websiteId: string, key: string): Promise<boolean> {
  const r = await db.raw('select 1 from rm_suggestion_entities where website_id = ? and ? = any(keys) limit 1', [websiteId, key]);
  return r.rows.length > 0;
}
