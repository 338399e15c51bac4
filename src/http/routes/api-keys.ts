import { z } from 'zod';
import { CreateApiKey } from '../../../commands/api-keys/api-keys';
import { ApiKeyView } from '../../../queries/websites/views';
import * as keys from '../../app/keys';
import { routeGroup, Uuid } from '../route';

const api = routeGroup({ tag: 'api-keys', extension: true });

export const apiKeyRoutes = [
  api.post('/api/v1/api-keys', {
    summary: 'Create an API key (global key only); the key is shown once',
    body: CreateApiKey,
    status: 201,
    answer: ApiKeyView.omit({ key_prefix: true, revoked: true }).extend({ key: z.string() }),
    handler: (ctx) => keys.createApiKey(ctx, ctx.body),
  }),
  api.get('/api/v1/api-keys', {
    summary: "The organization's keys (never their secrets)",
    answer: z.object({ data: z.array(ApiKeyView) }),
    handler: (ctx) => keys.listApiKeys(ctx),
  }),
  api.delete('/api/v1/api-keys/:api_key_id', {
    summary: 'Revoke a key; it answers 401 from the next request on',
    params: z.object({ api_key_id: Uuid }),
    answer: z.object({ success: z.literal(true) }),
    handler: (ctx) => keys.revokeApiKey(ctx, ctx.params.api_key_id),
  }),
];
