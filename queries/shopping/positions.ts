import { num, rate } from './numbers';
import { LAST_POSITION_BUCKET } from './sql';
import type { BucketSql, ShoppingMetrics } from './types';

/** Cards per position 1 to LAST_POSITION_BUCKET ("10+" holds the rest), every bucket listed, by side. */
export function positionDistribution(
  rows: readonly BucketSql[],
  ownCards: number,
  competitorCards: number,
): ShoppingMetrics['position_distribution'] {
  const buckets = new Map(rows.map((b) => [num(b.bucket), b]));
  return Array.from({ length: LAST_POSITION_BUCKET }, (_, i) => {
    const b = buckets.get(i + 1);
    const n = { cards: num(b?.cards), own: num(b?.own_cards), competitor: num(b?.competitor_cards) };
    return {
      position: i + 1 === LAST_POSITION_BUCKET ? `${LAST_POSITION_BUCKET}+` : String(i + 1),
      cards: n.cards,
      own_cards: n.own,
      competitor_cards: n.competitor,
      other_cards: n.cards - n.own - n.competitor,
      own_rate: rate(n.own, ownCards),
      competitor_rate: rate(n.competitor, competitorCards),
      own_share: rate(n.own, n.cards),
    };
  });
}
