import { describe, expect, it } from 'vitest';
import { merchantBreakdown } from '../../../queries/shopping/merchants';

describe('shopping merchants: the breakdown per merchant', () => {
  it("given merchants in the statement's order, then that order, each with its share of the cards that name a merchant and its average position", () => {
    const out = merchantBreakdown([
      {
        merchant_key: 'amazon',
        merchant: 'Amazon',
        appearances: 6,
        answers: 4,
        own_appearances: 3,
        competitor_appearances: 2,
        position_sum: 10,
        priced_appearances: 5,
      },
      {
        merchant_key: 'ebay',
        merchant: 'eBay',
        appearances: '2' as unknown as number,
        answers: 1,
        own_appearances: 0,
        competitor_appearances: 2,
        position_sum: 7,
        priced_appearances: 0,
      },
    ]);
    expect(out).toEqual([
      {
        merchant: 'Amazon',
        merchant_key: 'amazon',
        appearances: 6,
        answers: 4,
        share_of_appearances: 75,
        own_appearances: 3,
        competitor_appearances: 2,
        own_share: 50,
        avg_position: 1.67,
        priced_appearances: 5,
      },
      {
        merchant: 'eBay',
        merchant_key: 'ebay',
        appearances: 2,
        answers: 1,
        share_of_appearances: 25,
        own_appearances: 0,
        competitor_appearances: 2,
        own_share: 0,
        avg_position: 3.5,
        priced_appearances: 0,
      },
    ]);
  });

  it('given no merchant, then an empty breakdown', () => {
    expect(merchantBreakdown([])).toEqual([]);
  });
});
