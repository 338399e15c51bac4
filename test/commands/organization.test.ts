import { describe, it } from 'vitest';
import { decideCreateApiKey, decideRevokeApiKey } from '../../commands/api-keys/api-keys';
import { decide } from '../../commands/organizations/create-organization';
import { Organization } from '../../commands/organizations/organization';
import { decideCreateWebsite } from '../../commands/websites/create-website';
import { decideDeleteWebsite, decideUpdateWebsite } from '../../commands/websites/update-website';
import type { DomainEvent } from '../../src/domain/events';
import { given } from '../support/given';

const ORG = '11111111-1111-4111-8111-111111111111';
const OWNER = '22222222-2222-4222-8222-222222222222';
const KEY = '33333333-3333-4333-8333-333333333333';
const SITE = '44444444-4444-4444-8444-444444444444';
const SITE2 = '55555555-5555-4555-8555-555555555555';

const orgCreated: DomainEvent = {
  type: 'OrganizationCreated',
  data: { organization_id: ORG, name: 'Acme', plan: 'enterprise', features: ['shopping'], pitch_allowance: 10 },
};
const site = (id: string, external_id: string | null = null): DomainEvent => ({
  type: 'WebsiteCreated',
  data: { website_id: id, name: 'Site', url: 'https://site.example.com', normalized_url: 'site.example.com/', external_id },
});
const create = {
  name: 'Acme',
  plan: 'enterprise' as const,
  features: ['shopping' as const],
  pitch_allowance: 10,
  organization_id: ORG,
  owner_user_id: OWNER,
  api_key_id: KEY,
  key_hash: 'h',
  key_prefix: 'aivis_abcd',
  owner_email: 'o@acme.test',
};

describe('organization', () => {
  it('given nothing, when an organization is created, then it, its owner and a global partner key are recorded', () => {
    given(Organization)
      .when((s) => decide(s, create))
      .then([
        orgCreated,
        { type: 'UserAdded', data: { user_id: OWNER, email: 'o@acme.test', role: 'owner' } },
        {
          type: 'ApiKeyCreated',
          data: { api_key_id: KEY, name: 'Owner key', key_hash: 'h', key_prefix: 'aivis_abcd', user_id: OWNER, website_ids: null, partner: true },
        },
      ]);
  });

  it('given an organization, when it is created again, then conflict', () => {
    given(Organization, orgCreated)
      .when((s) => decide(s, create))
      .then({ kind: 'conflict', message: 'Organization already exists', details: undefined });
  });

  it('given a website holding an external id, when another website is created with it, then conflict naming the existing one', () => {
    const { result } = given(Organization, orgCreated, site(SITE, 'ext'))
      .when((s) => decideCreateWebsite(s, { name: 'B', url: 'https://b.example.com', external_id: 'ext', website_id: SITE2 }))
      .then({
        kind: 'conflict',
        message: 'external_id is already mapped to another website',
        details: { existing: { website_id: SITE, name: 'Site', url: 'https://site.example.com', status: 'active', external_id: 'ext' } },
      });
    void result;
  });

  it('given a deleted website, when its external id is cleared, then it is recorded; a status change is not found', () => {
    const deleted: DomainEvent = { type: 'WebsiteStatusChanged', data: { website_id: SITE, status: 'deleted' } };
    given(Organization, orgCreated, site(SITE, 'ext'), deleted)
      .when((s) => decideUpdateWebsite(s, SITE, { external_id: null }))
      .then([{ type: 'WebsiteExternalIdSet', data: { website_id: SITE, external_id: null } }]);
    given(Organization, orgCreated, site(SITE, 'ext'), deleted)
      .when((s) => decideUpdateWebsite(s, SITE, { status: 'active' }))
      .then({ kind: 'not_found', message: 'Website not found' });
    given(Organization, orgCreated, site(SITE), deleted)
      .when((s) => decideDeleteWebsite(s, SITE))
      .then({ kind: 'not_found', message: 'Website not found' });
  });

  it('given an unchanged value, when the website is updated, then nothing is recorded', () => {
    given(Organization, orgCreated, site(SITE, 'ext'))
      .when((s) => decideUpdateWebsite(s, SITE, { external_id: 'ext', status: 'active' }))
      .then([]);
  });

  it('given a non-partner caller, when it asks for a partner key, then forbidden', () => {
    given(Organization, orgCreated)
      .when((s) =>
        decideCreateApiKey(s, {
          name: 'k',
          partner: true,
          api_key_id: KEY,
          key_hash: 'h',
          key_prefix: 'p',
          user_id: null,
          caller_partner: false,
        }),
      )
      .then({ kind: 'forbidden', message: 'Forbidden: partner API key required' });
  });

  it('given a scope naming an unknown website, when a key is created, then invalid naming the field', () => {
    given(Organization, orgCreated, site(SITE))
      .when((s) =>
        decideCreateApiKey(s, {
          name: 'k',
          website_ids: [SITE, SITE2],
          api_key_id: KEY,
          key_hash: 'h',
          key_prefix: 'p',
          user_id: null,
          caller_partner: true,
        }),
      )
      .then({ kind: 'invalid', message: `website_ids: ${SITE2} is not a website of this organization` });
  });

  it('given a revoked key, when it is revoked again, then not found', () => {
    const created: DomainEvent = {
      type: 'ApiKeyCreated',
      data: { api_key_id: KEY, name: 'k', key_hash: 'h', key_prefix: 'p', user_id: null, website_ids: null, partner: false },
    };
    given(Organization, orgCreated, created)
      .when((s) => decideRevokeApiKey(s, KEY))
      .then([{ type: 'ApiKeyRevoked', data: { api_key_id: KEY } }]);
    given(Organization, orgCreated, created, { type: 'ApiKeyRevoked', data: { api_key_id: KEY } })
      .when((s) => decideRevokeApiKey(s, KEY))
      .then({ kind: 'not_found', message: 'API key not found' });
  });
});
