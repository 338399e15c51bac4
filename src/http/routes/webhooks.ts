import { z } from 'zod';
import { CreateWebhook, UpdateWebhook } from '../../../commands/webhooks/webhook';
import {
  CreatedWebhookAnswer,
  DeletedAnswer,
  DeliveriesPage,
  DeliveryIdAnswer,
  DeliveryView,
  EventTypesAnswer,
  SecretAnswer,
  WebhookAnswer,
  WebhooksView,
} from '../../../queries/webhooks/views';
import * as webhooks from '../../app/webhooks';
import { routeGroup, Uuid } from '../route';

const api = routeGroup({ tag: 'webhooks', extension: true });
const Params = z.object({ webhook_id: Uuid });
const DeliveryParams = z.object({ webhook_id: Uuid, delivery_id: Uuid });

/** Webhook endpoints and their deliveries (global keys only): thin adapters over src/app/webhooks.ts. */
export const webhookRoutes = [
  api.post('/api/v1/webhooks', {
    summary: 'Create a webhook endpoint; its signing secret is in this answer only',
    body: CreateWebhook,
    status: 201,
    answer: CreatedWebhookAnswer,
    handler: (ctx) => webhooks.createWebhook(ctx, ctx.body),
  }),
  api.get('/api/v1/webhooks', {
    summary: "The organization's webhook endpoints, oldest first",
    answer: WebhooksView,
    handler: (ctx) => webhooks.listWebhooks(ctx),
  }),
  api.get('/api/v1/webhooks/event-types', {
    summary: 'Every event type an endpoint can subscribe to',
    answer: EventTypesAnswer,
    handler: async (ctx) => webhooks.eventTypes(ctx),
  }),
  api.get('/api/v1/webhooks/:webhook_id', {
    summary: 'One webhook endpoint',
    params: Params,
    answer: WebhookAnswer,
    handler: (ctx) => webhooks.getWebhook(ctx, ctx.params.webhook_id),
  }),
  api.patch('/api/v1/webhooks/:webhook_id', {
    summary: "Change an endpoint's url, description, event types, websites or status (only the fields given)",
    params: Params,
    body: UpdateWebhook,
    answer: WebhookAnswer,
    handler: (ctx) => webhooks.updateWebhook(ctx, ctx.params.webhook_id, ctx.body),
  }),
  api.delete('/api/v1/webhooks/:webhook_id', {
    summary: 'Delete an endpoint (its secrets are erased)',
    params: Params,
    answer: DeletedAnswer,
    handler: (ctx) => webhooks.deleteWebhook(ctx, ctx.params.webhook_id),
  }),
  api.post('/api/v1/webhooks/:webhook_id/rotate-secret', {
    summary: 'A new signing secret; the old one still signs for 24 h',
    params: Params,
    answer: SecretAnswer,
    handler: (ctx) => webhooks.rotateSecret(ctx, ctx.params.webhook_id),
  }),
  api.post('/api/v1/webhooks/:webhook_id/test', {
    summary: 'Send a webhook.test event to this endpoint',
    params: Params,
    status: 202,
    answer: DeliveryIdAnswer,
    handler: (ctx) => webhooks.testWebhook(ctx, ctx.params.webhook_id),
  }),
  api.get('/api/v1/webhooks/:webhook_id/deliveries', {
    summary: "A page of the endpoint's deliveries, newest first, with their attempts",
    params: Params,
    query: webhooks.DeliveriesQuery,
    answer: DeliveriesPage,
    handler: (ctx) => webhooks.listDeliveries(ctx, ctx.params.webhook_id, ctx.query),
  }),
  api.post('/api/v1/webhooks/:webhook_id/deliveries/:delivery_id/redeliver', {
    summary: 'A new attempt of a delivery (the same webhook-id)',
    params: DeliveryParams,
    status: 202,
    answer: z.object({ delivery: DeliveryView }),
    handler: (ctx) => webhooks.redeliver(ctx, ctx.params.webhook_id, ctx.params.delivery_id),
  }),
];
