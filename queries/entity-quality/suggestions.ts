import type { Knex } from 'knex';
import type { SuggestionsAnswer } from './views';
import { cover } from '../../projections/competitor-suggestions';

/** A timestamp as an ISO text in UTC with milliseconds (as Date.toISOString writes it). */
const ISO = (col: string) => `to_char(${col} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

export interface SuggestionsRequest {
  /** UTC days, inclusive; absent: unbounded */
  from?: string;
  to?: string;
  min_answers: number;
}

/**
 * The names a website's answers put forward in the range that are neither its brand, a tracked competitor (name or
 * identifier) nor dismissed, with at least min_answers answers: most answers first, then the name. The range is read
 * as whole spans (rm_suggestion_spans) and the day rows at its edges: what its day rows alone would give.
 */
export async function listSuggestions(db: Knex, websiteId: string, q: SuggestionsRequest): Promise<SuggestionsAnswer> {
  // the range within the days that have rows: an open or very long range is a few pieces too
  const r0 = await db('rm_suggestion_days').where('website_id', websiteId).first(db.raw('min(day)::text as a, max(day)::text as b'));
  if (!r0?.a) return { suggestions: [] };
  const from = q.from === undefined || q.from < r0.a ? (r0.a as string) : q.from;
  const to = q.to === undefined || q.to > r0.b ? (r0.b as string) : q.to;
  const pieces = from <= to ? cover(from, to) : [];
  const days = pieces.filter((p) => p.span === 1).map((p) => p.day);
  const spans = pieces.filter((p) => p.span > 1);
  // one pass over the pieces' rows (examples the latest days' first), the answer made as one JSON text: a row per name
  // parsed by the driver cost more than the query
  const r = await db.raw(
    `select coalesce(json_agg(json_build_object(
         'name', g.name, 'answers', g.answers, 'first_seen', ${ISO('g.first_seen')}, 'last_seen', ${ISO('g.last_seen')},
         'example_response_ids', array_remove(g.examples, ''),
         'domains', array(select distinct x collate "C" from unnest(string_to_array(g.domains, ',')) as x where x <> '' order by 1))
       order by g.answers desc, g.key), '[]') as list
       from (select d.key, sum(d.answers)::int as answers, min(d.first_seen) as first_seen, max(d.last_seen) as last_seen,
               (array_agg(d.name order by d.first_seen))[1] as name,
               (string_to_array(string_agg(array_to_string(d.examples, ','), ',' order by d.day desc), ','))[1:3] as examples,
               string_agg(array_to_string(d.domains, ','), ',') as domains
               from (select key, day, name, answers, first_seen, last_seen, examples, domains
                       from rm_suggestion_days where website_id = :site and day = any(cast(:days as date[]))
                     union all
                     select s.key, s.day, s.name, s.answers, s.first_seen, s.last_seen, s.examples, s.domains
                       from unnest(cast(:spans as int[]), cast(:starts as date[])) as c(span, day)
                       join rm_suggestion_spans s on s.website_id = :site and s.span = c.span and s.day = c.day) d
              where d.key not in (select unnest(e.keys) from rm_suggestion_entities e where e.website_id = :site)
                and d.key not in (select x.key from rm_suggestion_dismissed x where x.website_id = :site)
              group by d.key
             having sum(d.answers) >= :min) g`,
    { site: websiteId, days, spans: spans.map((p) => p.span), starts: spans.map((p) => p.day), min: q.min_answers },
  );
  return { suggestions: r.rows[0].list };
}

/** Whether a website's brand or a tracked competitor goes by this key (name or identifier). */
export async function trackedName(db: Knex, websiteId: string, key: string): Promise<boolean> {
  const r = await db.raw('select 1 from rm_suggestion_entities where website_id = ? and ? = any(keys) limit 1', [websiteId, key]);
  return r.rows.length > 0;
}
