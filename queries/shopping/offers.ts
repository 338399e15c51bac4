import { rate } from './numbers';
import type { Totals } from './totals';
import type { ShoppingMetrics } from './types';

/** The offers: cards by side, priced cards, merchants, currencies and their price ranges. */
export function offers(
  t: Totals,
  merchants: number,
  priceRanges: ShoppingMetrics['offer_summary']['price_ranges'],
): ShoppingMetrics['offer_summary'] {
  const c = t.cards;
  return {
    cards: c.cards,
    own_cards: c.own_cards,
    competitor_cards: c.competitor_cards,
    other_cards: c.cards - c.own_cards - c.competitor_cards,
    priced_cards: c.priced_cards,
    priced_rate: rate(c.priced_cards, c.cards),
    own_priced_cards: c.own_priced_cards,
    competitor_priced_cards: c.competitor_priced_cards,
    merchants,
    cards_without_merchant: c.cards_without_merchant,
    currencies: priceRanges.map((r) => r.currency),
    price_ranges: priceRanges,
  };
}
