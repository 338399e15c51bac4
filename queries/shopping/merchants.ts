import { num, rate, round2 } from './numbers';
import type { MerchantSql, ShoppingMetrics } from './types';

/** Per merchant (in the statement's order: most appearances first): its cards by side, answers and positions. */
export function merchantBreakdown(rows: readonly MerchantSql[]): ShoppingMetrics['merchant_breakdown'] {
  const withMerchant = rows.reduce((acc, m) => acc + num(m.appearances), 0);
  return rows.map((m) => ({
    merchant: m.merchant,
    merchant_key: m.merchant_key,
    appearances: num(m.appearances),
    answers: num(m.answers),
    share_of_appearances: rate(num(m.appearances), withMerchant),
    own_appearances: num(m.own_appearances),
    competitor_appearances: num(m.competitor_appearances),
    own_share: rate(num(m.own_appearances), num(m.appearances)),
    avg_position: round2(num(m.position_sum) / num(m.appearances)),
    priced_appearances: num(m.priced_appearances),
  }));
}
