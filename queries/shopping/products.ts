import { json, num, price, round2 } from './numbers';
import type { PriceStats, ProductRow, ProductSql, Side } from './types';

/** One top product: its counts, its prices per currency (the first, with most cards, also flat) and its merchants. */
export function productRow(r: ProductSql, nameOf: ReadonlyMap<string, string>): ProductRow {
  const prices = json<PriceStats>(r.prices).map((p) => ({
    currency: p.currency,
    cards: num(p.cards),
    min_price: price(p.min_price),
    median_price: price(p.median_price),
    max_price: price(p.max_price),
  }));
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
    merchants: json<ProductRow['merchants'][number]>(r.merchants).map((m) => ({
      merchant: m.merchant,
      merchant_key: m.merchant_key,
      appearances: num(m.appearances),
    })),
  };
}

/** The top products of one side, in the statement's rank order. */
export const topProducts = (rows: readonly ProductSql[], side: Side, nameOf: ReadonlyMap<string, string>): ProductRow[] =>
  rows.filter((r) => r.side === side).map((r) => productRow(r, nameOf));
