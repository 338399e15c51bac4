/** The shapes of shopping visibility: what a selection asks, what the statement's blocks hold, what is answered. */

export interface ShoppingSelection {
  websiteId: string;
  /** null: the default schedule (answers without one) */
  scheduleId: string | null;
  /** inclusive instants */
  start?: Date;
  end?: Date;
  /** shopping models only */
  models: readonly string[];
  /** the prompts whose answers count (never soft-deleted ones), already narrowed by tags */
  promptIds: readonly string[];
  /** undefined: every competitor of the website */
  competitorIds?: readonly string[];
  /** undefined or empty: every brand card is own */
  targetIdentifiers?: readonly string[];
  topProductsLimit: number;
}

export type Side = 'own' | 'competitor';

export interface PriceStats {
  currency: string;
  cards: number;
  min_price: number;
  median_price: number;
  max_price: number;
}

export interface ProductRow {
  name: string;
  brand: string | null;
  entity_id: string;
  entity_name: string;
  appearances: number;
  answers: number;
  avg_position: number;
  best_position: number;
  currency: string | null;
  min_price: number | null;
  median_price: number | null;
  max_price: number | null;
  prices: PriceStats[];
  merchants: { merchant: string; merchant_key: string; appearances: number }[];
}

export interface ShoppingMetrics {
  schedule: string;
  models: string[];
  summary: {
    answers: number;
    answers_with_products: number;
    product_answer_rate: number;
    answers_with_own_products: number;
    product_visibility_rate: number;
    own_share_of_product_answers: number;
    answers_with_competitor_products: number;
    own_product_appearances: number;
    competitor_product_appearances: number;
    share_of_product_appearances: number;
    avg_own_position: number | null;
    best_own_position: number | null;
    own_first_position_answers: number;
    own_products: number;
    competitor_products: number;
  };
  offer_summary: {
    cards: number;
    own_cards: number;
    competitor_cards: number;
    other_cards: number;
    priced_cards: number;
    priced_rate: number;
    own_priced_cards: number;
    competitor_priced_cards: number;
    merchants: number;
    cards_without_merchant: number;
    currencies: string[];
    price_ranges: {
      currency: string;
      cards: number;
      own_cards: number;
      competitor_cards: number;
      min_price: number;
      median_price: number;
      avg_price: number;
      max_price: number;
    }[];
  };
  top_own_products: ProductRow[];
  top_competitor_products: ProductRow[];
  competitor_breakdown: {
    entity_id: string;
    name: string;
    is_self: boolean;
    appearances: number;
    answers: number;
    answer_rate: number;
    share_of_appearances: number;
    avg_position: number | null;
    best_position: number | null;
    first_position_answers: number;
    products: number;
  }[];
  merchant_breakdown: {
    merchant: string;
    merchant_key: string;
    appearances: number;
    answers: number;
    share_of_appearances: number;
    own_appearances: number;
    competitor_appearances: number;
    own_share: number;
    avg_position: number;
    priced_appearances: number;
  }[];
  position_distribution: {
    position: string;
    cards: number;
    own_cards: number;
    competitor_cards: number;
    other_cards: number;
    own_rate: number;
    competitor_rate: number;
    own_share: number;
  }[];
  price_comparison: {
    currency: string;
    own_cards: number;
    own_min_price: number | null;
    own_median_price: number | null;
    own_max_price: number | null;
    competitor_cards: number;
    competitor_min_price: number | null;
    competitor_median_price: number | null;
    competitor_max_price: number | null;
    own_vs_competitor_median_pct: number | null;
    price_position: 'below' | 'equal' | 'above' | null;
    competitors: { entity_id: string; name: string; cards: number; min_price: number; median_price: number; max_price: number }[];
  }[];
  trend: {
    date: string;
    answers: number;
    answers_with_products: number;
    answers_with_own_products: number;
    own_product_appearances: number;
    competitor_product_appearances: number;
    product_visibility_rate: number;
    avg_own_position: number | null;
  }[];
}

// ---- the statement's blocks, as Postgres hands them (numbers may arrive as strings) ----

export interface DayAnswers {
  day: string;
  answers: number;
}

export interface DayCards {
  day: string;
  cards: number;
  own_cards: number;
  competitor_cards: number;
  priced_cards: number;
  own_priced_cards: number;
  competitor_priced_cards: number;
  cards_without_merchant: number;
  own_position_sum: number;
  best_own_position: number | null;
}

export interface DayFlags {
  day: string;
  answers_with_products: number;
  answers_with_own_products: number;
  answers_with_competitor_products: number;
  own_first_position_answers: number;
}

export type PriceRow = {
  currency: string;
  side: Side | 'other' | null;
  entity_id: string | null;
  all_sides: number;
  all_entities: number;
  cards: number;
  min_price: number;
  max_price: number;
  median_price: number;
  avg_price: number;
};
export type ProductSql = {
  side: Side;
  entity_id: string;
  name: string;
  brand: string | null;
  appearances: number;
  answers: number;
  avg_position: number;
  best_position: number;
  prices: PriceStats[];
  merchants: ProductRow['merchants'];
};
export type EntitySql = { entity_id: string; appearances: number; position_sum: number; best_position: number };
export type EntityAnswersSql = { entity_id: string; answers: number; first_position_answers: number };
export type MerchantSql = {
  merchant_key: string;
  merchant: string;
  appearances: number;
  answers: number;
  own_appearances: number;
  competitor_appearances: number;
  position_sum: number;
  priced_appearances: number;
};
export type BucketSql = { bucket: number; cards: number; own_cards: number; competitor_cards: number };

export type EntityProductsSql = { side: Side; entity_id: string; products: number };

/** The statement's one row, each json column parsed: the blocks every part of the answer is computed from. */
export interface ShoppingBlocks {
  answer_days: DayAnswers[];
  card_days: DayCards[];
  answer_flags: DayFlags[];
  entities: EntitySql[];
  entity_answers: EntityAnswersSql[];
  entity_products: EntityProductsSql[];
  merchants: MerchantSql[];
  positions: BucketSql[];
  prices: PriceRow[];
  top: ProductSql[];
}

/** A tracked entity: the brand or a selected competitor. */
export interface TrackedEntity {
  id: string;
  name: string;
  is_self: boolean;
}
