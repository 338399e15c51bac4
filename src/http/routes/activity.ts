import { ActivityFilters, getActivity } from '../../../queries/activity/activity';
import { requirePartner, requireWebsite } from '../../../queries/access';
import { route } from '../route';

export const activityRoutes = [
  route({
    method: 'GET',
    url: '/api/v1/activity',
    summary: "The organization's changes, newest first by default (partner keys)",
    tag: 'activity',
    query: ActivityFilters.strict(),
    async handler({ deps, principal, query }) {
      if (query.website_id) await requireWebsite(deps.rt.database.db, principal, query.website_id, { paused: true, deleted: true });
      requirePartner(principal);
      return getActivity(deps.rt.database.db, principal, query);
    },
  }),
];
