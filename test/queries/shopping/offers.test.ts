import { describe, expect, it } from 'vitest';
import { offers } from '../../../queries/shopping/offers';
import { totals } from '../../../queries/shopping/totals';

describe('shopping offers: the offer summary', () => {
  it('given cards by side, priced and without a merchant, then the counts, the priced rate, the merchants and the currencies of the ranges', () => {
    const t = totals({
      answer_days: [{ day: 'd1', answers: 5 }],
      card_days: [
        {
          day: 'd1',
          cards: 8,
          own_cards: 3,
          competitor_cards: 2,
          priced_cards: 6,
          own_priced_cards: 2,
          competitor_priced_cards: 2,
          cards_without_merchant: 1,
          own_position_sum: 4,
          best_own_position: 1,
        },
      ],
      answer_flags: [],
    });
    const ranges = [
      { currency: 'USD', cards: 4, own_cards: 2, competitor_cards: 1, min_price: 1, median_price: 2, avg_price: 2, max_price: 3 },
      { currency: 'EUR', cards: 2, own_cards: 0, competitor_cards: 1, min_price: 1, median_price: 1, avg_price: 1, max_price: 1 },
    ];
    expect(offers(t, 3, ranges)).toEqual({
      cards: 8,
      own_cards: 3,
      competitor_cards: 2,
      other_cards: 3,
      priced_cards: 6,
      priced_rate: 75,
      own_priced_cards: 2,
      competitor_priced_cards: 2,
      merchants: 3,
      cards_without_merchant: 1,
      currencies: ['USD', 'EUR'],
      price_ranges: ranges,
    });
  });
});
