import { entryOf } from '../../projections/activity';
import { webhooksProjection } from '../../projections/webhooks';
import { webhookRoutes } from '../http/routes/webhooks';
import { webhookTools } from '../mcp/tools/webhooks';
import { createSafeFetcher } from '../net/safe-fetch';
import { migrateWebhookDeliveries, startWebhookWorkers } from '../workers/webhooks';
import type { AreaManifest } from './manifest';

/** Webhook endpoints, and the worker that delivers every event they want (src/workers/webhooks.ts). */
export const webhooks: AreaManifest<'webhooks'> = {
  readModels: { webhooks: webhooksProjection },
  routes: webhookRoutes,
  tools: webhookTools,
  feed: {
    WebhookCreated: entryOf('webhook', 'created', (e) => [e.data.webhook_id], null),
    WebhookUpdated: entryOf('webhook', 'updated', (e) => [e.data.webhook_id], null),
    WebhookSecretRotated: entryOf('webhook', 'secret_rotated', (e) => [e.data.webhook_id], null),
    WebhookDeleted: entryOf('webhook', 'deleted', (e) => [e.data.webhook_id], null),
  },
  notInFeed: [{ why: 'a test delivery to one endpoint changes nothing (it is delivered as webhook.test)', types: ['WebhookTested'] }],
  workers: [
    {
      migrate: migrateWebhookDeliveries,
      start: ({ config, options, db, store, logger, composed, follow }) =>
        startWebhookWorkers({
          db,
          store,
          logger,
          follow,
          feed: composed.feed,
          retryScheduleS: config.webhookRetryScheduleS,
          ...options.webhooks,
          // one pool of connections: many deliveries to few endpoints
          fetch: options.webhooks?.fetch ?? createSafeFetcher({ keepAlive: true, ...(config.webhookAllowPrivate && { allowAddress: () => true }) }),
        }),
    },
  ],
};
