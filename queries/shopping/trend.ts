import { mean, num, rate } from './numbers';
import type { Totals } from './totals';
import type { ShoppingMetrics } from './types';

/** Per day with answers: answers, cards by side, the brand's visibility and average position. */
export function trend(t: Totals): ShoppingMetrics['trend'] {
  return t.days.map((d) => {
    const c = t.cardDays.get(d.day);
    const f = t.flagDays.get(d.day);
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
}
