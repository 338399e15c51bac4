import { organizationsProjection } from '../../projections/organizations';
import { entryOf } from '../../projections/activity';
import type { AreaManifest } from './manifest';

/** Organizations, their first users and the keys read model (rm_api_keys). */
export const organizations: AreaManifest<'organizations'> = {
  readModels: { organizations: organizationsProjection },
  feed: {
    UserAdded: entryOf('user', 'created', (e) => [e.data.user_id], null),
  },
  notInFeed: [{ why: "the organization's own start: its feed begins after it", types: ['OrganizationCreated'] }],
};
