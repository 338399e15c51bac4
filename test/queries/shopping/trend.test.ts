import { describe, expect, it } from 'vitest';
import { totals } from '../../../queries/shopping/totals';
import { trend } from '../../../queries/shopping/trend';
import { cardDay } from '../../support/shopping';

describe('shopping trend: per day', () => {
  it("given two days, one without cards, then one point per day with answers, the brand's visibility and position", () => {
    const t = totals({
      answer_days: [
        { day: '2026-01-01', answers: 4 },
        { day: '2026-01-02', answers: 3 },
      ],
      card_days: [cardDay('2026-01-01', { cards: 5, own_cards: 2, competitor_cards: 1, own_position_sum: 5, best_own_position: 1 })],
      answer_flags: [
        {
          day: '2026-01-01',
          answers_with_products: 3,
          answers_with_own_products: 1,
          answers_with_competitor_products: 1,
          own_first_position_answers: 0,
        },
      ],
    });
    expect(trend(t)).toEqual([
      {
        date: '2026-01-01',
        answers: 4,
        answers_with_products: 3,
        answers_with_own_products: 1,
        own_product_appearances: 2,
        competitor_product_appearances: 1,
        product_visibility_rate: 25,
        avg_own_position: 2.5,
      },
      {
        date: '2026-01-02',
        answers: 3,
        answers_with_products: 0,
        answers_with_own_products: 0,
        own_product_appearances: 0,
        competitor_product_appearances: 0,
        product_visibility_rate: 0,
        avg_own_position: null,
      },
    ]);
  });
});
