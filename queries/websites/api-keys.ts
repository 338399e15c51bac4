import type { Knex } from 'knex';
import type { Principal } from '../../src/domain/principal';
import type { ApiKeyView } from './views';

/** The organization's keys, oldest first. */
export async function listApiKeys(db: Knex, p: Principal): Promise<ApiKeyView[]> {
  const rows = await db('rm_api_keys')
    .where('organization_id', p.organizationId)
    .orderBy([{ column: 'created_at' }, { column: 'id' }]);
  return rows.map(apiKeyView);
}

/** One key of the organization, never its secret; undefined when it is not (yet) in the read model. */
export async function getApiKey(db: Knex, organizationId: string, id: string): Promise<ApiKeyView | undefined> {
  const row = await db('rm_api_keys').where({ organization_id: organizationId, id }).first();
  return row && apiKeyView(row);
}

function apiKeyView(k: Record<string, any>): ApiKeyView {
  return {
    id: k.id,
    name: k.name,
    key_prefix: k.key_prefix,
    website_ids: k.website_ids,
    partner: k.partner,
    revoked: k.revoked_at !== null,
    created_at: new Date(k.created_at).toISOString(),
  };
}
