import { discoveryProjection } from '../../projections/discovery';
import { discoveryRoutes } from '../http/routes/discovery';
import { discoveryTools } from '../mcp/tools/discovery';
import { discoveryJob } from '../workers/discovery';
import { entryOf } from '../../projections/activity';
import type { AreaManifest } from './manifest';

/** Prompt discovery runs. */
export const discovery: AreaManifest<'discovery'> = {
  readModels: { discovery: discoveryProjection },
  routes: discoveryRoutes,
  tools: discoveryTools,
  jobs: {
    discovery: {
      requested: 'PromptDiscoveryRequested',
      spec: (deps) => discoveryJob({ db: deps.db, engines: deps.engines, contentModel: deps.contentModel, now: deps.now }),
    },
  },
  feed: {
    PromptDiscoveryCompleted: entryOf('prompt_discovery_run', 'completed', (e) => [e.data.run_id]),
    PromptDiscoveryRequested: entryOf('prompt_discovery_run', 'created', (e) => [e.data.run_id], 'website_id'),
    PromptDiscoveryAccepted: entryOf('prompt_discovery_run', 'accepted', (e) => [e.data.run_id, ...e.data.prompt_ids]),
  },
};
