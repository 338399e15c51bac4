import { organizationsProjection } from '../../projections/organizations';
import { entry } from '../../projections/activity';
import type { AreaManifest } from './manifest';

/** Organizations, their first users and the keys read model (rm_api_keys). */
export const organizations: AreaManifest<'organizations'> = {
  readModels: { organizations: organizationsProjection },
  feed: {
    UserAdded: (e) => entry('user', 'created', [e.data.user_id], null),
  },
  notInFeed: [{ why: "the organization's own start: its feed begins after it", types: ['OrganizationCreated'] }],
};
