import { describe, expect, it } from 'vitest';
import { productRow, topProducts } from '../../../queries/shopping/products';
import type { ProductSql } from '../../../queries/shopping/types';

const names = new Map([
  ['b', 'Acme'],
  ['c1', 'Globex'],
]);
const sql = (side: ProductSql['side'], entity_id: string, name: string, prices: unknown = []): ProductSql => ({
  side,
  entity_id,
  name,
  brand: null,
  appearances: '4' as unknown as number,
  answers: 3,
  avg_position: 1.666666,
  best_position: 1,
  prices: prices as ProductSql['prices'],
  merchants: [{ merchant: 'Shop', merchant_key: 'shop', appearances: 2 }],
});

describe('shopping products: the top products of each side', () => {
  it('given a product with prices in two currencies (as text), then the first is its flat price and all are listed, rounded', () => {
    const p = productRow(
      sql(
        'own',
        'b',
        'Widget',
        JSON.stringify([
          { currency: 'USD', cards: 3, min_price: 1.005, median_price: 2.5, max_price: 3 },
          { currency: 'EUR', cards: 1, min_price: 2, median_price: 2, max_price: 2 },
        ]),
      ),
      names,
    );
    expect(p).toEqual({
      name: 'Widget',
      brand: null,
      entity_id: 'b',
      entity_name: 'Acme',
      appearances: 4,
      answers: 3,
      avg_position: 1.67,
      best_position: 1,
      currency: 'USD',
      min_price: 1.01,
      median_price: 2.5,
      max_price: 3,
      prices: [
        { currency: 'USD', cards: 3, min_price: 1.01, median_price: 2.5, max_price: 3 },
        { currency: 'EUR', cards: 1, min_price: 2, median_price: 2, max_price: 2 },
      ],
      merchants: [{ merchant: 'Shop', merchant_key: 'shop', appearances: 2 }],
    });
  });

  it('given an unpriced product of an entity no longer tracked, then null prices and an empty entity name', () => {
    expect(productRow(sql('competitor', 'gone', 'Thing'), names)).toMatchObject({
      entity_name: '',
      currency: null,
      min_price: null,
      median_price: null,
      max_price: null,
      prices: [],
    });
  });

  it('given both sides ranked together, then each side keeps its own, in rank order', () => {
    const rows = [sql('own', 'b', 'A'), sql('competitor', 'c1', 'B'), sql('own', 'b', 'C')];
    expect(topProducts(rows, 'own', names).map((p) => p.name)).toEqual(['A', 'C']);
    expect(topProducts(rows, 'competitor', names).map((p) => p.name)).toEqual(['B']);
  });
});
