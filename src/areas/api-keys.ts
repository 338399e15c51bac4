import { apiKeyRoutes } from '../http/routes/api-keys';
import { entry } from '../../projections/activity';
import type { AreaManifest } from './manifest';

/** API keys (their read model is the organizations area's). */
export const apiKeys: AreaManifest = {
  routes: apiKeyRoutes,
  feed: {
    ApiKeyCreated: (e) => entry('api_key', 'created', [e.data.api_key_id], null),
    ApiKeyRevoked: (e) => entry('api_key', 'revoked', [e.data.api_key_id], null),
  },
};
