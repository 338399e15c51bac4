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
      'Shopping visibility: the product cards shopping models showed, own vs competitors: visibility rate, top products, merchants, positions, prices, daily trend. Needs the shopping feature.',
    input: ToolShoppingMetricsInput,
    output: ShoppingMetricsResponse,
    handler: (ctx, input) => shoppingVisibility(ctx, input),
  }),
];
