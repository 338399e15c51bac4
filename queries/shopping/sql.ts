/**
 * The shopping statement (queries/shopping/metrics.ts runs it): the selected answers' cards read once, each with its
 * side (own, competitor, other), and every block aggregated from them as one json column of a single row. Blocks:
 * answer_days, card_days, answer_flags, entities, entity_answers, entity_products, merchants, positions, prices, top
 * (see ShoppingBlocks in ./types); blocksOf parses that row.
 */
import type { Knex } from 'knex';
import { pushRunAtRange } from '../filters';
import { json } from './numbers';
import type { ShoppingBlocks, ShoppingSelection } from './types';

/** Memory for one shopping statement's sorts and its materialized cards (a year of a large website's cards fits). */
export const SHOPPING_WORK_MEM = '128MB';

/** Positions at or past this one share the last bucket ("10+"). */
export const LAST_POSITION_BUCKET = 10;

/** Escapes a string for a Postgres regular expression (ARE). */
const reEscape = (s: string) => s.replace(/[\\^$.|?*+()[\]{}]/g, '\\$&');

/**
 * One regular expression matching any of the identifiers as a whole word (not inside a run of letters, digits or
 * `_`), any run of spaces in an identifier matching any run of whitespace. Matched case-insensitively (~*).
 */
export function wholeWordPattern(identifiers: readonly string[]): string {
  const alts = identifiers
    .map((i) => i.trim())
    .filter(Boolean)
    .map((i) => i.split(/\s+/).map(reEscape).join('\\s+'));
  return `(^|[^[:alnum:]_])(${alts.join('|')})($|[^[:alnum:]_])`;
}

/** The conditions every row of one table (alias `a`) must meet: website, schedule, prompts, models, range. */
export function scope(a: string, s: ShoppingSelection): { sql: string; bindings: Knex.RawBinding[] } {
  // "is null" rather than "is not distinct from": the planner estimates it (and the default schedule is the usual one)
  const parts = [
    `${a}.website_id = ?`,
    s.scheduleId === null ? `${a}.schedule_id is null` : `${a}.schedule_id = ?::uuid`,
    `${a}.prompt_id = any(?::uuid[])`,
    `${a}.model = any(?::text[])`,
  ];
  const bindings: Knex.RawBinding[] = [
    s.websiteId,
    ...(s.scheduleId === null ? [] : [s.scheduleId]),
    [...s.promptIds] as unknown as Knex.RawBinding,
    [...s.models] as unknown as Knex.RawBinding,
  ];
  pushRunAtRange(a, s, parts, bindings);
  return { sql: parts.join(' and '), bindings };
}

/**
 * The selected answers' cards with their side, read once (materialized): every block aggregates this set.
 * `competitors`: the ids of the competitors whose cards count as competitor cards.
 */
export function cardsCte(s: ShoppingSelection, competitors: readonly string[]): { sql: string; bindings: Knex.RawBinding[] } {
  const where = scope('p', s);
  const targets = s.targetIdentifiers?.filter((t) => t.trim() !== '') ?? [];
  const target = targets.length ? `(p.name ~* ? or coalesce(p.brand, '') ~* ?)` : 'true';
  const targetBindings = targets.length ? [wholeWordPattern(targets), wholeWordPattern(targets)] : [];
  return {
    sql: `cards as materialized (
      select p.response_id,
             (p.run_at at time zone 'UTC')::date as day,
             p.position, p.name, p.brand, p.merchant, p.merchant_key, p.price, p.currency, p.entity_id, p.product_key,
             (p.price is not null and p.currency is not null) as priced,
             case when p.is_own and ${target} then 'own'
                  when not p.is_own and p.entity_id = any(?::uuid[]) then 'competitor'
                  else 'other' end as side
        from rm_response_products p
       where ${where.sql})`,
    bindings: [...targetBindings, [...competitors] as unknown as Knex.RawBinding, ...where.bindings],
  };
}

/** One statement: the cards are read once, each block is a json column of the single row it answers. */
export function statement(s: ShoppingSelection, competitors: readonly string[]): { sql: string; bindings: Knex.RawBinding[] } {
  const cards = cardsCte(s, competitors);
  const answers = scope('r', s);
  const list = (select: string, order = '') => `coalesce((select json_agg(x${order ? ` order by ${order}` : ''}) from (${select}) x), '[]'::json)`;
  const sql = `
    with ${cards.sql},
    answer_days as (
      select (r.run_at at time zone 'UTC')::date as day, count(*)::int as answers
        from rm_responses r where ${answers.sql} group by 1),
    per_answer as materialized (
      select response_id, day,
             bool_or(side = 'own') as has_own,
             bool_or(side = 'competitor') as has_competitor,
             bool_or(side = 'own' and position = 1) as own_first,
             array_agg(distinct entity_id) filter (where side <> 'other') as entities,
             array_agg(distinct entity_id) filter (where side <> 'other' and position = 1) as first_entities,
             array_agg(distinct merchant_key) filter (where merchant_key is not null) as merchants
        from cards group by response_id, day),
    products as materialized (
      select side, entity_id, product_key, count(*)::int as appearances, avg(position)::float8 as avg_position, min(position) as best_position
        from cards where side <> 'other' group by side, entity_id, product_key),
    top as materialized (
      select * from (
        select p.*, row_number() over (partition by side order by appearances desc, avg_position, product_key collate "C", entity_id) as rank
          from products p) ranked
       where rank <= ?),
    top_cards as materialized (
      select c.* from cards c join top t on t.side = c.side and t.entity_id = c.entity_id and t.product_key = c.product_key
       where c.product_key = any(array(select product_key from top))),
    top_names as materialized (
      select side, entity_id, product_key,
             mode() within group (order by name collate "C") as name,
             mode() within group (order by brand collate "C") as brand,
             count(distinct response_id)::int as answers
        from top_cards group by 1, 2, 3),
    top_prices as materialized (
      select side, entity_id, product_key, currency, count(*)::int as cards, min(price) as min_price,
             percentile_cont(0.5) within group (order by price) as median_price, max(price) as max_price
        from top_cards where priced group by 1, 2, 3, 4),
    top_sellers as materialized (
      select side, entity_id, product_key, merchant_key,
             coalesce(mode() within group (order by merchant collate "C"), merchant_key) as merchant, count(*)::int as appearances
        from top_cards where merchant_key is not null group by 1, 2, 3, 4),
    merchant_names as materialized (
      select distinct on (merchant_key) merchant_key, merchant
        from (select merchant_key, merchant, count(*)::int as n from cards where merchant is not null group by 1, 2) named
       order by merchant_key, n desc, merchant collate "C")
    select
      ${list('select * from answer_days', 'x.day')} as answer_days,
      ${list(`
        select day, count(*)::int as cards,
               count(*) filter (where side = 'own')::int as own_cards,
               count(*) filter (where side = 'competitor')::int as competitor_cards,
               count(*) filter (where priced)::int as priced_cards,
               count(*) filter (where priced and side = 'own')::int as own_priced_cards,
               count(*) filter (where priced and side = 'competitor')::int as competitor_priced_cards,
               count(*) filter (where merchant_key is null)::int as cards_without_merchant,
               coalesce(sum(position) filter (where side = 'own'), 0)::float8 as own_position_sum,
               min(position) filter (where side = 'own') as best_own_position
          from cards group by day`)} as card_days,
      ${list(`
        select day, count(*)::int as answers_with_products,
               count(*) filter (where has_own)::int as answers_with_own_products,
               count(*) filter (where has_competitor)::int as answers_with_competitor_products,
               count(*) filter (where own_first)::int as own_first_position_answers
          from per_answer group by day`)} as answer_flags,
      ${list(`
        select entity_id, count(*)::int as appearances, sum(position)::float8 as position_sum, min(position) as best_position
          from cards where side <> 'other' group by entity_id`)} as entities,
      ${list(`
        select e.entity_id, count(*)::int as answers, count(*) filter (where e.entity_id = any(a.first_entities))::int as first_position_answers
          from per_answer a, unnest(a.entities) as e(entity_id) group by e.entity_id`)} as entity_answers,
      ${list('select side, entity_id, count(*)::int as products from products group by side, entity_id')} as entity_products,
      ${list(
        `
        select m.*,
               coalesce(mn.merchant, m.merchant_key) as merchant,
               coalesce(ma.answers, 0) as answers
          from (select merchant_key,
                       count(*)::int as appearances,
                       count(*) filter (where side = 'own')::int as own_appearances,
                       count(*) filter (where side = 'competitor')::int as competitor_appearances,
                       sum(position)::float8 as position_sum, count(*) filter (where priced)::int as priced_appearances
                  from cards where merchant_key is not null group by merchant_key) m
          left join (select k as merchant_key, count(*)::int as answers from per_answer a, unnest(a.merchants) as k group by k) ma using (merchant_key)
          left join merchant_names mn using (merchant_key)`,
        'x.appearances desc, x.merchant_key collate "C"',
      )} as merchants,
      ${list(`
        select least(position, ${LAST_POSITION_BUCKET}) as bucket, count(*)::int as cards,
               count(*) filter (where side = 'own')::int as own_cards,
               count(*) filter (where side = 'competitor')::int as competitor_cards
          from cards group by 1`)} as positions,
      ${list(`
        select currency, side, entity_id, grouping(side) as all_sides, grouping(entity_id) as all_entities,
               count(*)::int as cards, min(price) as min_price, max(price) as max_price,
               percentile_cont(0.5) within group (order by price) as median_price, avg(price)::float8 as avg_price
          from cards where priced
         group by grouping sets ((currency), (currency, side), (currency, side, entity_id))`)} as prices,
      ${list(
        `
        select t.side, t.rank, t.entity_id, n.name, n.brand, t.appearances, n.answers, t.avg_position, t.best_position,
               ${list('select p.currency, p.cards, p.min_price, p.median_price, p.max_price from top_prices p where p.side = t.side and p.entity_id = t.entity_id and p.product_key = t.product_key', 'x.cards desc, x.currency collate "C"')} as prices,
               ${list('select m.merchant, m.merchant_key, m.appearances from top_sellers m where m.side = t.side and m.entity_id = t.entity_id and m.product_key = t.product_key', 'x.appearances desc, x.merchant_key collate "C"')} as merchants
          from top t join top_names n on n.side = t.side and n.entity_id = t.entity_id and n.product_key = t.product_key`,
        'x.side, x.rank',
      )} as top`;
  return { sql, bindings: [...cards.bindings, ...answers.bindings, s.topProductsLimit] };
}

const BLOCKS: readonly (keyof ShoppingBlocks)[] = [
  'answer_days',
  'card_days',
  'answer_flags',
  'entities',
  'entity_answers',
  'entity_products',
  'merchants',
  'positions',
  'prices',
  'top',
];

/** The statement's row with each block parsed (an absent block is empty). */
export function blocksOf(row: Record<string, unknown>): ShoppingBlocks {
  return Object.fromEntries(BLOCKS.map((b) => [b, json(row[b])])) as unknown as ShoppingBlocks;
}
