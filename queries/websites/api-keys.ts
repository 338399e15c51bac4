import type { Knex } from 'knex';
import type { Principal } from '../../src/domain/principal';
import { oldestFirst } from '../paging';
import type { ApiKeyView } from './views';

/** The organization's keys, oldest first. */
export const listApiKeys = (db: Knex, p: Principal): Promise<ApiKeyView[]> =>
  oldestFirst(db, 'rm_api_keys', { organization_id: p.organizationId }, apiKeyView);

/** One key of the organization, never its secret; undefined when it is not (yet) in the read model. */
export async function getApiKey(db: Knex, organizationId: string, id: string): Promise<ApiKeyView | undefined> {
  const row = await db('rm_api_keys').where({ organization_id: organizationId, id }).first();
  return row && apiKeyView(row);
}

/** An API key by its hash with its organization's plan and features (revoked ones too: their refusal is cached). */
export interface KeyOfHash {
  id: string;
  organization_id: string;
  user_id: string | null;
  website_ids: Principal['websiteIds'];
  partner: boolean;
  revoked_at: Date | null;
  plan: Principal['plan'];
  features: Principal['features'];
}

export async function apiKeyByHash(db: Knex, hash: string): Promise<KeyOfHash | undefined> {
  return db('rm_api_keys as k')
    .join('rm_organizations as o', 'o.id', 'k.organization_id')
    .where('k.key_hash', hash)
    .first('k.id', 'k.organization_id', 'k.user_id', 'k.website_ids', 'k.partner', 'k.revoked_at', 'o.plan', 'o.features');
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
