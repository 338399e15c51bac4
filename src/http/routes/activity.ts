import { ActivityFilters, ActivityPage } from '../../../queries/activity/activity';
import * as activity from '../../app/activity';
import { route } from '../route';

export const activityRoutes = [
  route({
    method: 'GET',
    url: '/api/v1/activity',
    summary: "The organization's changes, newest first by default (partner keys)",
    tag: 'activity',
    query: ActivityFilters.strict(),
    responses: { 200: ActivityPage },
    handler: (ctx) => activity.getActivity(ctx, ctx.query),
  }),
];
