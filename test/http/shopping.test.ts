import { beforeAll, describe, expect, it } from 'vitest';
import { MODEL_IDS, SHOPPING_MODEL_IDS, isShoppingModelId } from '../../src/domain/models';
import { SHOPPING_NOT_ENABLED } from '../../src/app/shopping';
import { call, caughtUp, type TestServer, sharedServer } from '../support/server';
import { UNKNOWN_ID, useWorld, websiteTenancyChecks, type World } from '../support/tenancy';
import { postCreated, refusedWithoutWrite } from '../support/http';
import { emptyPositionBucket, productPrices } from '../support/shopping';

let s: TestServer;
let w: World;

const [SM0, SM1] = SHOPPING_MODEL_IDS;
const OTHER_MODEL = MODEL_IDS.find((m) => !isShoppingModelId(m))!;
const PATH = '/api/v1/metrics/shopping';

const post = (path: string, body: unknown, key = w.a.key) => call(s, 'POST', path, { key, body });
const shopping = (body: Record<string, unknown>, key = w.a.key) => post(PATH, body, key);

const created = (path: string, body: unknown, key = w.a.key) => postCreated(s, key, path, body);

/** A 200 of the shopping endpoint. */
async function metrics(body: Record<string, unknown>, key = w.a.key) {
  const r = await shopping(body, key);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body;
}

/** Each case: a 4xx with exactly `error` and nothing written. */
const refused = (cases: { body: unknown; status: number; error: string | RegExp; key?: string }[]) =>
  refusedWithoutWrite(
    s,
    w.a.key,
    cases.map((c) => ({ method: 'POST', path: PATH, ...c })),
  );

/** The body's nine blocks, in the spec's order. */
const BLOCKS = [
  'summary',
  'offer_summary',
  'top_own_products',
  'top_competitor_products',
  'competitor_breakdown',
  'merchant_breakdown',
  'position_distribution',
  'price_comparison',
  'trend',
];

/**
 * The dataset every exact figure below is computed from, by hand.
 * Website Acme; competitors Globex and Initech; prompts P1 [gift, audio], P2 [audio], P3 [gift], P4 (deleted later);
 * schedule S. Days D1 2026-03-01, D2 2026-03-02, D3 2026-03-03.
 *
 *   A1  P1 SM0 D1     1 own Acme Pro Headphones (Amazon 199.99 USD)  2 Globex Sound X (amazon 149 usd)  3 Zed buds, nobody's (BestBuy 49 USD)
 *   A2  P2 SM1 D1     1 Globex Sound X (Walmart 139 USD)  2 own Acme Lite Earbuds (Amazon 99 USD)  3 Initech Beat (Walmart 120 USD)
 *   A3  P1 SM0 D2     no cards
 *   A4  P3 SM1 D2     1 own "acme pro  headphones"/ACME (Amazon 189.99 USD)  2 Initech Beat (Target 110 EUR)  12 Globex Sound X (no price, URL only)
 *   A5  P2 SM0 D3     1 Globex Sound X (Amazon 159 USD)  2 own Acme Pro Headphones (Walmart 209.99 USD)  3 own Acme Travel Case, no brand (25 USD, no merchant)
 *   A9  P2 SM1 D3 23:59:59   no cards
 *   A10 P3 SM0 D3     1 Initech Beat (Target 115 EUR)
 *   -- never counted by default:
 *   A6  P1 non-shopping model D1 (a card);  A7  P1 SM0 D2 on schedule S (own card at 1, Amazon 179 USD);  A8  P4 SM0 D1 (P4 soft-deleted)
 */
interface Data {
  site: string;
  globex: string;
  initech: string;
  schedule: string;
  p: Record<'p1' | 'p2' | 'p3' | 'p4', string>;
}
let d: Data;

const card = (name: string, brand: string | null, position: number, extra: Record<string, unknown> = {}) => ({ name, brand, position, ...extra });
const at = (merchant: string | null, price: number | null, currency: string | null) => ({ merchant, price, currency });

async function buildData(): Promise<Data> {
  const site = (await created('/api/v1/websites', { name: 'Acme', url: 'https://acme-shop.example.com' })).website.id as string;
  const globex = (await created('/api/v1/competitors', { website_id: site, name: 'Globex', url: 'https://globex.example.net' })).competitor
    .id as string;
  const initech = (await created('/api/v1/competitors', { website_id: site, name: 'Initech', url: 'https://initech.example.org' })).competitor
    .id as string;
  const prompt = async (text: string, tags: string[]) => (await created('/api/v1/prompts', { website_id: site, text, tags })).prompt.id as string;
  const p = {
    p1: await prompt('Best headphones for a gift?', ['gift', 'audio']),
    p2: await prompt('Best earbuds?', ['audio']),
    p3: await prompt('Gift ideas', ['gift']),
    p4: await prompt('Old prompt', ['gift']),
  };
  const schedule = (await created('/api/v1/prompt-schedules', { website_id: site, name: 'Shopping daily', models: [SM0], frequency: 'daily' }))
    .schedule.id as string;
  const answer = (prompt_id: string, model: string, run_at: string, products: unknown[], extra: Record<string, unknown> = {}) => ({
    prompt_id,
    model,
    run_at,
    text: 'Here are some options.',
    products,
    ...extra,
  });
  const imported = await created('/api/v1/responses/import', {
    website_id: site,
    responses: [
      answer(p.p1, SM0, '2026-03-01T10:00:00Z', [
        card('Acme Pro Headphones', 'Acme', 1, at('Amazon', 199.99, 'USD')),
        card('Globex Sound X', 'Globex', 2, at('amazon', 149, 'usd')),
        card('Noname Buds', 'Zed', 3, at('BestBuy', 49, 'USD')),
      ]),
      answer(p.p2, SM1, '2026-03-01T15:00:00Z', [
        card('Globex Sound X', 'Globex', 1, at('Walmart', 139, 'USD')),
        card('Acme Lite Earbuds', 'Acme', 2, at('Amazon', 99, 'USD')),
        card('Initech Beat', 'Initech', 3, at('Walmart', 120, 'USD')),
      ]),
      answer(p.p1, SM0, '2026-03-02T09:00:00Z', []),
      answer(p.p3, SM1, '2026-03-02T12:00:00Z', [
        card('acme pro  headphones', 'ACME', 1, at('Amazon', 189.99, 'USD')),
        card('Initech Beat', 'Initech', 2, at('Target', 110, 'EUR')),
        card('Globex Sound X', 'Globex', 12, { url: 'https://shop.globex.example.net/sound-x' }),
      ]),
      answer(p.p2, SM0, '2026-03-03T08:00:00Z', [
        card('Acme Pro Headphones', 'Acme', 2, at('Walmart', 209.99, 'USD')),
        card('Globex Sound X', 'Globex', 1, at('Amazon', 159, 'USD')),
        card('Acme Travel Case', null, 3, { price: 25, currency: 'USD' }),
      ]),
      answer(p.p2, SM1, '2026-03-03T23:59:59Z', []),
      answer(p.p3, SM0, '2026-03-03T10:00:00Z', [card('Initech Beat', 'Initech', 1, at('Target', 115, 'EUR'))]),
      answer(p.p1, OTHER_MODEL, '2026-03-01T11:00:00Z', [card('Acme Pro Headphones', 'Acme', 1, at('Amazon', 1, 'USD'))]),
      answer(p.p1, SM0, '2026-03-02T11:00:00Z', [card('Acme Pro Headphones', 'Acme', 1, at('Amazon', 179, 'USD'))], { schedule_id: schedule }),
      answer(p.p4, SM0, '2026-03-01T12:00:00Z', [card('Acme Pro Headphones', 'Acme', 1, at('Amazon', 150, 'USD'))]),
    ],
  });
  expect(imported.imported).toBe(10);
  const del = await call(s, 'DELETE', `/api/v1/prompts/${p.p4}`, { key: w.a.key, query: { website_id: site } });
  expect(del.body).toEqual({ success: true, soft_deleted: true });
  return { site, globex, initech, schedule, p };
}

useWorld(async (ctx) => {
  ({ s, w } = ctx);
  d = await buildData();
}, sharedServer);

const zeroBuckets = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => emptyPositionBucket(String(from + i)));

describe('POST /api/v1/metrics/shopping: the nine blocks', () => {
  let body: any;
  beforeAll(async () => {
    body = await metrics({ website_id: d.site });
  });

  it('given the dataset and no filters, then it reads the default schedule and both shopping models over all history', () => {
    expect(Object.keys(body)).toEqual(['schedule', 'models', ...BLOCKS]);
    expect(body.schedule).toBe('default');
    expect(body.models).toEqual([...SHOPPING_MODEL_IDS]);
  });

  it('then summary counts 7 answers (not the other model, schedule or deleted prompt), 5 with cards, 4 with own cards', () => {
    expect(body.summary).toEqual({
      answers: 7,
      answers_with_products: 5,
      product_answer_rate: 71.43, // 5/7
      answers_with_own_products: 4,
      product_visibility_rate: 57.14, // 4/7
      own_share_of_product_answers: 80, // 4/5
      answers_with_competitor_products: 5,
      own_product_appearances: 5,
      competitor_product_appearances: 7,
      share_of_product_appearances: 41.67, // 5/12
      avg_own_position: 1.8, // (1+2+1+2+3)/5
      best_own_position: 1,
      own_first_position_answers: 2, // A1, A4
      own_products: 3, // Pro Headphones (3 spellings of one), Lite Earbuds, Travel Case
      competitor_products: 2,
    });
  });

  it('then offer_summary counts 13 cards, 12 priced, 5 merchants and the price range per currency', () => {
    expect(body.offer_summary).toEqual({
      cards: 13,
      own_cards: 5,
      competitor_cards: 7,
      other_cards: 1,
      priced_cards: 12,
      priced_rate: 92.31, // 12/13
      own_priced_cards: 5,
      competitor_priced_cards: 6,
      merchants: 5, // amazon, walmart, target, bestbuy, shop.globex.example.net
      cards_without_merchant: 1,
      currencies: ['USD', 'EUR'],
      price_ranges: [
        // 25 49 99 120 139 | 149 159 189.99 199.99 209.99: median (139+149)/2, mean 1339.97/10
        { currency: 'USD', cards: 10, own_cards: 5, competitor_cards: 4, min_price: 25, median_price: 144, avg_price: 134, max_price: 209.99 },
        { currency: 'EUR', cards: 2, own_cards: 0, competitor_cards: 2, min_price: 110, median_price: 112.5, avg_price: 112.5, max_price: 115 },
      ],
    });
  });

  it('then top_own_products groups spellings of one product (name and brand, case and spaces aside) and ranks by appearances', () => {
    expect(body.top_own_products).toEqual([
      {
        name: 'Acme Pro Headphones',
        brand: 'Acme',
        entity_id: d.site,
        entity_name: 'Acme',
        appearances: 3,
        answers: 3,
        avg_position: 1.33, // (1+1+2)/3
        best_position: 1,
        ...productPrices({ currency: 'USD', cards: 3, min_price: 189.99, median_price: 199.99, max_price: 209.99 }),
        merchants: [
          { merchant: 'Amazon', merchant_key: 'amazon', appearances: 2 },
          { merchant: 'Walmart', merchant_key: 'walmart', appearances: 1 },
        ],
      },
      {
        name: 'Acme Lite Earbuds',
        brand: 'Acme',
        entity_id: d.site,
        entity_name: 'Acme',
        appearances: 1,
        answers: 1,
        avg_position: 2,
        best_position: 2,
        ...productPrices({ currency: 'USD', cards: 1, min_price: 99, median_price: 99, max_price: 99 }),
        merchants: [{ merchant: 'Amazon', merchant_key: 'amazon', appearances: 1 }],
      },
      {
        name: 'Acme Travel Case',
        brand: null,
        entity_id: d.site,
        entity_name: 'Acme',
        appearances: 1,
        answers: 1,
        avg_position: 3,
        best_position: 3,
        ...productPrices({ currency: 'USD', cards: 1, min_price: 25, median_price: 25, max_price: 25 }),
        merchants: [],
      },
    ]);
  });

  it('then top_competitor_products lists each competitor product with its main currency and every merchant', () => {
    expect(body.top_competitor_products).toEqual([
      {
        name: 'Globex Sound X',
        brand: 'Globex',
        entity_id: d.globex,
        entity_name: 'Globex',
        appearances: 4,
        answers: 4,
        avg_position: 4, // (2+1+12+1)/4
        best_position: 1,
        ...productPrices({ currency: 'USD', cards: 3, min_price: 139, median_price: 149, max_price: 159 }),
        merchants: [
          { merchant: 'Amazon', merchant_key: 'amazon', appearances: 2 },
          { merchant: 'shop.globex.example.net', merchant_key: 'shop.globex.example.net', appearances: 1 },
          { merchant: 'Walmart', merchant_key: 'walmart', appearances: 1 },
        ],
      },
      {
        name: 'Initech Beat',
        brand: 'Initech',
        entity_id: d.initech,
        entity_name: 'Initech',
        appearances: 3,
        answers: 3,
        avg_position: 2, // (3+2+1)/3
        best_position: 1,
        ...productPrices(
          { currency: 'EUR', cards: 2, min_price: 110, median_price: 112.5, max_price: 115 },
          { currency: 'USD', cards: 1, min_price: 120, median_price: 120, max_price: 120 },
        ),
        merchants: [
          { merchant: 'Target', merchant_key: 'target', appearances: 2 },
          { merchant: 'Walmart', merchant_key: 'walmart', appearances: 1 },
        ],
      },
    ]);
  });

  it('then competitor_breakdown has the brand first, then competitors by appearances, shares over 12 tracked cards', () => {
    expect(body.competitor_breakdown).toEqual([
      {
        entity_id: d.site,
        name: 'Acme',
        is_self: true,
        appearances: 5,
        answers: 4,
        answer_rate: 57.14,
        share_of_appearances: 41.67,
        avg_position: 1.8,
        best_position: 1,
        first_position_answers: 2,
        products: 3,
      },
      {
        entity_id: d.globex,
        name: 'Globex',
        is_self: false,
        appearances: 4,
        answers: 4,
        answer_rate: 57.14,
        share_of_appearances: 33.33,
        avg_position: 4,
        best_position: 1,
        first_position_answers: 2,
        products: 1,
      },
      {
        entity_id: d.initech,
        name: 'Initech',
        is_self: false,
        appearances: 3,
        answers: 3,
        answer_rate: 42.86,
        share_of_appearances: 25,
        avg_position: 2,
        best_position: 1,
        first_position_answers: 1,
        products: 1,
      },
    ]);
  });

  it('then merchant_breakdown keys merchants case-insensitively (a URL-only card by its host), most cards first', () => {
    expect(body.merchant_breakdown).toEqual([
      {
        merchant: 'Amazon',
        merchant_key: 'amazon',
        appearances: 5,
        answers: 4,
        share_of_appearances: 41.67,
        own_appearances: 3,
        competitor_appearances: 2,
        own_share: 60,
        avg_position: 1.4,
        priced_appearances: 5,
      },
      {
        merchant: 'Walmart',
        merchant_key: 'walmart',
        appearances: 3,
        answers: 2,
        share_of_appearances: 25,
        own_appearances: 1,
        competitor_appearances: 2,
        own_share: 33.33,
        avg_position: 2,
        priced_appearances: 3,
      },
      {
        merchant: 'Target',
        merchant_key: 'target',
        appearances: 2,
        answers: 2,
        share_of_appearances: 16.67,
        own_appearances: 0,
        competitor_appearances: 2,
        own_share: 0,
        avg_position: 1.5,
        priced_appearances: 2,
      },
      {
        merchant: 'BestBuy',
        merchant_key: 'bestbuy',
        appearances: 1,
        answers: 1,
        share_of_appearances: 8.33,
        own_appearances: 0,
        competitor_appearances: 0,
        own_share: 0,
        avg_position: 3,
        priced_appearances: 1,
      },
      {
        merchant: 'shop.globex.example.net',
        merchant_key: 'shop.globex.example.net',
        appearances: 1,
        answers: 1,
        share_of_appearances: 8.33,
        own_appearances: 0,
        competitor_appearances: 1,
        own_share: 0,
        avg_position: 12,
        priced_appearances: 0,
      },
    ]);
  });

  it('then position_distribution has ten rows, position 12 falling in 10+', () => {
    expect(body.position_distribution).toEqual([
      { position: '1', cards: 5, own_cards: 2, competitor_cards: 3, other_cards: 0, own_rate: 40, competitor_rate: 42.86, own_share: 40 },
      { position: '2', cards: 4, own_cards: 2, competitor_cards: 2, other_cards: 0, own_rate: 40, competitor_rate: 28.57, own_share: 50 },
      { position: '3', cards: 3, own_cards: 1, competitor_cards: 1, other_cards: 1, own_rate: 20, competitor_rate: 14.29, own_share: 33.33 },
      ...zeroBuckets(4, 9),
      { position: '10+', cards: 1, own_cards: 0, competitor_cards: 1, other_cards: 0, own_rate: 0, competitor_rate: 14.29, own_share: 0 },
    ]);
  });

  it('then price_comparison sets the own median against the competitor median per currency', () => {
    expect(body.price_comparison).toEqual([
      {
        currency: 'USD',
        own_cards: 5, // 25 99 189.99 199.99 209.99
        own_min_price: 25,
        own_median_price: 189.99,
        own_max_price: 209.99,
        competitor_cards: 4, // 120 139 149 159
        competitor_min_price: 120,
        competitor_median_price: 144,
        competitor_max_price: 159,
        own_vs_competitor_median_pct: 31.94, // 100 x (189.99 - 144) / 144
        price_position: 'above',
        competitors: [
          { entity_id: d.globex, name: 'Globex', cards: 3, min_price: 139, median_price: 149, max_price: 159 },
          { entity_id: d.initech, name: 'Initech', cards: 1, min_price: 120, median_price: 120, max_price: 120 },
        ],
      },
      {
        currency: 'EUR',
        own_cards: 0,
        own_min_price: null,
        own_median_price: null,
        own_max_price: null,
        competitor_cards: 2,
        competitor_min_price: 110,
        competitor_median_price: 112.5,
        competitor_max_price: 115,
        own_vs_competitor_median_pct: null,
        price_position: null,
        competitors: [{ entity_id: d.initech, name: 'Initech', cards: 2, min_price: 110, median_price: 112.5, max_price: 115 }],
      },
    ]);
  });

  it('then trend has one row per UTC day with answers, oldest first', () => {
    expect(body.trend).toEqual([
      {
        date: '2026-03-01',
        answers: 2,
        answers_with_products: 2,
        answers_with_own_products: 2,
        own_product_appearances: 2,
        competitor_product_appearances: 3,
        product_visibility_rate: 100,
        avg_own_position: 1.5,
      },
      {
        date: '2026-03-02',
        answers: 2,
        answers_with_products: 1,
        answers_with_own_products: 1,
        own_product_appearances: 1,
        competitor_product_appearances: 2,
        product_visibility_rate: 50,
        avg_own_position: 1,
      },
      {
        date: '2026-03-03',
        answers: 3,
        answers_with_products: 2,
        answers_with_own_products: 1,
        own_product_appearances: 2,
        competitor_product_appearances: 2,
        product_visibility_rate: 33.33,
        avg_own_position: 2.5,
      },
    ]);
  });
});

describe('POST /api/v1/metrics/shopping: filters', () => {
  it('given schedule_id of a custom schedule, then only its answers count; manual is default', async () => {
    const r = await metrics({ website_id: d.site, filters: { schedule_id: d.schedule } });
    expect(r.schedule).toBe(d.schedule);
    expect(r.summary).toMatchObject({
      answers: 1,
      answers_with_products: 1,
      answers_with_own_products: 1,
      product_visibility_rate: 100,
      own_product_appearances: 1,
      avg_own_position: 1,
    });
    expect(r.top_own_products.map((p: any) => [p.name, p.median_price])).toEqual([['Acme Pro Headphones', 179]]);
    expect(r.trend.map((t: any) => t.date)).toEqual(['2026-03-02']);
    const manual = await metrics({ website_id: d.site, filters: { schedule_id: 'manual' } });
    expect(manual).toEqual({ ...(await metrics({ website_id: d.site })), schedule: 'default' });
  });

  it('given models, then only those shopping models count', async () => {
    const r = await metrics({ website_id: d.site, filters: { models: [SM1] } });
    expect(r.models).toEqual([SM1]);
    // A2, A4, A9
    expect(r.summary).toMatchObject({
      answers: 3,
      answers_with_products: 2,
      answers_with_own_products: 2,
      own_product_appearances: 2,
      competitor_product_appearances: 4,
      avg_own_position: 1.5,
    });
    expect(r.offer_summary.cards).toBe(6);
  });

  it('given competitor_ids, then only those competitors are competitor cards; the others count as other', async () => {
    const r = await metrics({ website_id: d.site, filters: { competitor_ids: [d.initech] } });
    expect(r.summary).toMatchObject({
      own_product_appearances: 5,
      competitor_product_appearances: 3,
      share_of_product_appearances: 62.5,
      answers_with_competitor_products: 3,
      competitor_products: 1,
    });
    expect(r.offer_summary).toMatchObject({ cards: 13, own_cards: 5, competitor_cards: 3, other_cards: 5 });
    expect(r.competitor_breakdown.map((c: any) => [c.name, c.appearances, c.share_of_appearances])).toEqual([
      ['Acme', 5, 62.5],
      ['Initech', 3, 37.5],
    ]);
    expect(r.top_competitor_products.map((p: any) => p.name)).toEqual(['Initech Beat']);
    expect(r.price_comparison[0]).toMatchObject({
      currency: 'USD',
      competitor_cards: 1,
      competitor_median_price: 120,
      own_vs_competitor_median_pct: 58.33,
      price_position: 'above',
    });
    expect(r.price_comparison[0].competitors.map((c: any) => c.name)).toEqual(['Initech']);
    expect(r.position_distribution[9]).toMatchObject({ position: '10+', cards: 1, competitor_cards: 0, other_cards: 1 });
  });

  it('given prompt_tags, then any (default) takes prompts with one of the tags and all those with every tag', async () => {
    const gift = await metrics({ website_id: d.site, filters: { prompt_tags: ['gift'] } });
    // P1 and P3 (P4 is deleted): A1, A3, A4, A10
    expect(gift.summary).toMatchObject({ answers: 4, answers_with_products: 3, answers_with_own_products: 2, own_product_appearances: 2 });
    const all = await metrics({ website_id: d.site, filters: { prompt_tags: ['gift', 'audio'], prompt_tags_operator: 'all' } });
    // P1 only: A1, A3
    expect(all.summary).toMatchObject({
      answers: 2,
      answers_with_products: 1,
      answers_with_own_products: 1,
      own_product_appearances: 1,
      competitor_product_appearances: 1,
    });
    const any = await metrics({ website_id: d.site, filters: { prompt_tags: ['gift', 'audio'], prompt_tags_operator: 'any' } });
    expect(any.summary.answers).toBe(7);
    const none = await metrics({ website_id: d.site, filters: { prompt_tags: ['nobody-has-this'] } });
    expect(none.summary.answers).toBe(0);
    const empty = await metrics({ website_id: d.site, filters: { prompt_tags: [] } });
    expect(empty.summary.answers).toBe(7);
  });

  it('given target_identifiers, then own products are the brand cards whose name or brand holds one as a whole word, any case', async () => {
    const r = await metrics({ website_id: d.site, filters: { target_identifiers: ['acme PRO'] } });
    // A1 c1, A4 c1 ("acme pro  headphones"), A5 c1; Lite Earbuds and Travel Case drop to other
    expect(r.summary).toMatchObject({
      answers_with_own_products: 3,
      product_visibility_rate: 42.86,
      own_product_appearances: 3,
      avg_own_position: 1.33,
      own_products: 1,
    });
    expect(r.offer_summary).toMatchObject({ own_cards: 3, competitor_cards: 7, other_cards: 3 });
    expect(r.top_own_products.map((p: any) => p.name)).toEqual(['Acme Pro Headphones']);
    expect(r.competitor_breakdown[0]).toMatchObject({ name: 'Acme', appearances: 3, share_of_appearances: 30 });
    // a word inside another word does not match; several identifiers are alternatives
    expect((await metrics({ website_id: d.site, filters: { target_identifiers: ['Pr'] } })).summary.own_product_appearances).toBe(0);
    expect((await metrics({ website_id: d.site, filters: { target_identifiers: ['Travel', 'Earbuds'] } })).summary.own_product_appearances).toBe(2);
    // the brand counts as well as the name: every own card holds "acme" in one or the other
    expect((await metrics({ website_id: d.site, filters: { target_identifiers: ['ACME'] } })).summary.own_product_appearances).toBe(5);
    // an identifier with regular-expression characters is taken literally
    expect((await metrics({ website_id: d.site, filters: { target_identifiers: ['Pro.*'] } })).summary.own_product_appearances).toBe(0);
  });

  it('given start_date and end_date, then both UTC days are included whole', async () => {
    const r = await metrics({ website_id: d.site, filters: { start_date: '2026-03-02', end_date: '2026-03-03' } });
    // A3, A4, A5, A9 (23:59:59), A10
    expect(r.summary).toMatchObject({ answers: 5, answers_with_products: 3, answers_with_own_products: 2 });
    expect(r.trend.map((t: any) => [t.date, t.answers])).toEqual([
      ['2026-03-02', 2],
      ['2026-03-03', 3],
    ]);
    const oneDay = await metrics({ website_id: d.site, filters: { start_date: '2026-03-03', end_date: '2026-03-03' } });
    expect(oneDay.summary.answers).toBe(3);
    const untilD2 = await metrics({ website_id: d.site, filters: { end_date: '2026-03-02' } });
    expect(untilD2.summary.answers).toBe(4);
    const fromD3 = await metrics({ website_id: d.site, filters: { start_date: '2026-03-03' } });
    expect(fromD3.trend.map((t: any) => t.date)).toEqual(['2026-03-03']);
  });

  it('given every filter at once, then they all apply', async () => {
    const r = await metrics({
      website_id: d.site,
      filters: {
        schedule_id: 'default',
        models: [SM0],
        competitor_ids: [d.globex],
        prompt_tags: ['audio'],
        prompt_tags_operator: 'any',
        target_identifiers: ['Headphones'],
        start_date: '2026-03-01',
        end_date: '2026-03-03',
      },
      top_products_limit: 1,
    });
    // P1 and P2 on SM0: A1, A3, A5
    expect(r.summary).toMatchObject({
      answers: 3,
      answers_with_products: 2,
      answers_with_own_products: 2,
      own_product_appearances: 2,
      competitor_product_appearances: 2,
    });
    expect(r.top_own_products).toHaveLength(1);
    expect(r.competitor_breakdown.map((c: any) => c.name)).toEqual(['Acme', 'Globex']);
  });

  it('given top_products_limit, then each top list has at most that many rows', async () => {
    const one = await metrics({ website_id: d.site, top_products_limit: 1 });
    expect(one.top_own_products.map((p: any) => p.name)).toEqual(['Acme Pro Headphones']);
    expect(one.top_competitor_products.map((p: any) => p.name)).toEqual(['Globex Sound X']);
    const two = await metrics({ website_id: d.site, top_products_limit: 2 });
    expect(two.top_own_products.map((p: any) => p.name)).toEqual(['Acme Pro Headphones', 'Acme Lite Earbuds']);
    const fifty = await metrics({ website_id: d.site, top_products_limit: 50 });
    expect(fifty.top_own_products).toHaveLength(3);
  });

  it('given a prompt deleted after it was answered, then its answers no longer count', async () => {
    const site = (await created('/api/v1/websites', { name: 'Solo', url: 'https://solo-shop.example.com' })).website.id;
    const keep = (await created('/api/v1/prompts', { website_id: site, text: 'Keep' })).prompt.id;
    const drop = (await created('/api/v1/prompts', { website_id: site, text: 'Drop', status: 'paused' })).prompt.id;
    const item = (prompt_id: string) => ({
      prompt_id,
      model: SM0,
      run_at: '2026-02-01T10:00:00Z',
      text: 'Solo.',
      products: [{ name: 'Solo One', brand: 'Solo', position: 1 }],
    });
    await created('/api/v1/responses/import', { website_id: site, responses: [item(keep), item(drop)] });
    // a paused prompt's answers count
    expect((await metrics({ website_id: site })).summary).toMatchObject({ answers: 2, own_product_appearances: 2 });
    expect((await call(s, 'DELETE', `/api/v1/prompts/${drop}`, { key: w.a.key, query: { website_id: site } })).body).toEqual({
      success: true,
      soft_deleted: true,
    });
    expect((await metrics({ website_id: site })).summary).toMatchObject({ answers: 1, own_product_appearances: 1 });
  });

  it('given a competitor added after the answers, then its cards become competitor cards; removed, they are nobody’s again', async () => {
    const site = (await created('/api/v1/websites', { name: 'Late', url: 'https://late-shop.example.com' })).website.id;
    const prompt = (await created('/api/v1/prompts', { website_id: site, text: 'Which one?' })).prompt.id;
    await created('/api/v1/responses/import', {
      website_id: site,
      responses: [
        {
          prompt_id: prompt,
          model: SM0,
          run_at: '2026-02-01T10:00:00Z',
          text: 'Two.',
          products: [card('Late One', 'Late', 2), card('Umbrella Max', 'Umbrella', 1)],
        },
      ],
    });
    expect((await metrics({ website_id: site })).offer_summary).toMatchObject({ own_cards: 1, competitor_cards: 0, other_cards: 1 });
    const umbrella = (await created('/api/v1/competitors', { website_id: site, name: 'Umbrella', url: 'https://umbrella.example.org' })).competitor
      .id;
    // the cards' owners are re-derived after the add answered
    await caughtUp(s, ['answers']);
    const after = await metrics({ website_id: site });
    expect(after.offer_summary).toMatchObject({ own_cards: 1, competitor_cards: 1, other_cards: 0 });
    expect(after.competitor_breakdown.map((c: any) => [c.name, c.appearances, c.first_position_answers])).toEqual([
      ['Late', 1, 0],
      ['Umbrella', 1, 1],
    ]);
    expect((await call(s, 'DELETE', `/api/v1/competitors/${umbrella}`, { key: w.a.key, query: { website_id: site } })).status).toBe(200);
    await caughtUp(s, ['answers']);
    expect((await metrics({ website_id: site })).offer_summary).toMatchObject({ own_cards: 1, competitor_cards: 0, other_cards: 1 });
  });

  it('given a website without answers, then zeros, nulls and empty lists', async () => {
    const site = (await created('/api/v1/websites', { name: 'Empty', url: 'https://empty-shop.example.com' })).website.id;
    const r = await metrics({ website_id: site });
    expect(r).toEqual({
      schedule: 'default',
      models: [...SHOPPING_MODEL_IDS],
      summary: {
        answers: 0,
        answers_with_products: 0,
        product_answer_rate: 0,
        answers_with_own_products: 0,
        product_visibility_rate: 0,
        own_share_of_product_answers: 0,
        answers_with_competitor_products: 0,
        own_product_appearances: 0,
        competitor_product_appearances: 0,
        share_of_product_appearances: 0,
        avg_own_position: null,
        best_own_position: null,
        own_first_position_answers: 0,
        own_products: 0,
        competitor_products: 0,
      },
      offer_summary: {
        cards: 0,
        own_cards: 0,
        competitor_cards: 0,
        other_cards: 0,
        priced_cards: 0,
        priced_rate: 0,
        own_priced_cards: 0,
        competitor_priced_cards: 0,
        merchants: 0,
        cards_without_merchant: 0,
        currencies: [],
        price_ranges: [],
      },
      top_own_products: [],
      top_competitor_products: [],
      competitor_breakdown: [
        {
          entity_id: site,
          name: 'Empty',
          is_self: true,
          appearances: 0,
          answers: 0,
          answer_rate: 0,
          share_of_appearances: 0,
          avg_position: null,
          best_position: null,
          first_position_answers: 0,
          products: 0,
        },
      ],
      merchant_breakdown: [],
      position_distribution: zeroBuckets(1, 9).concat([emptyPositionBucket('10+')]),
      price_comparison: [],
      trend: [],
    });
  });
});

describe('POST /api/v1/metrics/shopping: refusals', () => {
  it('given bad input, then 400 naming the field and nothing written', async () => {
    const site = d.site;
    await refused([
      { body: {}, status: 400, error: 'website_id is required' },
      { body: { website_id: 'nope' }, status: 400, error: 'website_id: must be a UUID' },
      { body: { website_id: site, extra: 1 }, status: 400, error: 'extra is not allowed' },
      { body: { website_id: site, filters: { prompt_ids: [d.p.p1] } }, status: 400, error: 'filters.prompt_ids is not allowed' },
      { body: { website_id: site, filters: { location_ids: [UNKNOWN_ID] } }, status: 400, error: 'filters.location_ids is not allowed' },
      { body: { website_id: site, filters: { saved_view_id: UNKNOWN_ID } }, status: 400, error: 'filters.saved_view_id is not allowed' },
      { body: { website_id: site, filters: { prompt_status: 'active' } }, status: 400, error: 'filters.prompt_status is not allowed' },
      { body: { website_id: site, filters: { prompt_type: 'branded' } }, status: 400, error: 'filters.prompt_type is not allowed' },
      { body: { website_id: site, filters: 'x' }, status: 400, error: /^filters: / },
      {
        body: { website_id: site, filters: { models: [OTHER_MODEL] } },
        status: 400,
        error: `filters.models[0]: model "${OTHER_MODEL}" is not available on the shopping endpoint; expected one of: ${SHOPPING_MODEL_IDS.join(', ')}`,
      },
      { body: { website_id: site, filters: { models: ['nope'] } }, status: 400, error: /^filters\.models\[0\]: unknown model "nope"/ },
      { body: { website_id: site, filters: { models: SM0 } }, status: 400, error: 'filters.models: must be an array of model identifiers' },
      {
        body: { website_id: site, filters: { schedule_id: 'weekly' } },
        status: 400,
        error: "filters.schedule_id: must be 'default' or a schedule id (UUID)",
      },
      {
        body: { website_id: site, filters: { schedule_id: UNKNOWN_ID } },
        status: 400,
        error: 'filters.schedule_id: no schedule of this website has this id',
      },
      {
        body: { website_id: site, filters: { competitor_ids: [UNKNOWN_ID] } },
        status: 400,
        error: 'filters.competitor_ids[0]: no competitor of this website has this id',
      },
      { body: { website_id: site, filters: { competitor_ids: ['x'] } }, status: 400, error: 'filters.competitor_ids[0]: must be a UUID' },
      { body: { website_id: site, filters: { prompt_tags: 'gift' } }, status: 400, error: 'filters.prompt_tags: must be an array of strings' },
      {
        body: { website_id: site, filters: { prompt_tags_operator: 'none' } },
        status: 400,
        error: "filters.prompt_tags_operator: must be 'any' or 'all'",
      },
      { body: { website_id: site, filters: { target_identifiers: [''] } }, status: 400, error: 'filters.target_identifiers[0]: must not be empty' },
      {
        body: { website_id: site, filters: { start_date: '2026-03-02T00:00:00Z' } },
        status: 400,
        error: /^filters\.start_date: must be a plain date YYYY-MM-DD/,
      },
      {
        body: { website_id: site, filters: { end_date: '2026-03-02T23:59:59' } },
        status: 400,
        error: /^filters\.end_date: must be a plain date YYYY-MM-DD/,
      },
      {
        body: { website_id: site, filters: { start_date: 'March 2, 2026' } },
        status: 400,
        error: /^filters\.start_date: must be a plain date YYYY-MM-DD/,
      },
      { body: { website_id: site, filters: { start_date: '2026-02-30' } }, status: 400, error: /^filters\.start_date: invalid date "2026-02-30"/ },
      {
        body: { website_id: site, filters: { start_date: '2026-03-03', end_date: '2026-03-02' } },
        status: 400,
        error: 'filters.end_date: is before start_date (2026-03-03)',
      },
      { body: { website_id: site, top_products_limit: 0 }, status: 400, error: 'top_products_limit: must be between 1 and 50' },
      { body: { website_id: site, top_products_limit: 51 }, status: 400, error: 'top_products_limit: must be between 1 and 50' },
      { body: { website_id: site, top_products_limit: 2.5 }, status: 400, error: 'top_products_limit: must be an integer' },
      { body: { website_id: site, top_products_limit: '5' }, status: 400, error: 'top_products_limit: must be an integer' },
      { body: { website_id: site, filters: { top_products_limit: 5 } }, status: 400, error: 'filters.top_products_limit is not allowed' },
      { body: { website_id: UNKNOWN_ID }, status: 404, error: 'Website not found' },
    ]);
  });

  it('given an organization without the shopping feature, then 403 with the feature message and nothing written', async () => {
    const plain = await s.org('No shopping', { features: ['pitch', 'knowledge_base'] });
    const site = (await created('/api/v1/websites', { name: 'Plain', url: 'https://plain-shop.example.com' }, plain.key)).website.id;
    await refused([
      { key: plain.key, body: { website_id: site }, status: 403, error: SHOPPING_NOT_ENABLED },
      // the plan decides before the website does
      { key: plain.key, body: { website_id: d.site }, status: 403, error: SHOPPING_NOT_ENABLED },
    ]);
  });

  it('given a paused website, then 403 Unauthorized access to this website', async () => {
    const site = (await created('/api/v1/websites', { name: 'Paused', url: 'https://paused-shop.example.com' })).website.id;
    expect((await call(s, 'PATCH', `/api/v1/websites/${site}`, { key: w.a.key, body: { status: 'paused' } })).status).toBe(200);
    await refused([{ body: { website_id: site }, status: 403, error: 'Unauthorized access to this website' }]);
  });

  it('given a key scoped to the website, then it reads it', async () => {
    const r = await metrics({ website_id: w.a.a2 }, w.a.scoped);
    expect(r.summary.answers).toBe(0);
  });

  it('given the OpenAPI document, then the endpoint and its nine blocks are described', async () => {
    const doc = await call(s, 'GET', '/api/v1/openapi.json', { key: w.a.key });
    expect(doc.status).toBe(200);
    const op = doc.body.paths['/api/v1/metrics/shopping'].post;
    const filters = op.requestBody.content['application/json'].schema.properties.filters;
    expect(Object.keys(filters.properties).sort()).toEqual(
      ['competitor_ids', 'end_date', 'models', 'prompt_tags', 'prompt_tags_operator', 'schedule_id', 'start_date', 'target_identifiers'].sort(),
    );
    expect(filters.properties.target_identifiers.description).toMatch(/whole word, case-insensitive/);
    const out = op.responses['200'].content['application/json'].schema;
    expect(Object.keys(out.properties)).toEqual(expect.arrayContaining(BLOCKS));
  });

  websiteTenancyChecks(() => w, 'POST', PATH);
});
