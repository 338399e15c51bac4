import { mean, num, rate } from './numbers';
import type { Totals } from './totals';
import type { ShoppingBlocks, ShoppingMetrics, Side } from './types';

/** The summary: how often answers show cards, the brand's cards among them, and where they stand. */
export function visibility(t: Totals, entityProducts: ShoppingBlocks['entity_products']): ShoppingMetrics['summary'] {
  const own = t.cards.own_cards;
  const competitor = t.cards.competitor_cards;
  const ownAnswers = t.flags.answers_with_own_products;
  const productsOf = (side: Side) => entityProducts.filter((e) => e.side === side).reduce((acc, e) => acc + num(e.products), 0);
  return {
    answers: t.answers,
    answers_with_products: t.answersWithProducts,
    product_answer_rate: rate(t.answersWithProducts, t.answers),
    answers_with_own_products: ownAnswers,
    product_visibility_rate: rate(ownAnswers, t.answers),
    own_share_of_product_answers: rate(ownAnswers, t.answersWithProducts),
    answers_with_competitor_products: t.flags.answers_with_competitor_products,
    own_product_appearances: own,
    competitor_product_appearances: competitor,
    share_of_product_appearances: rate(own, own + competitor),
    avg_own_position: mean(t.cards.own_position_sum, own),
    best_own_position: t.bestOwnPosition,
    own_first_position_answers: t.flags.own_first_position_answers,
    own_products: productsOf('own'),
    competitor_products: productsOf('competitor'),
  };
}
