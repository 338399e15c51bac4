import { isIP } from 'node:net';
import { z } from 'zod';
import { webhookEventTypes } from '../../commands/webhooks/event-types';
import * as webhookCommands from '../../commands/webhooks/webhook';
import { type CreateWebhook, type UpdateWebhook, WEBHOOK_NOT_FOUND } from '../../commands/webhooks/webhook';
import * as webhookQueries from '../../queries/webhooks/webhooks';
import type { DeliveryView, WebhookView } from '../../queries/webhooks/views';
import { liveWebsiteIdsOf } from '../../queries/websites/websites';
import { conflict, DomainErrorException, invalid, notFound } from '../domain/errors';
import { SYSTEM_ACTOR } from '../domain/events';
import { newId } from '../domain/ids';
import { authorize, type Need, requireGlobal } from '../domain/principal';
import { PageNum, PageSize } from '../domain/schemas';
import { isPublicAddress } from '../net/safe-fetch';
import { fanOut } from '../workers/webhooks';
import { type Caller, commandContextOf, dbOf, type Reads, settled, writeThenRead } from './context';

/**
 * Webhook endpoints (CONTRACT.md "Webhooks and alerts"): global keys only. The endpoint is event-sourced (stream
 * webhook-<id>, its secrets sealed in the log); its deliveries are the delivery worker's table (src/workers/webhooks.ts).
 */
const READS: Reads = ['webhooks'];
const MANAGE: Need = { category: 'api', level: 'manage' };
const VIEW: Need = { category: 'api', level: 'view' };
export const WEBHOOK_DISABLED = 'Webhook is disabled: enable it to send a test event';

function gate(c: Caller, need: Need): void {
  requireGlobal(c.principal);
  authorize(c.principal, need);
}

const bad = (message: string): never => {
  throw new DomainErrorException(invalid(message));
};

/** A public https URL without credentials; with WEBHOOK_ALLOW_PRIVATE=1 http and private addresses too. */
export function checkWebhookUrl(raw: string, allowPrivate: boolean): string {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return bad('url: must be an absolute URL');
  }
  if (u.username || u.password) bad('url: must not contain credentials');
  if (u.protocol !== 'https:' && !(allowPrivate && u.protocol === 'http:')) bad('url: must be an https URL');
  if (!allowPrivate) {
    const host = u.hostname.replace(/^\[|\]$/g, '').toLowerCase();
    const privateName =
      host === 'localhost' || host.endsWith('.localhost') || host.endsWith('.local') || host.endsWith('.internal') || !host.includes('.');
    if ((isIP(host) && !isPublicAddress(host)) || (!isIP(host) && privateName)) bad('url: must be a public address');
  }
  return u.href;
}

function checkEventTypes(c: Caller, types: string[]): string[] {
  const list = [...new Set(types)];
  if (list.includes('*') && list.length > 1) bad('event_types: "*" stands alone');
  const known = webhookEventTypes(c.deps.rt.composed.feed);
  for (const t of list) if (t !== '*' && !known.has(t)) bad(`event_types: unknown event type ${JSON.stringify(t)}`);
  return list;
}

async function checkWebsites(c: Caller, ids: string[] | null | undefined): Promise<string[] | null> {
  if (!ids) return null;
  const list = [...new Set(ids)];
  const known = await liveWebsiteIdsOf(dbOf(c), c.principal.organizationId, list);
  for (const id of list) if (!known.has(id)) bad(`website_ids: ${id} is not a website of this organization`);
  return list;
}

async function mine(c: Caller, id: string): Promise<WebhookView> {
  const w = await webhookQueries.getWebhook(dbOf(c), c.principal.organizationId, id);
  if (!w) throw new DomainErrorException(notFound(WEBHOOK_NOT_FOUND));
  return w;
}

const read = (c: Caller, id: string) => () => webhookQueries.getWebhook(dbOf(c), c.principal.organizationId, id);

export async function createWebhook(c: Caller, input: CreateWebhook): Promise<{ webhook: WebhookView; secret: string }> {
  gate(c, MANAGE);
  const url = checkWebhookUrl(input.url, c.deps.rt.config.webhookAllowPrivate);
  const event_types = checkEventTypes(c, input.event_types);
  const website_ids = await checkWebsites(c, input.website_ids);
  return writeThenRead(
    c,
    webhookCommands.createWebhook(commandContextOf(c), { ...input, url, event_types, website_ids }),
    READS,
    async ({ id, secret }) => {
      const webhook = await read(c, id)();
      return webhook && { webhook, secret };
    },
  );
}

export async function listWebhooks(c: Caller): Promise<{ webhooks: WebhookView[] }> {
  gate(c, VIEW);
  return { webhooks: await webhookQueries.listWebhooks(dbOf(c), c.principal.organizationId) };
}

export async function getWebhook(c: Caller, id: string): Promise<{ webhook: WebhookView }> {
  gate(c, VIEW);
  return { webhook: await mine(c, id) };
}

export async function updateWebhook(c: Caller, id: string, input: UpdateWebhook): Promise<{ webhook: WebhookView }> {
  gate(c, MANAGE);
  await mine(c, id);
  const patch = {
    ...input,
    url: input.url === undefined ? undefined : checkWebhookUrl(input.url, c.deps.rt.config.webhookAllowPrivate),
    event_types: input.event_types === undefined ? undefined : checkEventTypes(c, input.event_types),
    website_ids: input.website_ids === undefined ? undefined : await checkWebsites(c, input.website_ids),
  };
  const webhook = await writeThenRead(c, webhookCommands.updateWebhook(commandContextOf(c), id, patch), READS, read(c, id));
  return { webhook };
}

export async function deleteWebhook(c: Caller, id: string): Promise<{ success: true }> {
  gate(c, MANAGE);
  await mine(c, id);
  await settled(c.deps, webhookCommands.deleteWebhook(commandContextOf(c), id), READS);
  return { success: true };
}

export async function rotateSecret(c: Caller, id: string): Promise<{ secret: string }> {
  gate(c, MANAGE);
  await mine(c, id);
  const r = await settled(c.deps, webhookCommands.rotateSecret(commandContextOf(c), id), READS);
  return { secret: r.secret };
}

/** A `webhook.test` event for this endpoint: its delivery is recorded at once (the fan-out finds it there). */
export async function testWebhook(c: Caller, id: string): Promise<{ delivery_id: string }> {
  gate(c, MANAGE);
  if ((await mine(c, id)).status === 'disabled') throw new DomainErrorException(conflict(WEBHOOK_DISABLED));
  const eventId = newId();
  const ctx = commandContextOf(c);
  await settled(c.deps, webhookCommands.testWebhook(ctx, id, eventId), READS);
  const time = new Date().toISOString();
  const msg = {
    id: eventId,
    type: 'WebhookTested',
    data: { webhook_id: id },
    metadata: {
      organization_id: c.principal.organizationId,
      website_id: null,
      actor: SYSTEM_ACTOR,
      correlation_id: eventId,
      causation_id: null,
      time,
    },
    streamId: webhookCommands.webhookStream(id),
    position: '0:0',
  };
  await fanOut(dbOf(c), msg, { type: 'webhook.test', website_id: null, data: { webhook_id: id, message: 'a test event' }, only: id });
  const deliveryId = await webhookQueries.deliveryOfEvent(dbOf(c), id, eventId);
  // disabled between the check and the event: the test event is in the log, with no delivery
  if (!deliveryId) throw new DomainErrorException(conflict(WEBHOOK_DISABLED));
  return { delivery_id: deliveryId };
}

export function eventTypes(c: Caller): { event_types: string[] } {
  gate(c, VIEW);
  return { event_types: [...webhookEventTypes(c.deps.rt.composed.feed)] };
}

export const DeliveriesQuery = z.strictObject({
  page_num: PageNum(true),
  page_size: PageSize(true),
  status: z.enum(['pending', 'succeeded', 'failed', 'dead'], { error: 'must be pending, succeeded, failed or dead' }).optional(),
});
export type DeliveriesQuery = z.infer<typeof DeliveriesQuery>;

export async function listDeliveries(c: Caller, id: string, q: DeliveriesQuery) {
  gate(c, VIEW);
  await mine(c, id);
  return webhookQueries.listDeliveries(dbOf(c), id, q);
}

export async function redeliver(c: Caller, id: string, deliveryId: string): Promise<{ delivery: DeliveryView }> {
  gate(c, MANAGE);
  await mine(c, id);
  if (!(await webhookQueries.redeliver(dbOf(c), id, deliveryId))) throw new DomainErrorException(notFound('Delivery not found'));
  return { delivery: (await webhookQueries.getDelivery(dbOf(c), id, deliveryId))! };
}
