import { entry } from '../../projections/activity';
import { webhooksProjection } from '../../projections/webhooks';
import { webhookRoutes } from '../http/routes/webhooks';
import { webhookTools } from '../mcp/tools/webhooks';
import type { AreaManifest } from './manifest';

/** Webhook endpoints; their deliveries are the delivery worker's (src/workers/webhooks.ts, started by the runtime). */
export const webhooks: AreaManifest<'webhooks'> = {
  readModels: { webhooks: webhooksProjection },
  routes: webhookRoutes,
  tools: webhookTools,
  feed: {
    WebhookCreated: (e) => entry('webhook', 'created', [e.data.webhook_id], null),
    WebhookUpdated: (e) => entry('webhook', 'updated', [e.data.webhook_id], null),
    WebhookSecretRotated: (e) => entry('webhook', 'secret_rotated', [e.data.webhook_id], null),
    WebhookDeleted: (e) => entry('webhook', 'deleted', [e.data.webhook_id], null),
  },
  notInFeed: [{ why: 'a test delivery to one endpoint changes nothing (it is delivered as webhook.test)', types: ['WebhookTested'] }],
};
