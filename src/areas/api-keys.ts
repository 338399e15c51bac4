import { apiKeyRoutes } from '../http/routes/api-keys';
import { entryOf } from '../../projections/activity';
import type { AreaManifest } from './manifest';

/** API keys (their read model is the organizations area's). */
export const apiKeys: AreaManifest = {
  routes: apiKeyRoutes,
  feed: {
    ApiKeyCreated: entryOf('api_key', 'created', (e) => [e.data.api_key_id], null),
    ApiKeyRevoked: entryOf('api_key', 'revoked', (e) => [e.data.api_key_id], null),
  },
};
