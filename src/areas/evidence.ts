import { evidenceRoutes } from '../http/routes/evidence';
import { evidenceTools } from '../mcp/tools/evidence';
import type { AreaManifest } from './manifest';

/** Answer evidence: what the engines retrieved, cited and searched (kept by the answers read model), and the answers export. */
export const evidence: AreaManifest = {
  routes: evidenceRoutes,
  tools: evidenceTools,
};
