import { ActivityFilters, ActivityPage } from '../../../queries/activity/activity';
import * as activity from '../../app/activity';
import { routeGroup } from '../route';

const api = routeGroup({ tag: 'activity' });

export const activityRoutes = [
  api.get('/api/v1/activity', {
    summary: "The organization's changes, newest first by default (partner keys)",
    query: ActivityFilters.strict(),
    answer: ActivityPage,
    handler: (ctx) => activity.getActivity(ctx, ctx.query),
  }),
];
