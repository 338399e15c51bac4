import { randomUUID } from 'node:crypto';
import { describe, it } from 'vitest';
import { organizationsProjection } from '../../../projections/organizations';
import { event, projectionSpec, T0, T1 } from '../../support/projection-spec';

const { org, given } = projectionSpec(organizationsProjection);
const user = randomUUID();
const key = randomUUID();

const created = event('OrganizationCreated', { organization_id: org, name: 'Acme', plan: 'pro', features: ['pitch'], pitch_allowance: 5 });
const keyCreated = (id: string, hash: string) =>
  event('ApiKeyCreated', { api_key_id: id, name: 'ci', key_hash: hash, key_prefix: 'ak_', user_id: user, website_ids: null, partner: false });

describe('organizations read model: organizations, their users and API keys', () => {
  it('given nothing, when an organization is created, then it is listed with its plan, features and no key', async () => {
    await given()
      .when(created)
      .then({ rm_organizations: [{ id: org, name: 'Acme', plan: 'pro', features: ['pitch'], pitch_allowance: 5, key_count: 0, created_at: T0 }] });
  });

  it('given an organization, when a user is added, then the user belongs to the event organization', async () => {
    await given(created)
      .when(event('UserAdded', { user_id: user, email: 'a@example.com', role: 'owner' }))
      .then({ rm_users: [{ id: user, organization_id: org, email: 'a@example.com', role: 'owner' }] });
  });

  it('given an organization, when two keys are created, then both are stored by hash and the organization counts them', async () => {
    const other = randomUUID();
    await given(created)
      .when(keyCreated(key, 'h1'), keyCreated(other, 'h2'))
      .then({
        rm_organizations: [{ id: org, key_count: 2 }],
        rm_api_keys: {
          orderBy: 'key_hash',
          rows: [
            { key_hash: 'h1', organization_id: org, revoked_at: null },
            { key_hash: 'h2', organization_id: org, revoked_at: null },
          ],
        },
      });
  });

  it('given a key, when it is revoked, then it is marked revoked at that time; revoked again, the first time stays', async () => {
    await given(created, keyCreated(key, 'h1'))
      .when(
        event('ApiKeyRevoked', { api_key_id: key }, { meta: { time: T1 } }),
        event('ApiKeyRevoked', { api_key_id: key }, { meta: { time: '2026-03-03T00:00:00.000Z' } }),
      )
      .then({ rm_api_keys: [{ id: key, revoked_at: T1 }] });
  });

  it('given two organizations, when a key is created in one, then only that one counts it', async () => {
    const theirs = randomUUID();
    await given(
      created,
      event(
        'OrganizationCreated',
        { organization_id: theirs, name: 'Other', plan: 'free', features: [], pitch_allowance: 0 },
        { meta: { organization_id: theirs } },
      ),
    )
      .when(keyCreated(key, 'h1'))
      .then({
        rm_organizations: {
          orderBy: 'name',
          rows: [
            { name: 'Acme', key_count: 1 },
            { name: 'Other', key_count: 0 },
          ],
        },
      });
  });
});
