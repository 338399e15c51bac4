import type { Knex } from 'knex';
import { type EventHandlers, type Projection, handlerProjection } from '../src/eventstore/projection';

const handlers: EventHandlers<Knex.Transaction> = {
  async WebsiteCreated(e, trx) {
    const at = e.metadata.time;
    await trx('rm_websites').insert({
      id: e.data.website_id,
      organization_id: e.metadata.organization_id,
      name: e.data.name,
      url: e.data.url,
      normalized_url: e.data.normalized_url,
      status: 'active',
      external_id: e.data.external_id,
      created_at: at,
      updated_at: at,
    });
  },
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
    async migrate(db: Knex) {
      await db.raw(`
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
        create index if not exists rm_websites_external on rm_websites (organization_id, external_id) where external_id is not null;`);
    },
  },
  handlers,
);
