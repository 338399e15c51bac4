import { describe, expect, it } from 'vitest';
import { totals } from '../../../queries/shopping/totals';
import { visibility } from '../../../queries/shopping/visibility';
import { cardDay } from '../../support/shopping';

describe('shopping visibility: the summary', () => {
  it('given answers, cards and products, then the rates are percentages of the right denominators, to two decimals', () => {
    const t = totals({
      answer_days: [{ day: 'd1', answers: 30 }],
      card_days: [cardDay('d1', { cards: 12, own_cards: 4, competitor_cards: 6, own_position_sum: 10, best_own_position: 1 })],
      answer_flags: [
        { day: 'd1', answers_with_products: 9, answers_with_own_products: 3, answers_with_competitor_products: 5, own_first_position_answers: 2 },
      ],
    });
    const s = visibility(t, [
      { side: 'own', entity_id: 'b', products: 2 },
      { side: 'competitor', entity_id: 'c1', products: 3 },
      { side: 'competitor', entity_id: 'c2', products: '4' as unknown as number },
    ]);
    expect(s).toEqual({
      answers: 30,
      answers_with_products: 9,
      product_answer_rate: 30,
      answers_with_own_products: 3,
      product_visibility_rate: 10,
      own_share_of_product_answers: 33.33,
      answers_with_competitor_products: 5,
      own_product_appearances: 4,
      competitor_product_appearances: 6,
      share_of_product_appearances: 40,
      avg_own_position: 2.5,
      best_own_position: 1,
      own_first_position_answers: 2,
      own_products: 2,
      competitor_products: 7,
    });
  });

  it('given no answers at all, then every rate is 0 and the positions are null', () => {
    const s = visibility(totals({ answer_days: [], card_days: [], answer_flags: [] }), []);
    expect(s).toMatchObject({
      answers: 0,
      product_answer_rate: 0,
      product_visibility_rate: 0,
      share_of_product_appearances: 0,
      avg_own_position: null,
      best_own_position: null,
      own_products: 0,
    });
  });
});
