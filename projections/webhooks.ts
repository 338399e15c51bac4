import type { Knex } from 'knex';
import { type EventHandlers, handlerProjection, migrateSql, type Projection } from '../src/eventstore/projection';
import { CREATED_UPDATED, orgRow } from './rows';

const json = (v: unknown) => (v === null ? null : JSON.stringify(v));

const handlers: EventHandlers<Knex.Transaction> = {
  WebhookCreated: orgRow({
    table: 'rm_webhooks',
    id: 'webhook_id',
    columns: ['url', 'description', 'format'],
    json: ['event_types', 'website_ids'],
    extra: () => ({ status: 'enabled' }),
    stamps: ['secret_changed_at', ...CREATED_UPDATED],
  }),
  async WebhookUpdated(e, trx) {
    const d = e.data;
    const row: Record<string, unknown> = { updated_at: e.metadata.time };
    if (d.url !== undefined) row.url = d.url;
    if (d.description !== undefined) row.description = d.description;
    if (d.event_types !== undefined) row.event_types = json(d.event_types);
    if (d.website_ids !== undefined) row.website_ids = json(d.website_ids);
    if (d.status !== undefined) {
      row.status = d.status;
      row.disabled_reason = d.status === 'disabled' ? (d.reason ?? null) : null;
    }
    await trx('rm_webhooks').where('id', d.webhook_id).update(row);
  },
  async WebhookSecretRotated(e, trx) {
    await trx('rm_webhooks').where('id', e.data.webhook_id).update({ secret_changed_at: e.metadata.time, updated_at: e.metadata.time });
  },
  async WebhookDeleted(e, trx) {
    await trx('rm_webhooks').where('id', e.data.webhook_id).delete();
  },
};

/** Webhook endpoints as the listing shows them and the delivery worker matches events against (no secret: that stays sealed in the log). */
export const webhooksProjection: Projection = handlerProjection(
  {
    name: 'webhooks',
    version: 1,
    tables: ['rm_webhooks'],
    migrate: migrateSql(`
      create table if not exists rm_webhooks (
        id uuid primary key,
        organization_id uuid not null,
        url text not null,
        description text,
        event_types jsonb not null,
        website_ids jsonb,
        format text not null,
        status text not null,
        disabled_reason text,
        secret_changed_at timestamptz not null,
        created_at timestamptz not null,
        updated_at timestamptz not null
      );
      create index if not exists rm_webhooks_org on rm_webhooks (organization_id, created_at, id);`),
  },
  handlers,
);
