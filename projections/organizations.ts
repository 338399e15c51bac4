import type { Knex } from 'knex';
import { type EventHandlers, type Projection, handlerProjection, migrateSql } from '../src/eventstore/projection';
import { insertRow } from './rows';

const handlers: EventHandlers<Knex.Transaction> = {
  OrganizationCreated: insertRow({
    table: 'rm_organizations',
    id: 'organization_id',
    columns: ['name', 'plan', 'features', 'pitch_allowance'],
  }),
  UserAdded: insertRow({
    table: 'rm_users',
    id: 'user_id',
    columns: ['email', 'role'],
    extra: (e) => ({ organization_id: e.metadata.organization_id }),
  }),
  async ApiKeyCreated(e, trx) {
    const org = e.metadata.organization_id;
    await trx('rm_api_keys').insert({
      id: e.data.api_key_id,
      organization_id: org,
      key_hash: e.data.key_hash,
      key_prefix: e.data.key_prefix,
      name: e.data.name,
      user_id: e.data.user_id,
      website_ids: e.data.website_ids,
      partner: e.data.partner,
      created_at: e.metadata.time,
    });
    await trx('rm_organizations').where('id', org).increment('key_count', 1);
    // every instance forgets having refused this key (its negative cache) when this transaction commits
    await trx.raw(`select pg_notify('aivis_keys', ?)`, [e.data.key_hash]);
  },
  async ApiKeyRevoked(e, trx) {
    await trx('rm_api_keys').where('id', e.data.api_key_id).whereNull('revoked_at').update({ revoked_at: e.metadata.time });
    // every instance evicts the key from its lookup cache when this transaction commits
    await trx.raw(`select pg_notify('aivis_keys', key_hash) from rm_api_keys where id = ?`, [e.data.api_key_id]);
  },
};

/** Organizations, their people and their API keys (hash only): what authentication and administration read. */
export const organizationsProjection: Projection = handlerProjection(
  {
    name: 'organizations',
    version: 1,
    tables: ['rm_api_keys', 'rm_users', 'rm_organizations'],
    migrate: migrateSql(`
        create table if not exists rm_organizations (
          id uuid primary key,
          name text not null,
          plan text not null,
          features text[] not null,
          pitch_allowance int not null,
          key_count int not null default 0,
          created_at timestamptz not null
        );
        create table if not exists rm_users (
          id uuid primary key,
          organization_id uuid not null,
          email text not null,
          role text not null,
          created_at timestamptz not null
        );
        create index if not exists rm_users_org on rm_users (organization_id);
        create table if not exists rm_api_keys (
          id uuid primary key,
          organization_id uuid not null,
          key_hash text not null unique,
          key_prefix text not null,
          name text not null,
          user_id uuid,
          website_ids uuid[],
          partner boolean not null,
          revoked_at timestamptz,
          created_at timestamptz not null
        );
        create index if not exists rm_api_keys_org on rm_api_keys (organization_id);`),
  },
  handlers,
);
