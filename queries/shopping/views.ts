import { z } from 'zod';
import type { ShoppingMetrics as ShoppingMetricsResult } from './metrics';

/**
 * The answer to POST /api/v1/metrics/shopping. The spec names the nine blocks; their fields are aivis' design.
 * An appearance is one product card in one answer. Rates are percentages 0..100 with two decimals (0 over an empty
 * set); positions are the cards' 1-based places in their answer; prices are rounded to two decimals and compared only
 * within one currency. A priced card has both a price and a currency.
 */
const rate = (what: string) => z.number().describe(`percentage 0..100: ${what}`);
const count = (what: string) => z.number().int().describe(what);
const nullablePosition = (what: string) => z.number().nullable().describe(`${what}; null when there is none`);
const amount = (what: string) => z.number().describe(what);
const nullableAmount = (what: string) => z.number().nullable().describe(`${what}; null when there is none`);

const PriceStats = z.object({
  currency: z.string().describe('ISO 4217 code'),
  cards: count('priced appearances in this currency'),
  min_price: amount('lowest price'),
  median_price: amount('median price'),
  max_price: amount('highest price'),
});

const Product = z
  .object({
    name: z.string().describe('the product name as most often written'),
    brand: z.string().nullable().describe('the brand as most often written; null when the cards carry none'),
    entity_id: z.string().describe('the brand (website id) or competitor the product belongs to'),
    entity_name: z.string(),
    appearances: count('cards of this product'),
    answers: count('answers showing it'),
    avg_position: z.number().describe('mean position of its cards'),
    best_position: count('its best (lowest) position'),
    currency: z.string().nullable().describe('the currency it is most often priced in (ties: alphabetical); null when never priced'),
    min_price: nullableAmount('lowest price in that currency'),
    median_price: nullableAmount('median price in that currency'),
    max_price: nullableAmount('highest price in that currency'),
    prices: z.array(PriceStats).describe('price statistics per currency, most cards first'),
    merchants: z
      .array(z.object({ merchant: z.string(), merchant_key: z.string(), appearances: count('its cards at this merchant') }))
      .describe('the merchants offering it, most cards first'),
  })
  .describe(
    'A product: cards grouped by name and brand (trimmed, whitespace collapsed, case-insensitive). Ranked by appearances, then average position (better first), then name; top_products_limit rows at most.',
  );

export const ShoppingMetricsResponse = z.object({
  schedule: z.string().describe("the schedule selection: 'default' or a schedule id"),
  models: z.array(z.string()).describe('the shopping models whose answers count'),
  summary: z
    .object({
      answers: count('answers of the selected shopping models in the range (S)'),
      answers_with_products: count('answers in S that showed at least one product card'),
      product_answer_rate: rate('answers_with_products / answers'),
      answers_with_own_products: count('answers in S that showed at least one own card'),
      product_visibility_rate: rate('answers_with_own_products / answers'),
      own_share_of_product_answers: rate('answers_with_own_products / answers_with_products'),
      answers_with_competitor_products: count("answers in S that showed at least one selected competitor's card"),
      own_product_appearances: count('own cards'),
      competitor_product_appearances: count("selected competitors' cards"),
      share_of_product_appearances: rate('own cards / (own + competitor cards)'),
      avg_own_position: nullablePosition('mean position of own cards'),
      best_own_position: nullablePosition('best (lowest) position of an own card'),
      own_first_position_answers: count('answers whose card at position 1 is own'),
      own_products: count('distinct own products'),
      competitor_products: count('distinct competitor products'),
    })
    .describe('Visibility of the brand in the product cards of S'),
  offer_summary: z
    .object({
      cards: count('product cards of the answers in S'),
      own_cards: count('own cards'),
      competitor_cards: count("selected competitors' cards"),
      other_cards: count('cards of nobody tracked (or of a competitor not selected, or outside target_identifiers)'),
      priced_cards: count('cards with a price and a currency'),
      priced_rate: rate('priced_cards / cards'),
      own_priced_cards: count('own priced cards'),
      competitor_priced_cards: count('competitor priced cards'),
      merchants: count('distinct merchants (by merchant key: the host of a merchant given as a domain, else the lower-cased name)'),
      cards_without_merchant: count('cards naming no merchant and no URL'),
      currencies: z.array(z.string()).describe('currencies of the priced cards, most cards first'),
      price_ranges: z
        .array(
          z.object({
            currency: z.string(),
            cards: count('priced cards in this currency'),
            own_cards: count('own ones'),
            competitor_cards: count("selected competitors' ones"),
            min_price: amount('lowest price'),
            median_price: amount('median price'),
            avg_price: amount('mean price'),
            max_price: amount('highest price'),
          }),
        )
        .describe('price range of every priced card per currency, most cards first'),
    })
    .describe('What was offered: cards, prices and merchants'),
  top_own_products: z.array(Product).describe("The brand's most shown products"),
  top_competitor_products: z.array(Product).describe("The selected competitors' most shown products"),
  competitor_breakdown: z
    .array(
      z.object({
        entity_id: z.string().describe('the website id for the brand, else a competitor id'),
        name: z.string(),
        is_self: z.boolean(),
        appearances: count('its cards'),
        answers: count('answers in S showing at least one of its cards'),
        answer_rate: rate('answers / answers in S'),
        share_of_appearances: rate('its cards / the cards of every row'),
        avg_position: nullablePosition('mean position of its cards'),
        best_position: nullablePosition('its best position'),
        first_position_answers: count('answers whose card at position 1 is its'),
        products: count('its distinct products'),
      }),
    )
    .describe('One row per tracked entity: the brand first (is_self), then each selected competitor by appearances'),
  merchant_breakdown: z
    .array(
      z.object({
        merchant: z.string().describe('the merchant as most often written (its host when only a URL names it)'),
        merchant_key: z.string(),
        appearances: count('cards offered by this merchant'),
        answers: count('answers showing at least one of them'),
        share_of_appearances: rate('its cards / cards with a merchant'),
        own_appearances: count('own cards among them'),
        competitor_appearances: count('competitor cards among them'),
        own_share: rate('own_appearances / appearances'),
        avg_position: z.number().describe('mean position of its cards'),
        priced_appearances: count('priced cards among them'),
      }),
    )
    .describe('Every merchant of the cards, most cards first'),
  position_distribution: z
    .array(
      z.object({
        position: z.string().describe("'1' to '9', then '10+' for positions 10 and beyond"),
        cards: count('cards at this position'),
        own_cards: count('own ones'),
        competitor_cards: count('competitor ones'),
        other_cards: count('the rest'),
        own_rate: rate('own_cards / every own card (the own distribution)'),
        competitor_rate: rate('competitor_cards / every competitor card'),
        own_share: rate('own_cards / cards at this position'),
      }),
    )
    .describe('Always ten rows, positions 1 to 9 and 10+'),
  price_comparison: z
    .array(
      z.object({
        currency: z.string(),
        own_cards: count('own priced cards in this currency'),
        own_min_price: nullableAmount('lowest own price'),
        own_median_price: nullableAmount('median own price'),
        own_max_price: nullableAmount('highest own price'),
        competitor_cards: count('competitor priced cards in this currency'),
        competitor_min_price: nullableAmount('lowest competitor price'),
        competitor_median_price: nullableAmount('median competitor price'),
        competitor_max_price: nullableAmount('highest competitor price'),
        own_vs_competitor_median_pct: z
          .number()
          .nullable()
          .describe('100 x (own median - competitor median) / competitor median: negative = the brand is cheaper; null without both'),
        price_position: z.enum(['below', 'equal', 'above']).nullable().describe('the own median against the competitor median; null without both'),
        competitors: z
          .array(
            z.object({
              entity_id: z.string(),
              name: z.string(),
              cards: count('its priced cards'),
              min_price: amount('its lowest price'),
              median_price: amount('its median price'),
              max_price: amount('its highest price'),
            }),
          )
          .describe('per selected competitor priced in this currency, most cards first'),
      }),
    )
    .describe('Own against competitor prices, per currency with an own or competitor priced card, most cards first'),
  trend: z
    .array(
      z.object({
        date: z.string().describe('UTC day YYYY-MM-DD'),
        answers: count('answers in S that day'),
        answers_with_products: count('those that showed a product card'),
        answers_with_own_products: count('those that showed an own card'),
        own_product_appearances: count('own cards'),
        competitor_product_appearances: count('competitor cards'),
        product_visibility_rate: rate('answers_with_own_products / answers'),
        avg_own_position: nullablePosition('mean position of own cards'),
      }),
    )
    .describe('One row per UTC day with answers in S, oldest first'),
});

// the query's result is exactly what the document describes
const _documented: z.input<typeof ShoppingMetricsResponse> = {} as ShoppingMetricsResult;
const _complete: ShoppingMetricsResult = {} as z.output<typeof ShoppingMetricsResponse>;
void _documented;
void _complete;
