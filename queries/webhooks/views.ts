import { z } from 'zod';

export const WebhookView = z.object({
  id: z.string(),
  url: z.string(),
  description: z.string().nullable(),
  event_types: z.array(z.string()),
  /** null: every website of the organization, later ones included */
  website_ids: z.array(z.string()).nullable(),
  format: z.enum(['standard', 'slack']),
  status: z.enum(['enabled', 'disabled']),
  /** why the worker disabled it (an endpoint that answered 410), else null */
  disabled_reason: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type WebhookView = z.infer<typeof WebhookView>;

export const WebhookAnswer = z.object({ webhook: WebhookView });
export const CreatedWebhookAnswer = z.object({ webhook: WebhookView, secret: z.string() });
export const WebhooksView = z.object({ webhooks: z.array(WebhookView) });
export const SecretAnswer = z.object({ secret: z.string() });
export const DeliveryIdAnswer = z.object({ delivery_id: z.string() });
export const EventTypesAnswer = z.object({ event_types: z.array(z.string()) });
export const DeletedAnswer = z.object({ success: z.literal(true) });

export const DeliveryView = z.object({
  id: z.string(),
  event_id: z.string(),
  event_type: z.string(),
  status: z.enum(['pending', 'succeeded', 'failed', 'dead']),
  attempts: z.number().int(),
  last_status_code: z.number().int().nullable(),
  last_error: z.string().nullable(),
  created_at: z.string(),
  next_attempt_at: z.string().nullable(),
  delivered_at: z.string().nullable(),
});
export type DeliveryView = z.infer<typeof DeliveryView>;
export const DeliveriesPage = z.object({ deliveries: z.array(DeliveryView), page_num: z.number(), page_size: z.number(), has_more: z.boolean() });
