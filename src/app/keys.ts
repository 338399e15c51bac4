import * as apiKeysCommands from '../../commands/api-keys/api-keys';
import type { CreateApiKey } from '../../commands/api-keys/api-keys';
import * as apiKeysQueries from '../../queries/websites/api-keys';
import { getApiKey } from '../../queries/websites/api-keys';
import { authorize, type Need, requireGlobal } from '../domain/principal';
import { type Caller, commandContextOf, dbOf, type Reads, settled, writeThenRead } from './context';

/** A new key authenticates, and a revoked one is refused, from the next request on: the keys' read model. */
const READS: Reads = ['organizations'];
const MANAGE: Need = { category: 'api', level: 'manage' };

/** A new key of the organization (global key only); its secret is in this answer and nowhere else. */
export async function createApiKey(c: Caller, input: CreateApiKey) {
  requireGlobal(c.principal);
  authorize(c.principal, MANAGE);
  return writeThenRead(
    c,
    apiKeysCommands.createApiKey(commandContextOf(c), { ...input, caller_partner: c.principal.partner }),
    READS,
    async ({ id, key }) => {
      const row = await getApiKey(dbOf(c), c.principal.organizationId, id);
      return row && { id: row.id, name: row.name, website_ids: row.website_ids, partner: row.partner, created_at: row.created_at, key };
    },
  );
}

/** The organization's keys, never their secrets (global key only). */
export async function listApiKeys(c: Caller) {
  requireGlobal(c.principal);
  authorize(c.principal, MANAGE);
  return { data: await apiKeysQueries.listApiKeys(dbOf(c), c.principal) };
}

/** Revokes a key: it answers 401 from the next request on, on every instance. */
export async function revokeApiKey(c: Caller, apiKeyId: string) {
  requireGlobal(c.principal);
  authorize(c.principal, MANAGE);
  const result = await settled(c.deps, apiKeysCommands.revokeApiKey(commandContextOf(c), { api_key_id: apiKeyId }), READS);
  c.deps.auth.evictKeyId(apiKeyId);
  return result;
}
