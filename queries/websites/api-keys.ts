import type { Knex } from 'knex';
import type { Principal } from '../../src/domain/principal';
import type { ApiKeyView } from './views';

/** The organization's keys, oldest first. */
export async function listApiKeys(db: Knex, p: Principal): Promise<ApiKeyView[]> {
  const rows = await db('rm_api_keys')
    .where('organization_id', p.organizationId)
    .orderBy([{ column: 'created_at' }, { column: 'id' }]);
  return rows.map((k) => ({
    id: k.id,
    name: k.name,
    key_prefix: k.key_prefix,
    website_ids: k.website_ids,
    partner: k.partner,
    revoked: k.revoked_at !== null,
    created_at: new Date(k.created_at).toISOString(),
  }));
}
