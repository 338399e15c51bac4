import { byCards, byName, num, price, round2 } from './numbers';
import type { PriceRow, ShoppingMetrics, Side } from './types';

/** The row of one currency and one side (all of that side's entities). */
const perSide = (rows: readonly PriceRow[], currency: string, side: Side) =>
  rows.find((r) => r.currency === currency && num(r.all_sides) === 0 && num(r.all_entities) === 1 && r.side === side);

/** Per currency: its priced cards (own, competitor), min, median, average and max price; most cards first. */
export function priceRanges(rows: readonly PriceRow[]): ShoppingMetrics['offer_summary']['price_ranges'] {
  return rows
    .filter((r) => num(r.all_sides) === 1)
    .map((r) => ({
      currency: r.currency,
      cards: num(r.cards),
      own_cards: num(perSide(rows, r.currency, 'own')?.cards),
      competitor_cards: num(perSide(rows, r.currency, 'competitor')?.cards),
      min_price: price(r.min_price),
      median_price: price(r.median_price),
      avg_price: price(r.avg_price),
      max_price: price(r.max_price),
    }))
    .sort(byCards((r) => r.cards));
}

/** Per currency with brand or competitor cards: the brand's prices against the competitors', and each competitor's. */
export function priceComparison(rows: readonly PriceRow[], nameOf: ReadonlyMap<string, string>): ShoppingMetrics['price_comparison'] {
  return [...new Set(rows.map((r) => r.currency))]
    .map((currency) => {
      const o = perSide(rows, currency, 'own');
      const c = perSide(rows, currency, 'competitor');
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
        price_position:
          oMed === null || cMed === null ? null : oMed < cMed ? ('below' as const) : oMed > cMed ? ('above' as const) : ('equal' as const),
        competitors: rows
          .filter((r) => r.currency === currency && r.side === 'competitor' && num(r.all_entities) === 0)
          .map((r) => ({
            entity_id: r.entity_id!,
            name: nameOf.get(r.entity_id!) ?? '',
            cards: num(r.cards),
            min_price: price(r.min_price),
            median_price: price(r.median_price),
            max_price: price(r.max_price),
          }))
          .sort((a, b) => b.cards - a.cards || byName(a, b)),
      };
    })
    .filter((r) => r.own_cards + r.competitor_cards > 0)
    .sort(byCards((r) => r.own_cards + r.competitor_cards));
}
