import type { Knex } from 'knex';
import { trackedEntities } from '../responses/list';

/**
 * Shopping visibility (POST /api/v1/metrics/shopping): what the answers of the shopping models showed as product
 * cards, read from rm_responses (the answers, for denominators) and rm_response_products (one row per card, with the
 * entity it belongs to as analysis attributed it). Aggregation happens in SQL; this module shapes and rounds.
 *
 * Every card of a selected answer falls on one side:
 * - own: a card of the brand (its brand, else its name, names the brand); with target identifiers, only those whose
 *   name or brand holds one of them as a whole word, case-insensitive;
 * - competitor: a card of one of the selected competitors (all of the website's by default);
 * - other: anything else (an untracked brand, a competitor not selected, a brand card outside the targets).
 */

export interface ShoppingSelection {
  websiteId: string;
  /** null: the default schedule (answers without one) */
  scheduleId: string | null;
  /** inclusive instants */
  start?: Date;
  end?: Date;
  /** shopping models only */
  models: readonly string[];
  /** the prompts whose answers count (never soft-deleted ones), already narrowed by tags */
  promptIds: readonly string[];
  /** undefined: every competitor of the website */
  competitorIds?: readonly string[];
  /** undefined or empty: every brand card is own */
  targetIdentifiers?: readonly string[];
  topProductsLimit: number;
}

type Side = 'own' | 'competitor';

export interface PriceStats {
  currency: string;
  cards: number;
  min_price: number;
  median_price: number;
  max_price: number;
}

export interface ProductRow {
  name: string;
  brand: string | null;
  entity_id: string;
  entity_name: string;
  appearances: number;
  answers: number;
  avg_position: number;
  best_position: number;
  currency: string | null;
  min_price: number | null;
  median_price: number | null;
  max_price: number | null;
  prices: PriceStats[];
  merchants: { merchant: string; merchant_key: string; appearances: number }[];
}

export interface ShoppingMetrics {
  schedule: string;
  models: string[];
  summary: {
    answers: number;
    answers_with_products: number;
    product_answer_rate: number;
    answers_with_own_products: number;
    product_visibility_rate: number;
    own_share_of_product_answers: number;
    answers_with_competitor_products: number;
    own_product_appearances: number;
    competitor_product_appearances: number;
    share_of_product_appearances: number;
    avg_own_position: number | null;
    best_own_position: number | null;
    own_first_position_answers: number;
    own_products: number;
    competitor_products: number;
  };
  offer_summary: {
    cards: number;
    own_cards: number;
    competitor_cards: number;
    other_cards: number;
    priced_cards: number;
    priced_rate: number;
    own_priced_cards: number;
    competitor_priced_cards: number;
    merchants: number;
    cards_without_merchant: number;
    currencies: string[];
    price_ranges: {
      currency: string;
      cards: number;
      own_cards: number;
      competitor_cards: number;
      min_price: number;
      median_price: number;
      avg_price: number;
      max_price: number;
    }[];
  };
  top_own_products: ProductRow[];
  top_competitor_products: ProductRow[];
  competitor_breakdown: {
    entity_id: string;
    name: string;
    is_self: boolean;
    appearances: number;
    answers: number;
    answer_rate: number;
    share_of_appearances: number;
    avg_position: number | null;
    best_position: number | null;
    first_position_answers: number;
    products: number;
  }[];
  merchant_breakdown: {
    merchant: string;
    merchant_key: string;
    appearances: number;
    answers: number;
    share_of_appearances: number;
    own_appearances: number;
    competitor_appearances: number;
    own_share: number;
    avg_position: number;
    priced_appearances: number;
  }[];
  position_distribution: {
    position: string;
    cards: number;
    own_cards: number;
    competitor_cards: number;
    other_cards: number;
    own_rate: number;
    competitor_rate: number;
    own_share: number;
  }[];
  price_comparison: {
    currency: string;
    own_cards: number;
    own_min_price: number | null;
    own_median_price: number | null;
    own_max_price: number | null;
    competitor_cards: number;
    competitor_min_price: number | null;
    competitor_median_price: number | null;
    competitor_max_price: number | null;
    own_vs_competitor_median_pct: number | null;
    price_position: 'below' | 'equal' | 'above' | null;
    competitors: { entity_id: string; name: string; cards: number; min_price: number; median_price: number; max_price: number }[];
  }[];
  trend: {
    date: string;
    answers: number;
    answers_with_products: number;
    answers_with_own_products: number;
    own_product_appearances: number;
    competitor_product_appearances: number;
    product_visibility_rate: number;
    avg_own_position: number | null;
  }[];
}

/** Memory for one shopping statement's sorts and its materialized cards (a year of a large website's cards fits). */
const SHOPPING_WORK_MEM = '128MB';

/** Positions at or past this one share the last bucket ("10+"). */
export const LAST_POSITION_BUCKET = 10;

const round2 = (x: number) => Math.round((x + Number.EPSILON) * 100) / 100;
/** A percentage 0..100 with two decimals; 0 over an empty set. */
export const rate = (n: number, d: number) => (d === 0 ? 0 : round2((100 * n) / d));
const mean = (sum: number, n: number) => (n === 0 ? null : round2(sum / n));
const num = (v: unknown) => (v === null || v === undefined ? 0 : Number(v));
const price = (v: unknown) => round2(Number(v));

/** Escapes a string for a Postgres regular expression (ARE). */
const reEscape = (s: string) => s.replace(/[\\^$.|?*+()[\]{}]/g, '\\$&');

/**
 * One regular expression matching any of the identifiers as a whole word (not inside a run of letters, digits or
 * `_`), any run of spaces in an identifier matching any run of whitespace. Matched case-insensitively (~*).
 */
export function wholeWordPattern(identifiers: readonly string[]): string {
  const alts = identifiers.map((i) => i.trim()).filter(Boolean).map((i) => i.split(/\s+/).map(reEscape).join('\\s+'));
  return `(^|[^[:alnum:]_])(${alts.join('|')})($|[^[:alnum:]_])`;
}

/** The conditions every row of one table (alias `a`) must meet: website, schedule, prompts, models, range. */
function scope(a: string, s: ShoppingSelection): { sql: string; bindings: Knex.RawBinding[] } {
  // "is null" rather than "is not distinct from": the planner estimates it (and the default schedule is the usual one)
  const parts = [`${a}.website_id = ?`, s.scheduleId === null ? `${a}.schedule_id is null` : `${a}.schedule_id = ?::uuid`, `${a}.prompt_id = any(?::uuid[])`, `${a}.model = any(?::text[])`];
  const bindings: Knex.RawBinding[] = [s.websiteId, ...(s.scheduleId === null ? [] : [s.scheduleId]), [...s.promptIds] as unknown as Knex.RawBinding, [...s.models] as unknown as Knex.RawBinding];
  if (s.start) {
    parts.push(`${a}.run_at >= ?`);
    bindings.push(s.start);
  }
  if (s.end) {
    parts.push(`${a}.run_at <= ?`);
    bindings.push(s.end);
  }
  return { sql: parts.join(' and '), bindings };
}

/**
 * The selected answers' cards with their side, read once (materialized): every block aggregates this set.
 * `competitors`: the ids of the competitors whose cards count as competitor cards.
 */
function cardsCte(s: ShoppingSelection, competitors: readonly string[]): { sql: string; bindings: Knex.RawBinding[] } {
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
function statement(s: ShoppingSelection, competitors: readonly string[]): { sql: string; bindings: Knex.RawBinding[] } {
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

interface DayAnswers {
  day: string;
  answers: number;
}

interface DayCards {
  day: string;
  cards: number;
  own_cards: number;
  competitor_cards: number;
  priced_cards: number;
  own_priced_cards: number;
  competitor_priced_cards: number;
  cards_without_merchant: number;
  own_position_sum: number;
  best_own_position: number | null;
}

interface DayFlags {
  day: string;
  answers_with_products: number;
  answers_with_own_products: number;
  answers_with_competitor_products: number;
  own_first_position_answers: number;
}

type PriceRow = { currency: string; side: Side | 'other' | null; entity_id: string | null; all_sides: number; all_entities: number; cards: number; min_price: number; max_price: number; median_price: number; avg_price: number };
type ProductSql = { side: Side; entity_id: string; name: string; brand: string | null; appearances: number; answers: number; avg_position: number; best_position: number; prices: PriceStats[]; merchants: ProductRow['merchants'] };
type EntitySql = { entity_id: string; appearances: number; position_sum: number; best_position: number };
type EntityAnswersSql = { entity_id: string; answers: number; first_position_answers: number };
type MerchantSql = { merchant_key: string; merchant: string; appearances: number; answers: number; own_appearances: number; competitor_appearances: number; position_sum: number; priced_appearances: number };
type BucketSql = { bucket: number; cards: number; own_cards: number; competitor_cards: number };

/** A json column as the driver hands it: parsed already (pg, PGlite) or text. */
const json = <T>(v: unknown): T[] => (typeof v === 'string' ? JSON.parse(v) : (v ?? [])) as T[];
const byName = (a: { name: string }, b: { name: string }) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

/** The shopping visibility blocks of one selection. */
export async function shoppingMetrics(db: Knex, s: ShoppingSelection): Promise<Omit<ShoppingMetrics, 'schedule' | 'models'>> {
  const entities = await trackedEntities(db, s.websiteId);
  const brand = entities.find((e) => e.is_self);
  const wanted = s.competitorIds ? new Set(s.competitorIds) : null;
  const competitors = entities.filter((e) => !e.is_self && (!wanted || wanted.has(e.id)));
  const nameOf = new Map(entities.map((e) => [e.id, e.name]));
  const q = statement(
    s,
    competitors.map((c) => c.id),
  );
  // JIT compiling this statement costs more than running it (seconds on a large website); a read-only transaction
  // scopes the setting to it
  const row = (await db.transaction(
    async (trx) => {
      await trx.raw('set local jit = off');
      // the selected cards are read by a dozen aggregates: kept in memory, not re-read from a temporary file each time
      await trx.raw(`set local work_mem = '${SHOPPING_WORK_MEM}'`);
      return (await trx.raw(q.sql, q.bindings)).rows[0];
    },
    { readOnly: true },
  )) as Record<string, unknown>;

  const cardDays = new Map(json<DayCards>(row.card_days).map((r) => [r.day, r]));
  const flagDays = new Map(json<DayFlags>(row.answer_flags).map((r) => [r.day, r]));
  const days = json<DayAnswers>(row.answer_days).map((r) => ({ day: r.day, answers: num(r.answers), answers_with_products: num(flagDays.get(r.day)?.answers_with_products) }));
  const sumCards = (f: (r: DayCards) => unknown) => [...cardDays.values()].reduce((acc, r) => acc + num(f(r)), 0);
  const sumFlags = (f: (r: DayFlags) => unknown) => [...flagDays.values()].reduce((acc, r) => acc + num(f(r)), 0);
  const answers = days.reduce((acc, d) => acc + d.answers, 0);
  const answersWithProducts = days.reduce((acc, d) => acc + d.answers_with_products, 0);
  const own = sumCards((r) => r.own_cards);
  const competitor = sumCards((r) => r.competitor_cards);
  const cards = sumCards((r) => r.cards);
  const ownAnswers = sumFlags((r) => r.answers_with_own_products);
  const bests = [...cardDays.values()].map((r) => r.best_own_position).filter((p): p is number => p !== null).map(Number);
  const entityProducts = json<{ side: Side; entity_id: string; products: number }>(row.entity_products);
  const productsOf = (side: Side) => entityProducts.filter((e) => e.side === side).reduce((acc, e) => acc + num(e.products), 0);

  const summary: ShoppingMetrics['summary'] = {
    answers,
    answers_with_products: answersWithProducts,
    product_answer_rate: rate(answersWithProducts, answers),
    answers_with_own_products: ownAnswers,
    product_visibility_rate: rate(ownAnswers, answers),
    own_share_of_product_answers: rate(ownAnswers, answersWithProducts),
    answers_with_competitor_products: sumFlags((r) => r.answers_with_competitor_products),
    own_product_appearances: own,
    competitor_product_appearances: competitor,
    share_of_product_appearances: rate(own, own + competitor),
    avg_own_position: mean(sumCards((r) => r.own_position_sum), own),
    best_own_position: bests.length ? Math.min(...bests) : null,
    own_first_position_answers: sumFlags((r) => r.own_first_position_answers),
    own_products: productsOf('own'),
    competitor_products: productsOf('competitor'),
  };

  const priceRows = json<PriceRow>(row.prices);
  const perCurrency = priceRows.filter((r) => num(r.all_sides) === 1);
  const perSide = (currency: string, side: Side) => priceRows.find((r) => r.currency === currency && num(r.all_sides) === 0 && num(r.all_entities) === 1 && r.side === side);
  const byCards = <T extends { currency: string }>(n: (r: T) => number) => (a: T, b: T) => n(b) - n(a) || (a.currency < b.currency ? -1 : a.currency > b.currency ? 1 : 0);

  const priceRanges = perCurrency
    .map((r) => ({
      currency: r.currency,
      cards: num(r.cards),
      own_cards: num(perSide(r.currency, 'own')?.cards),
      competitor_cards: num(perSide(r.currency, 'competitor')?.cards),
      min_price: price(r.min_price),
      median_price: price(r.median_price),
      avg_price: price(r.avg_price),
      max_price: price(r.max_price),
    }))
    .sort(byCards((r) => r.cards));

  const merchantRows = json<MerchantSql>(row.merchants);
  const offer_summary: ShoppingMetrics['offer_summary'] = {
    cards,
    own_cards: own,
    competitor_cards: competitor,
    other_cards: cards - own - competitor,
    priced_cards: sumCards((r) => r.priced_cards),
    priced_rate: rate(sumCards((r) => r.priced_cards), cards),
    own_priced_cards: sumCards((r) => r.own_priced_cards),
    competitor_priced_cards: sumCards((r) => r.competitor_priced_cards),
    merchants: merchantRows.length,
    cards_without_merchant: sumCards((r) => r.cards_without_merchant),
    currencies: priceRanges.map((r) => r.currency),
    price_ranges: priceRanges,
  };

  const productRow = (r: ProductSql): ProductRow => {
    const prices = json<PriceStats>(r.prices).map((p) => ({ currency: p.currency, cards: num(p.cards), min_price: price(p.min_price), median_price: price(p.median_price), max_price: price(p.max_price) }));
    const main = prices[0];
    return {
      name: r.name,
      brand: r.brand,
      entity_id: r.entity_id,
      entity_name: nameOf.get(r.entity_id) ?? '',
      appearances: num(r.appearances),
      answers: num(r.answers),
      avg_position: round2(Number(r.avg_position)),
      best_position: num(r.best_position),
      currency: main?.currency ?? null,
      min_price: main?.min_price ?? null,
      median_price: main?.median_price ?? null,
      max_price: main?.max_price ?? null,
      prices,
      merchants: json<ProductRow['merchants'][number]>(r.merchants).map((m) => ({ merchant: m.merchant, merchant_key: m.merchant_key, appearances: num(m.appearances) })),
    };
  };
  const productRows = json<ProductSql>(row.top);

  const entityStats = new Map(json<EntitySql>(row.entities).map((r) => [r.entity_id, r]));
  const entityAnswers = new Map(json<EntityAnswersSql>(row.entity_answers).map((r) => [r.entity_id, r]));
  const entityProductCount = new Map(entityProducts.map((r) => [r.entity_id, num(r.products)]));
  const tracked = [...(brand ? [brand] : []), ...competitors];
  const trackedAppearances = tracked.reduce((acc, e) => acc + num(entityStats.get(e.id)?.appearances), 0);
  const breakdown = tracked.map((e) => {
    const r = entityStats.get(e.id);
    const a = entityAnswers.get(e.id);
    const appearances = num(r?.appearances);
    return {
      entity_id: e.id,
      name: e.name,
      is_self: e.is_self,
      appearances,
      answers: num(a?.answers),
      answer_rate: rate(num(a?.answers), answers),
      share_of_appearances: rate(appearances, trackedAppearances),
      avg_position: mean(num(r?.position_sum), appearances),
      best_position: r ? num(r.best_position) : null,
      first_position_answers: num(a?.first_position_answers),
      products: entityProductCount.get(e.id) ?? 0,
    };
  });
  const competitor_breakdown = [...breakdown.filter((b) => b.is_self), ...breakdown.filter((b) => !b.is_self).sort((a, b) => b.appearances - a.appearances || byName(a, b))];

  const withMerchant = merchantRows.reduce((acc, m) => acc + num(m.appearances), 0);
  const merchant_breakdown = merchantRows.map((m) => ({
    merchant: m.merchant,
    merchant_key: m.merchant_key,
    appearances: num(m.appearances),
    answers: num(m.answers),
    share_of_appearances: rate(num(m.appearances), withMerchant),
    own_appearances: num(m.own_appearances),
    competitor_appearances: num(m.competitor_appearances),
    own_share: rate(num(m.own_appearances), num(m.appearances)),
    avg_position: round2(num(m.position_sum) / num(m.appearances)),
    priced_appearances: num(m.priced_appearances),
  }));

  const buckets = new Map(json<BucketSql>(row.positions).map((b) => [num(b.bucket), b]));
  const position_distribution = Array.from({ length: LAST_POSITION_BUCKET }, (_, i) => {
    const b = buckets.get(i + 1);
    const n = { cards: num(b?.cards), own: num(b?.own_cards), competitor: num(b?.competitor_cards) };
    return {
      position: i + 1 === LAST_POSITION_BUCKET ? `${LAST_POSITION_BUCKET}+` : String(i + 1),
      cards: n.cards,
      own_cards: n.own,
      competitor_cards: n.competitor,
      other_cards: n.cards - n.own - n.competitor,
      own_rate: rate(n.own, own),
      competitor_rate: rate(n.competitor, competitor),
      own_share: rate(n.own, n.cards),
    };
  });

  const price_comparison = [...new Set(priceRows.map((r) => r.currency))]
    .map((currency) => {
      const o = perSide(currency, 'own');
      const c = perSide(currency, 'competitor');
      const oMed = o ? price(o.median_price) : null;
      const cMed = c ? price(c.median_price) : null;
      return {
        currency,
        own_cards: num(o?.cards),
        own_min_price: o ? price(o.min_price) : null,
        own_median_price: oMed,
        own_max_price: o ? price(o.max_price) : null,
        competitor_cards: num(c?.cards),
        competitor_min_price: c ? price(c.min_price) : null,
        competitor_median_price: cMed,
        competitor_max_price: c ? price(c.max_price) : null,
        own_vs_competitor_median_pct: oMed !== null && cMed !== null && cMed !== 0 ? round2((100 * (oMed - cMed)) / cMed) : null,
        price_position: oMed === null || cMed === null ? null : oMed < cMed ? ('below' as const) : oMed > cMed ? ('above' as const) : ('equal' as const),
        competitors: priceRows
          .filter((r) => r.currency === currency && r.side === 'competitor' && num(r.all_entities) === 0)
          .map((r) => ({ entity_id: r.entity_id!, name: nameOf.get(r.entity_id!) ?? '', cards: num(r.cards), min_price: price(r.min_price), median_price: price(r.median_price), max_price: price(r.max_price) }))
          .sort((a, b) => b.cards - a.cards || byName(a, b)),
      };
    })
    .filter((r) => r.own_cards + r.competitor_cards > 0)
    .sort(byCards((r) => r.own_cards + r.competitor_cards));

  const trend = days.map((d) => {
    const c = cardDays.get(d.day);
    const f = flagDays.get(d.day);
    const ownCards = num(c?.own_cards);
    return {
      date: d.day,
      answers: d.answers,
      answers_with_products: d.answers_with_products,
      answers_with_own_products: num(f?.answers_with_own_products),
      own_product_appearances: ownCards,
      competitor_product_appearances: num(c?.competitor_cards),
      product_visibility_rate: rate(num(f?.answers_with_own_products), d.answers),
      avg_own_position: mean(num(c?.own_position_sum), ownCards),
    };
  });

  return {
    summary,
    offer_summary,
    top_own_products: productRows.filter((r) => r.side === 'own').map(productRow),
    top_competitor_products: productRows.filter((r) => r.side === 'competitor').map(productRow),
    competitor_breakdown,
    merchant_breakdown,
    position_distribution,
    price_comparison,
    trend,
  };
}

/** Of `promptIds`, those tagged with any (or all) of `tags`; tags compare exactly, as a saved view's do. */
export async function promptsTagged(db: Knex, websiteId: string, promptIds: readonly string[], tags: readonly string[], operator: 'any' | 'all'): Promise<string[]> {
  return db('rm_prompts')
    .where('website_id', websiteId)
    .whereRaw('id = any(?::uuid[])', [[...promptIds] as unknown as Knex.RawBinding])
    .whereRaw(operator === 'all' ? 'tags @> ?::text[]' : 'tags && ?::text[]', [[...tags] as unknown as Knex.RawBinding])
    .pluck('id');
}
