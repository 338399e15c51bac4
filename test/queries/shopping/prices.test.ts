import { describe, expect, it } from 'vitest';
import { priceComparison, priceRanges } from '../../../queries/shopping/prices';
import type { PriceRow } from '../../../queries/shopping/types';

const row = (currency: string, side: PriceRow['side'], entity_id: string | null, cards: number, median: number): PriceRow => ({
  currency,
  side,
  entity_id,
  all_sides: side === null ? 1 : 0,
  all_entities: entity_id === null ? 1 : 0,
  cards,
  min_price: median / 2,
  max_price: median * 2,
  median_price: median,
  avg_price: median + 0.004,
});

const rows: PriceRow[] = [
  row('EUR', null, null, 5, 20),
  row('EUR', 'competitor', null, 5, 20),
  row('EUR', 'competitor', 'c1', 5, 20),
  row('USD', null, null, 9, 10.005),
  row('USD', 'own', null, 3, 9),
  row('USD', 'competitor', null, 4, 12),
  row('USD', 'competitor', 'c1', 1, 15),
  row('USD', 'competitor', 'c2', 3, 11),
  row('USD', 'other', null, 2, 30),
  row('GBP', null, null, 2, 8),
  row('GBP', 'other', null, 2, 8),
];
const names = new Map([
  ['c1', 'Globex'],
  ['c2', 'Initech'],
]);

describe('shopping prices', () => {
  it('given priced cards in three currencies, then one range per currency, most cards first, prices to two decimals', () => {
    expect(priceRanges(rows)).toEqual([
      { currency: 'USD', cards: 9, own_cards: 3, competitor_cards: 4, min_price: 5, median_price: 10.01, avg_price: 10.01, max_price: 20.01 },
      { currency: 'EUR', cards: 5, own_cards: 0, competitor_cards: 5, min_price: 10, median_price: 20, avg_price: 20, max_price: 40 },
      { currency: 'GBP', cards: 2, own_cards: 0, competitor_cards: 0, min_price: 4, median_price: 8, avg_price: 8, max_price: 16 },
    ]);
  });

  it("given brand and competitor cards, then the brand median against the competitors', each competitor listed by cards; a currency of other cards only is left out", () => {
    const [usd, eur, ...rest] = priceComparison(rows, names);
    expect(rest).toEqual([]);
    expect(usd).toMatchObject({
      currency: 'USD',
      own_cards: 3,
      own_median_price: 9,
      competitor_cards: 4,
      competitor_median_price: 12,
      own_vs_competitor_median_pct: -25,
      price_position: 'below',
    });
    expect(usd.competitors.map((c) => [c.name, c.cards])).toEqual([
      ['Initech', 3],
      ['Globex', 1],
    ]);
    expect(eur).toMatchObject({ currency: 'EUR', own_cards: 0, own_median_price: null, own_vs_competitor_median_pct: null, price_position: null });
  });
});
