import { byName, mean, num, rate } from './numbers';
import type { ShoppingBlocks, ShoppingMetrics, TrackedEntity } from './types';

/** Per tracked entity (the brand first, then competitors by appearances and name): its cards, answers and positions. */
export function competitorBreakdown(
  b: Pick<ShoppingBlocks, 'entities' | 'entity_answers' | 'entity_products'>,
  tracked: readonly TrackedEntity[],
  answers: number,
): ShoppingMetrics['competitor_breakdown'] {
  const entityStats = new Map(b.entities.map((r) => [r.entity_id, r]));
  const entityAnswers = new Map(b.entity_answers.map((r) => [r.entity_id, r]));
  const entityProductCount = new Map(b.entity_products.map((r) => [r.entity_id, num(r.products)]));
  const trackedAppearances = tracked.reduce((acc, e) => acc + num(entityStats.get(e.id)?.appearances), 0);
  const breakdown = tracked.map((e) => {
    const r = entityStats.get(e.id);
    const a = entityAnswers.get(e.id);
    const appearances = num(r?.appearances);
    return {
      entity_id: e.id,
      name: e.name,
      is_self: e.is_self,
      appearances,
      answers: num(a?.answers),
      answer_rate: rate(num(a?.answers), answers),
      share_of_appearances: rate(appearances, trackedAppearances),
      avg_position: mean(num(r?.position_sum), appearances),
      best_position: r ? num(r.best_position) : null,
      first_position_answers: num(a?.first_position_answers),
      products: entityProductCount.get(e.id) ?? 0,
    };
  });
  return [
    ...breakdown.filter((x) => x.is_self),
    ...breakdown.filter((x) => !x.is_self).sort((x, y) => y.appearances - x.appearances || byName(x, y)),
  ];
}
