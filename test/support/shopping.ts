import type { DayCards } from '../../queries/shopping/types';

/** A position bucket of the shopping answer that no card stands at (`position` '1' to '9', or '10+'): every count and rate 0. */
export const emptyPositionBucket = (position: string) => ({
  position,
  cards: 0,
  own_cards: 0,
  competitor_cards: 0,
  other_cards: 0,
  own_rate: 0,
  competitor_rate: 0,
  own_share: 0,
});

/** A day's card counts as the shopping statement returns them (card_days): every count 0 and no own card's position, but those given. */
export const cardDay = (day: string, counts: Partial<Omit<DayCards, 'day'>>): DayCards => ({
  day,
  cards: 0,
  own_cards: 0,
  competitor_cards: 0,
  priced_cards: 0,
  own_priced_cards: 0,
  competitor_priced_cards: 0,
  cards_without_merchant: 0,
  own_position_sum: 0,
  best_own_position: null,
  ...counts,
});

interface PriceRow {
  currency: string;
  cards: number;
  min_price: number;
  median_price: number;
  max_price: number;
}

/** A top product's price fields: the flat figures are those of its first currency (the one of most cards), then each currency's row. */
export const productPrices = (...rows: [PriceRow, ...PriceRow[]]) => {
  const [{ currency, min_price, median_price, max_price }] = rows;
  return { currency, min_price, median_price, max_price, prices: rows };
};
