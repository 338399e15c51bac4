import { metricsRoutes } from '../http/routes/metrics';
import { metricsTools } from '../mcp/tools/metrics';
import type { AreaManifest } from './manifest';

/** Metrics over the answers (the responses area's read models). */
export const metrics: AreaManifest = {
  routes: metricsRoutes,
  tools: metricsTools,
};
