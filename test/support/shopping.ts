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
