import type { Knex } from 'knex';
import { trackedEntities } from '../responses/list';
import { competitorBreakdown } from './competitors';
import { merchantBreakdown } from './merchants';
import { offers } from './offers';
import { positionDistribution } from './positions';
import { priceComparison, priceRanges } from './prices';
import { topProducts } from './products';
import { ShoppingCache, targetMatches } from './cards-cache';
import { fastBlocks } from './fast';
import { blocksOf, SHOPPING_WORK_MEM, statement, wholeWordPattern } from './sql';
import { totals } from './totals';
import { trend } from './trend';
import type { ShoppingBlocks, ShoppingMetrics, ShoppingSelection } from './types';
import { visibility } from './visibility';

export { LAST_POSITION_BUCKET, wholeWordPattern } from './sql';
export { rate } from './numbers';
export type { PriceStats, ProductRow, ShoppingMetrics, ShoppingSelection } from './types';

/**
 * Shopping visibility (POST /api/v1/metrics/shopping): what the answers of the shopping models showed as product
 * cards, read from rm_responses (the answers, for denominators) and rm_response_products (one row per card, with the
 * entity it belongs to as analysis attributed it). Aggregation happens in SQL (./sql: one statement, one json column
 * per block); one small function per part of the answer shapes and rounds it (./visibility, ./offers, ./prices,
 * ./products, ./competitors, ./merchants, ./positions, ./trend, over ./totals).
 *
 * Every card of a selected answer falls on one side:
 * - own: a card of the brand (its brand, else its name, names the brand); with target identifiers, only those whose
 *   name or brand holds one of them as a whole word, case-insensitive;
 * - competitor: a card of one of the selected competitors (all of the website's by default);
 * - other: anything else (an untracked brand, a competitor not selected, a brand card outside the targets).
 */

const caches = new WeakMap<Knex, ShoppingCache>();
/** The shopping cards held for this database in this process. */
export function shoppingCache(db: Knex): ShoppingCache {
  let c = caches.get(db);
  if (!c) caches.set(db, (c = new ShoppingCache()));
  return c;
}

/** The blocks from the plain statement (./sql): what the held cards (./fast) compute the same rows as. */
export async function statementBlocks(db: Knex, s: ShoppingSelection, competitors: readonly string[]): Promise<ShoppingBlocks> {
  const q = statement(s, competitors);
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
  return blocksOf(row);
}

/** The blocks from the website's cards held in process (./cards-cache, ./fast); the statement's for a website without a version row. */
export async function heldBlocks(db: Knex, s: ShoppingSelection, competitors: readonly string[]): Promise<ShoppingBlocks> {
  const site = await shoppingCache(db).get(db, s.websiteId);
  if (!site) return statementBlocks(db, s, competitors);
  const targets = s.targetIdentifiers?.filter((t) => t.trim() !== '') ?? [];
  let target = targets.length ? await targetMatches(db, site, wholeWordPattern(targets)) : null;
  // a refresh meanwhile may have added names: every label the pass reads is matched
  while (target && target.length < site.labels.size) target = await targetMatches(db, site, wholeWordPattern(targets));
  return fastBlocks(site, s, competitors, target);
}

/** The shopping visibility blocks of one selection (`via`: where the blocks come from; the held cards by default). */
export async function shoppingMetrics(
  db: Knex,
  s: ShoppingSelection,
  via: typeof heldBlocks = heldBlocks,
): Promise<Omit<ShoppingMetrics, 'schedule' | 'models'>> {
  const entities = await trackedEntities(db, s.websiteId);
  const brand = entities.find((e) => e.is_self);
  const wanted = s.competitorIds ? new Set(s.competitorIds) : null;
  const competitors = entities.filter((e) => !e.is_self && (!wanted || wanted.has(e.id)));
  const nameOf = new Map(entities.map((e) => [e.id, e.name]));
  const b = await via(
    db,
    s,
    competitors.map((c) => c.id),
  );
  const t = totals(b);
  const ranges = priceRanges(b.prices);
  return {
    summary: visibility(t, b.entity_products),
    offer_summary: offers(t, b.merchants.length, ranges),
    top_own_products: topProducts(b.top, 'own', nameOf),
    top_competitor_products: topProducts(b.top, 'competitor', nameOf),
    competitor_breakdown: competitorBreakdown(b, [...(brand ? [brand] : []), ...competitors], t.answers),
    merchant_breakdown: merchantBreakdown(b.merchants),
    position_distribution: positionDistribution(b.positions, t.cards.own_cards, t.cards.competitor_cards),
    price_comparison: priceComparison(b.prices, nameOf),
    trend: trend(t),
  };
}

/** Of `promptIds`, those tagged with any (or all) of `tags`; tags compare exactly, as a saved view's do. */
export async function promptsTagged(
  db: Knex,
  websiteId: string,
  promptIds: readonly string[],
  tags: readonly string[],
  operator: 'any' | 'all',
): Promise<string[]> {
  return db('rm_prompts')
    .where('website_id', websiteId)
    .whereRaw('id = any(?::uuid[])', [[...promptIds] as unknown as Knex.RawBinding])
    .whereRaw(operator === 'all' ? 'tags @> ?::text[]' : 'tags && ?::text[]', [[...tags] as unknown as Knex.RawBinding])
    .pluck('id');
}
