import { z } from 'zod';
import { WebhooksView } from '../../../queries/webhooks/views';
import * as webhooks from '../../app/webhooks';
import { READS, tool } from '../tool';

/** Webhooks for assistants, with REST's rules (src/app/webhooks.ts). */
export const webhookTools = [
  tool({
    name: 'list_webhooks',
    title: 'List webhooks',
    description: "The organization's webhook endpoints: URL, event types, websites, format and status. Needs a global API key.",
    input: z.strictObject({}),
    output: WebhooksView,
    annotations: READS,
    handler: (ctx) => webhooks.listWebhooks(ctx),
  }),
];
