import { ShoppingMetricsResponse } from '../../../queries/shopping/views';
import { ShoppingMetricsBody, shoppingVisibility } from '../../app/shopping';
import { type RouteDef, routeGroup } from '../route';

export { ShoppingMetricsResponse };

const api = routeGroup({ tag: 'metrics' });

/** The shopping area's REST routes. */
export const shoppingRoutes: RouteDef<any, any, any>[] = [
  api.post('/api/v1/metrics/shopping', {
    summary:
      "Shopping visibility: the product cards the shopping models showed. filters takes exactly schedule_id, models (shopping models only), competitor_ids, prompt_tags, prompt_tags_operator, target_identifiers, start_date and end_date (plain YYYY-MM-DD, inclusive UTC days; omitted = all history); any other key is a 400. Needs the organization's shopping feature (403 otherwise). Answers of soft-deleted prompts never count; paused prompts do.",
    body: ShoppingMetricsBody,
    answer: ShoppingMetricsResponse,
    handler: (ctx) => shoppingVisibility(ctx, ctx.body),
  }),
];
