import { shoppingRoutes } from '../http/routes/shopping';
import { shoppingTools } from '../mcp/tools/shopping';
import type { AreaManifest } from './manifest';

/** Shopping: product cards in answers (the responses area's read models). */
export const shopping: AreaManifest = {
  routes: shoppingRoutes,
  tools: shoppingTools,
};
