import { ShoppingMetricsResponse } from '../../../queries/shopping/views';
import { shoppingVisibility, ToolShoppingMetricsInput } from '../../app/shopping';
import { tool, type ToolDef, READS } from '../tool';

/** The shopping area's MCP tools: the same operation as POST /api/v1/metrics/shopping (src/app/shopping.ts). */
export const shoppingTools: ToolDef[] = [
  tool({
    name: 'get_shopping_metrics',
    title: 'Get shopping metrics',
    annotations: READS,
    description:
      "Shopping visibility of a website: the product cards the shopping models showed in their answers. Returns summary (answers, answers with products, product_visibility_rate = % of answers showing an own product, own appearances and positions), offer_summary (cards, priced cards, currencies, price ranges), top_own_products and top_competitor_products (top_products_limit each, 1 to 50, default 10), competitor_breakdown (brand first), merchant_breakdown, position_distribution (1..9 and 10+), price_comparison (own vs competitor prices per currency) and trend (one row per UTC day). filters accepts only schedule_id, models (shopping models only), competitor_ids, prompt_tags, prompt_tags_operator ('any' default or 'all'), target_identifiers (restrict own products to cards whose name or brand contains one of them as a whole word), start_date and end_date (YYYY-MM-DD, an ISO timestamp or a spelled-out date; a date end covers the whole day; omitted = all history). Needs the organization's shopping feature.",
    input: ToolShoppingMetricsInput,
    output: ShoppingMetricsResponse,
    handler: (ctx, input) => shoppingVisibility(ctx, input),
  }),
];
