import { z } from 'zod';

/** Who made a change. */
export const Actor = z.object({
  kind: z.enum(['user', 'api_key', 'system']),
  user_id: z.string().nullable(),
  api_key_id: z.string().nullable(),
});
export type Actor = z.infer<typeof Actor>;
export const SYSTEM_ACTOR: Actor = { kind: 'system', user_id: null, api_key_id: null };

export const EventMetadata = z.object({
  organization_id: z.string(),
  website_id: z.string().nullable().optional(),
  actor: Actor,
  correlation_id: z.string(),
  causation_id: z.string().nullable(),
  time: z.string(),
});
export type EventMetadata = z.infer<typeof EventMetadata>;

const Plan = z.enum(['free', 'pro', 'enterprise']);
export const Feature = z.enum(['pitch', 'knowledge_base', 'ai_search_value', 'seo_recommendations', 'shopping']);
export type Feature = z.infer<typeof Feature>;
export const ALL_FEATURES = Feature.options;

/**
 * The event catalogue: every event type with its data schema. Adding an event is one entry here.
 * Facts only: derivations live in projections.
 */
export const catalogue = {
  OrganizationCreated: z.object({
    organization_id: z.string(),
    name: z.string(),
    plan: Plan,
    features: z.array(Feature),
    pitch_allowance: z.number().int().nonnegative(),
  }),
  UserAdded: z.object({
    user_id: z.string(),
    email: z.string(),
    role: z.enum(['owner', 'admin', 'viewer']),
  }),
  ApiKeyCreated: z.object({
    api_key_id: z.string(),
    name: z.string(),
    key_hash: z.string(),
    key_prefix: z.string(),
    user_id: z.string().nullable(),
    website_ids: z.array(z.string()).nullable(),
    partner: z.boolean(),
  }),
  ApiKeyRevoked: z.object({ api_key_id: z.string() }),
  WebsiteCreated: z.object({
    website_id: z.string(),
    name: z.string(),
    url: z.string(),
    normalized_url: z.string(),
    external_id: z.string().nullable(),
  }),
  WebsiteExternalIdSet: z.object({ website_id: z.string(), external_id: z.string().nullable() }),
  WebsiteStatusChanged: z.object({ website_id: z.string(), status: z.enum(['active', 'paused', 'deleted']) }),

  // catalogue of one website (stream catalog-<website_id>)
  CompetitorAdded: z.object({
    competitor_id: z.string(),
    name: z.string(),
    url: z.string(),
    normalized_url: z.string(),
    identifiers: z.array(z.string()),
  }),
  TopicCreated: z.object({ topic_id: z.string(), name: z.string() }),
  PromptCreated: z.object({
    prompt_id: z.string(),
    text: z.string(),
    topic_id: z.string().nullable(),
    type: z.enum(['branded', 'non_branded']),
    status: z.enum(['active', 'paused']),
    tags: z.array(z.string()),
  }),
} as const;

export type EventType = keyof typeof catalogue;
export type EventData<T extends EventType> = z.infer<(typeof catalogue)[T]>;
export type DomainEvent = { [T in EventType]: { type: T; data: EventData<T> } }[EventType];
export type EventOf<T extends EventType> = Extract<DomainEvent, { type: T }>;

export const isKnownType = (t: string): t is EventType => Object.prototype.hasOwnProperty.call(catalogue, t);

export class MalformedEventError extends Error {
  constructor(
    readonly eventId: string,
    readonly eventType: string,
    readonly reason: string,
  ) {
    super(`event ${eventId} of type ${eventType} is malformed: ${reason}`);
  }
}

/** Validates an event read from a store against the catalogue; never silently drops it. */
export function decodeEvent(id: string, type: string, data: unknown): DomainEvent {
  if (!isKnownType(type)) throw new MalformedEventError(id, type, 'unknown event type');
  const r = catalogue[type].safeParse(data);
  if (!r.success) throw new MalformedEventError(id, type, r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; '));
  return { type, data: r.data } as DomainEvent;
}
