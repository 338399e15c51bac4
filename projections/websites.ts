import type { Knex } from 'knex';
import { type EventHandlers, type Projection, handlerProjection, migrateSql } from '../src/eventstore/projection';
import { CREATED_UPDATED, insertRow } from './rows';

const handlers: EventHandlers<Knex.Transaction> = {
  WebsiteCreated: insertRow({
    table: 'rm_websites',
    id: 'website_id',
    columns: ['name', 'url', 'normalized_url', 'external_id'],
    extra: (e) => ({ organization_id: e.metadata.organization_id, status: 'active' }),
    stamps: CREATED_UPDATED,
  }),
  async WebsiteExternalIdSet(e, trx) {
    await trx('rm_websites').where('id', e.data.website_id).update({ external_id: e.data.external_id, updated_at: e.metadata.time });
  },
  async WebsiteStatusChanged(e, trx) {
    await trx('rm_websites').where('id', e.data.website_id).update({ status: e.data.status, updated_at: e.metadata.time });
  },
};

export const websitesProjection: Projection = handlerProjection(
  {
    name: 'websites',
    version: 1,
    tables: ['rm_websites'],
    migrate: migrateSql(`
        create table if not exists rm_websites (
          id uuid primary key,
          organization_id uuid not null,
          name text not null,
          url text not null,
          normalized_url text not null,
          status text not null,
          external_id text,
          created_at timestamptz not null,
          updated_at timestamptz not null
        );
        create index if not exists rm_websites_org on rm_websites (organization_id, created_at);
        create index if not exists rm_websites_external on rm_websites (organization_id, external_id) where external_id is not null;`),
  },
  handlers,
);
