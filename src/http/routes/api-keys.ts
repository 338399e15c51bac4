import { z } from 'zod';
import { CreateApiKey } from '../../../commands/api-keys/api-keys';
import { ApiKeyView } from '../../../queries/websites/views';
import * as keys from '../../app/keys';
import { route, Uuid } from '../route';

export const apiKeyRoutes = [
  route({
    method: 'POST',
    url: '/api/v1/api-keys',
    summary: 'Create an API key (global key only); the key is shown once',
    tag: 'api-keys',
    extension: true,
    body: CreateApiKey,
    status: 201,
    responses: { 201: ApiKeyView.omit({ key_prefix: true, revoked: true }).extend({ key: z.string() }) },
    handler: (ctx) => keys.createApiKey(ctx, ctx.body),
  }),
  route({
    method: 'GET',
    url: '/api/v1/api-keys',
    summary: "The organization's keys (never their secrets)",
    tag: 'api-keys',
    extension: true,
    responses: { 200: z.object({ data: z.array(ApiKeyView) }) },
    handler: (ctx) => keys.listApiKeys(ctx),
  }),
  route({
    method: 'DELETE',
    url: '/api/v1/api-keys/:api_key_id',
    summary: 'Revoke a key; it answers 401 from the next request on',
    tag: 'api-keys',
    extension: true,
    params: z.object({ api_key_id: Uuid }),
    responses: { 200: z.object({ success: z.literal(true) }) },
    handler: (ctx) => keys.revokeApiKey(ctx, ctx.params.api_key_id),
  }),
];
