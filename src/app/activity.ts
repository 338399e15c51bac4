import * as activityQueries from '../../queries/activity/activity';
import type { ActivityFilters } from '../../queries/activity/activity';
import { authorize, type Need, requirePartner } from '../domain/principal';
import { type Caller, dbOf, websiteFor } from './context';

const VIEW: Need = { category: 'organization', level: 'view' };

/** The organization's changes (partner keys); a website filter must be one the caller reaches (deleted ones too). */
export async function getActivity(c: Caller, filters: ActivityFilters) {
  if (filters.website_id) await websiteFor(c, filters.website_id, VIEW, { paused: true, deleted: true });
  requirePartner(c.principal);
  authorize(c.principal, VIEW);
  return activityQueries.getActivity(dbOf(c), c.principal, filters);
}
