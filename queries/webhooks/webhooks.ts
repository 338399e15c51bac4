import type { Knex } from 'knex';
import { organizationIds, organizationRow } from '../access';
import { newestFirst, oldestFirst, onePageAndMore, type PageRequest, pageInfo, pageRows } from '../paging';
import { iso, isoOrNull } from '../timestamps';
import type { DeliveryView, WebhookView } from './views';

const view = (r: any): WebhookView => ({
  id: r.id,
  url: r.url,
  description: r.description,
  event_types: r.event_types,
  website_ids: r.website_ids,
  format: r.format,
  status: r.status,
  disabled_reason: r.disabled_reason,
  created_at: iso(r.created_at),
  updated_at: iso(r.updated_at),
});

/** The organization's webhook endpoints, oldest first. */
export const listWebhooks = (db: Knex, organizationId: string): Promise<WebhookView[]> =>
  oldestFirst(db, 'rm_webhooks', { organization_id: organizationId }, view);

/** The ids among `ids` of the organization's endpoints. */
export const webhookIdsOf = (db: Knex, organizationId: string, ids: readonly string[]): Promise<Set<string>> =>
  organizationIds(db, 'rm_webhooks', organizationId, ids);

/** One endpoint of the organization (another organization's is undefined, as an unknown one). */
export const getWebhook = (db: Knex, organizationId: string, id: string): Promise<WebhookView | undefined> =>
  organizationRow(db, 'rm_webhooks', organizationId, { id }, view);

const delivery = (r: any): DeliveryView => ({
  id: r.id,
  event_id: r.event_id,
  event_type: r.event_type,
  status: r.status,
  attempts: r.attempts,
  last_status_code: r.last_status_code,
  last_error: r.last_error,
  created_at: iso(r.created_at),
  next_attempt_at: r.status === 'pending' ? isoOrNull(r.next_attempt_at) : null,
  delivered_at: isoOrNull(r.delivered_at),
});

/** A page of an endpoint's deliveries, newest first. */
export async function listDeliveries(db: Knex, webhookId: string, f: PageRequest & { status?: string }) {
  const q = db('webhook_deliveries').where('webhook_id', webhookId);
  if (f.status) q.where('status', f.status);
  const rows = await onePageAndMore(q.orderBy(newestFirst('created_at', 'id')), f);
  return { deliveries: pageRows(rows, f).map(delivery), ...pageInfo(rows, f) };
}

export async function getDelivery(db: Knex, webhookId: string, id: string): Promise<DeliveryView | undefined> {
  const r = await db('webhook_deliveries').where({ webhook_id: webhookId, id }).first();
  return r ? delivery(r) : undefined;
}

/** A new attempt of a delivery, as soon as a dispatcher is free (the same event id: the same webhook-id). */
export async function redeliver(db: Knex, webhookId: string, id: string): Promise<boolean> {
  const n = await db('webhook_deliveries')
    .where({ webhook_id: webhookId, id })
    .update({ status: 'pending', next_attempt_at: db.fn.now(), delivered_at: null });
  return n > 0;
}

/** The delivery row a test event made for its endpoint (the fan-out adds it once the event reaches the bus). */
export async function deliveryOfEvent(db: Knex, webhookId: string, eventId: string): Promise<string | undefined> {
  const r = await db('webhook_deliveries').where({ webhook_id: webhookId, event_id: eventId }).first('id');
  return r?.id;
}
