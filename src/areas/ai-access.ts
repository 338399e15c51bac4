import { aiAccessRoutes } from '../http/routes/ai-access';
import { aiAccessTools } from '../mcp/tools/ai-access';
import type { AreaManifest } from './manifest';

/** AI crawler access of a website. */
export const aiAccess: AreaManifest = {
  routes: aiAccessRoutes,
  tools: aiAccessTools,
};
