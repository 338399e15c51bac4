import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { type DomainError, notFound } from '../../src/domain/errors';
import { type EventData, type EventsOf, exhaustive, webhookEvents } from '../../src/domain/events';
import { typesOf } from '../../src/domain/event-lists';
import { newId } from '../../src/domain/ids';
import { boundedString, text, Uuid } from '../../src/domain/schemas';
import { type Aggregate, type CommandContext, type Decision, handle } from '../handle';

/** One webhook endpoint, folded from its stream `webhook-<id>`: its settings and signing secrets. */
export const webhookStream = (webhookId: string) => `webhook-${webhookId}`;

export const WEBHOOK_EVENT_TYPES = typesOf(webhookEvents);
type WebhookEvent = EventsOf<typeof WEBHOOK_EVENT_TYPES>;

export const WEBHOOK_NOT_FOUND = 'Webhook not found';
/** how long a rotated-out secret still signs */
export const ROTATION_OVERLAP_MS = 24 * 3600_000;

export type WebhookFormat = EventData<'WebhookCreated'>['format'];

export interface WebhookState {
  status: 'none' | 'enabled' | 'disabled' | 'deleted';
  url: string;
  format: WebhookFormat;
  /** null once erased */
  secret: string | null;
  previous: { secret: string | null; until: string } | null;
}

export const Webhook: Aggregate<WebhookState, WebhookEvent> = {
  types: WEBHOOK_EVENT_TYPES,
  initial: () => ({ status: 'none', url: '', format: 'standard', secret: null, previous: null }),
  evolve(s, e) {
    switch (e.type) {
      case 'WebhookCreated':
        return { ...s, status: 'enabled', url: e.data.url, format: e.data.format, secret: e.data.secret };
      case 'WebhookUpdated':
        return { ...s, url: e.data.url ?? s.url, status: s.status === 'deleted' ? s.status : (e.data.status ?? s.status) };
      case 'WebhookSecretRotated':
        return { ...s, secret: e.data.secret, previous: { secret: s.secret, until: e.data.previous_valid_until } };
      case 'WebhookDeleted':
        return { ...s, status: 'deleted', secret: null, previous: null };
      case 'WebhookTested':
        return s;
    }
    return exhaustive(e, s);
  },
};

/** The secrets that sign a delivery at `now`: the current one, and the rotated-out one for its 24 h. */
export function signingSecrets(s: WebhookState, now: Date): string[] {
  const out = s.secret ? [s.secret] : [];
  if (s.previous?.secret && Date.parse(s.previous.until) > now.getTime()) out.push(s.previous.secret);
  return out;
}

/** `whsec_` + base64 of 32 random bytes (Standard Webhooks). */
export const newSecret = () => `whsec_${randomBytes(32).toString('base64')}`;

const EventTypes = z.array(boundedString(100), { error: 'must be a list of event types' }).min(1, 'must list at least one event type').max(200);
const WebsiteIds = z.array(Uuid).min(1, 'must list at least one website (omit it for every website)').max(1000).nullable();
const Description = text().max(500, 'must be at most 500 characters').nullable();
const Url = boundedString(2000);

export const CreateWebhook = z.strictObject({
  url: Url,
  description: Description.optional(),
  event_types: EventTypes,
  website_ids: WebsiteIds.optional(),
  format: z.enum(['standard', 'slack'], { error: "must be 'standard' or 'slack'" }).default('standard'),
});
export type CreateWebhook = z.infer<typeof CreateWebhook>;

export const UpdateWebhook = z.strictObject({
  url: Url.optional(),
  description: Description.optional(),
  event_types: EventTypes.optional(),
  website_ids: WebsiteIds.optional(),
  status: z.enum(['enabled', 'disabled'], { error: "must be 'enabled' or 'disabled'" }).optional(),
});
export type UpdateWebhook = z.infer<typeof UpdateWebhook>;

const live = (s: WebhookState) => s.status === 'enabled' || s.status === 'disabled';

/** A change of an endpoint that exists (the caller checked it is its organization's, on the read model). */
function owned(ctx: CommandContext, id: string, decide: (s: WebhookState) => Decision<{ id: string }> | DomainError) {
  return handle(ctx, webhookStream(id), Webhook, (s) => (live(s) ? decide(s) : notFound(WEBHOOK_NOT_FOUND)));
}

export async function createWebhook(ctx: CommandContext, input: CreateWebhook & { website_ids: string[] | null }) {
  const id = newId();
  const secret = newSecret();
  const r = await handle(ctx, webhookStream(id), Webhook, () => ({
    events: [
      {
        type: 'WebhookCreated' as const,
        data: {
          webhook_id: id,
          url: input.url,
          description: input.description ?? null,
          event_types: input.event_types,
          website_ids: input.website_ids,
          format: input.format,
          secret,
        },
      },
    ],
    result: { id },
  }));
  if ('kind' in r) return r;
  return { ...r, result: { id, secret } };
}

export function updateWebhook(
  ctx: CommandContext,
  id: string,
  patch: Omit<UpdateWebhook, 'website_ids'> & { website_ids?: string[] | null; reason?: string },
) {
  return owned(ctx, id, (s) => {
    // a status it has already (a second 410 of the same endpoint) is no change
    const data = Object.fromEntries(Object.entries(patch).filter(([k, v]) => v !== undefined && !(k === 'status' && v === s.status)));
    if (!('status' in data)) delete data.reason;
    return Object.keys(data).length === 0
      ? { events: [], result: { id } }
      : { events: [{ type: 'WebhookUpdated', data: { webhook_id: id, ...data } }], result: { id } };
  });
}

export function deleteWebhook(ctx: CommandContext, id: string) {
  return owned(ctx, id, () => ({ events: [{ type: 'WebhookDeleted', data: { webhook_id: id } }], result: { id } }));
}

export async function rotateSecret(ctx: CommandContext, id: string) {
  const secret = newSecret();
  const until = new Date((ctx.now?.() ?? new Date()).getTime() + ROTATION_OVERLAP_MS).toISOString();
  const r = await owned(ctx, id, () => ({
    events: [{ type: 'WebhookSecretRotated', data: { webhook_id: id, secret, previous_valid_until: until } }],
    result: { id },
  }));
  if ('kind' in r) return r;
  return { ...r, result: { id, secret } };
}

export function testWebhook(ctx: CommandContext, id: string, eventId: string) {
  return owned(ctx, id, () => ({ events: [{ id: eventId, type: 'WebhookTested', data: { webhook_id: id } }], result: { id } }));
}
