import { activityProjection } from '../../projections/activity';
import { activityRoutes } from '../http/routes/activity';
import { activityTools } from '../mcp/tools/activity';
import type { AreaManifest } from './manifest';

/** The activity feed: every area's changes, as each area's manifest maps its events. */
export const activity: AreaManifest<'activity'> = {
  readModels: { activity: (all) => activityProjection(all.feed) },
  routes: activityRoutes,
  tools: activityTools,
};
