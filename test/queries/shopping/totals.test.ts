import { describe, expect, it } from 'vitest';
import { totals } from '../../../queries/shopping/totals';

const card = (day: string, over: Record<string, unknown> = {}) => ({
  day,
  cards: 10,
  own_cards: 3,
  competitor_cards: 4,
  priced_cards: 6,
  own_priced_cards: 2,
  competitor_priced_cards: 3,
  cards_without_merchant: 1,
  own_position_sum: 7.5,
  best_own_position: 2,
  ...over,
});
const flags = (day: string, n: number) => ({
  day,
  answers_with_products: n,
  answers_with_own_products: n - 1,
  answers_with_competitor_products: n - 2,
  own_first_position_answers: 1,
});

describe('shopping totals: per day and over the selection', () => {
  it('given days with answers, cards and flags (some counts as text), then each count is summed over the days', () => {
    const t = totals({
      answer_days: [
        { day: '2026-01-01', answers: 10 },
        { day: '2026-01-02', answers: '5' as unknown as number },
      ],
      card_days: [card('2026-01-01'), card('2026-01-02', { cards: '20', best_own_position: 1 })],
      answer_flags: [flags('2026-01-01', 4), flags('2026-01-02', 3)],
    });
    expect(t.answers).toBe(15);
    expect(t.answersWithProducts).toBe(7);
    expect(t.cards).toEqual({
      cards: 30,
      own_cards: 6,
      competitor_cards: 8,
      priced_cards: 12,
      own_priced_cards: 4,
      competitor_priced_cards: 6,
      cards_without_merchant: 2,
      own_position_sum: 15,
    });
    expect(t.flags).toEqual({
      answers_with_products: 7,
      answers_with_own_products: 5,
      answers_with_competitor_products: 3,
      own_first_position_answers: 2,
    });
    expect(t.bestOwnPosition).toBe(1);
    expect(t.days).toEqual([
      { day: '2026-01-01', answers: 10, answers_with_products: 4 },
      { day: '2026-01-02', answers: 5, answers_with_products: 3 },
    ]);
  });

  it('given a day with answers but no cards, then it counts its answers and shows no products; no brand card means no best position', () => {
    const t = totals({
      answer_days: [{ day: '2026-01-03', answers: 2 }],
      card_days: [card('2026-01-04', { best_own_position: null })],
      answer_flags: [],
    });
    expect(t.days).toEqual([{ day: '2026-01-03', answers: 2, answers_with_products: 0 }]);
    expect(t.bestOwnPosition).toBeNull();
    expect(t.flags.answers_with_own_products).toBe(0);
  });
});
