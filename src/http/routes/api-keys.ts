import { z } from 'zod';
import { createApiKey, CreateApiKey, revokeApiKey } from '../../../commands/api-keys/api-keys';
import { requireGlobal } from '../../../queries/access';
import { listApiKeys } from '../../../queries/websites/api-keys';
import { type Reads, route, settled, Uuid } from '../route';

/** A new key authenticates, and a revoked one is refused, from the next request on: the keys' read model. */
const READS: Reads = ['organizations'];

export const apiKeyRoutes = [
  route({
    method: 'POST',
    url: '/api/v1/api-keys',
    summary: 'Create an API key (global key only); the key is shown once',
    tag: 'api-keys',
    extension: true,
    body: CreateApiKey,
    status: 201,
    async handler(ctx) {
      requireGlobal(ctx.principal);
      return settled(ctx.deps, createApiKey(ctx.command(), ctx.body, ctx.principal.partner), READS);
    },
  }),
  route({
    method: 'GET',
    url: '/api/v1/api-keys',
    summary: "The organization's keys (never their secrets)",
    tag: 'api-keys',
    extension: true,
    async handler({ deps, principal }) {
      requireGlobal(principal);
      return { data: await listApiKeys(deps.rt.database.db, principal) };
    },
  }),
  route({
    method: 'DELETE',
    url: '/api/v1/api-keys/:api_key_id',
    summary: 'Revoke a key; it answers 401 from the next request on',
    tag: 'api-keys',
    extension: true,
    params: z.object({ api_key_id: Uuid }),
    async handler(ctx) {
      requireGlobal(ctx.principal);
      const result = await settled(ctx.deps, revokeApiKey(ctx.command(), ctx.params.api_key_id), READS);
      ctx.deps.auth.evictKeyId(ctx.params.api_key_id);
      return result;
    },
  }),
];
