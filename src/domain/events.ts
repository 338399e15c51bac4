import { z } from 'zod';
import { ACCESS_LEVELS, PERMISSION_CATEGORIES } from './principal';
import { ContentColumnType, ContentFieldValue, ContentType } from './content';
import { erases, sealed, subject } from './sealing';
import { eventTypeList, typesOf } from './event-lists';

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
  /** the data's schema version when its type's is past 1 (absent: 1); decodeEvent upcasts older ones */
  schema_version: z.number().int().positive().optional(),
});
export type EventMetadata = z.infer<typeof EventMetadata>;

const Plan = z.enum(['free', 'pro', 'enterprise']);
export const Feature = z.enum(['pitch', 'knowledge_base', 'ai_search_value', 'seo_recommendations', 'shopping']);
export type Feature = z.infer<typeof Feature>;
export const ALL_FEATURES = Feature.options;

/** A role's permission matrix: one access level per category. */
export const PermissionsData = z.object(
  Object.fromEntries(PERMISSION_CATEGORIES.map((c) => [c, z.enum(ACCESS_LEVELS)])) as Record<
    (typeof PERMISSION_CATEGORIES)[number],
    z.ZodEnum<{ [L in (typeof ACCESS_LEVELS)[number]]: L }>
  >,
);
const InviteType = z.enum(['organization', 'website', 'group']);

/** manual: POST response-streaming/start; scheduled: the scheduler; backfill: history written by the system (demo) */
export const RunTrigger = z.enum(['manual', 'scheduled', 'backfill']);
export type RunTrigger = z.infer<typeof RunTrigger>;

/** A product card as an engine showed it (or an import carried it). */
export const ProductCardData = z.object({
  name: z.string(),
  brand: z.string().nullable().optional(),
  merchant: z.string().nullable().optional(),
  price: z.number().nullable().optional(),
  currency: z.string().nullable().optional(),
  position: z.number().int(),
  url: z.string().nullable().optional(),
});

/** Erasable fields: `sealed(schema)`, with their owner's id as `subject('<prefix>')` and the delete's id as `erases('<prefix>')`. */
export { erases, sealed, subject } from './sealing';

/** A version the content writer wrote: the article (ContentArticleGenerated) or optimize's rewrite of the live page (ContentReviewed). */
const WriterVersion = z.object({
  content_id: subject('content'),
  body: sealed(z.string()),
  meta_description: sealed(z.string()),
  model: z.string(),
  version_id: z.string(),
  version_number: z.number().int().positive(),
  /** the knowledge-base facts the writer was given for this version */
  fact_ids: z.array(z.string()).optional(),
});

/** The kinds of alert rule (CONTRACT "Webhooks and alerts"). */
export const ALERT_KINDS = ['metric_change', 'competitor_overtakes', 'access_changed', 'run_failed'] as const;

/** An organization's own stream `org-<organization_id>`: its keys and websites, and the passwords its users set. */
export const organizationEvents = {
  OrganizationCreated: z.object({
    organization_id: z.string(),
    name: z.string(),
    plan: Plan,
    features: z.array(Feature),
    pitch_allowance: z.number().int().nonnegative(),
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
  /** the password a user chose (argon2id hash) when their acceptance of an invite created their account */
  UserPasswordSet: z.object({ user_id: z.string(), password_hash: z.string() }),
} as const;

/** An organization's team, on its stream `org-<organization_id>`: roles, users, memberships, groups, invites. */
export const teamEvents = {
  UserAdded: z.object({
    user_id: z.string(),
    email: z.string(),
    role: z.enum(['owner', 'admin', 'viewer']),
  }),
  RoleCreated: z.object({ role_id: z.string(), name: z.string(), slug: z.string(), permissions: PermissionsData }),
  RoleDeleted: z.object({ role_id: z.string(), name: z.string() }),
  /** a user account created by an invite (direct: email unverified; accepted: verified by the link) */
  UserCreated: z.object({
    user_id: z.string(),
    email: z.string(),
    first_name: z.string().nullable(),
    last_name: z.string().nullable(),
    email_verified: z.boolean(),
  }),
  OrganizationMemberAdded: z.object({ user_id: z.string(), role_id: z.string() }),
  OrganizationMemberRoleChanged: z.object({ user_id: z.string(), role_id: z.string() }),
  /** the user leaves the organization: with their organization role go their groups and website memberships */
  OrganizationMemberRemoved: z.object({ user_id: z.string() }),
  WebsiteMemberAdded: z.object({ user_id: z.string(), website_id: z.string(), role_id: z.string() }),
  WebsiteMemberRoleChanged: z.object({ user_id: z.string(), website_id: z.string(), role_id: z.string() }),
  WebsiteMemberRemoved: z.object({ user_id: z.string(), website_id: z.string() }),
  GroupCreated: z.object({
    group_id: z.string(),
    name: z.string(),
    website_ids: z.array(z.string()),
    external_id: z.string().nullable(),
    billing_enabled: z.boolean(),
  }),
  /** only the fields that changed; websites added and removed */
  GroupUpdated: z.object({
    group_id: z.string(),
    name: z.string().optional(),
    external_id: z.string().nullable().optional(),
    billing_enabled: z.boolean().optional(),
    added_website_ids: z.array(z.string()),
    removed_website_ids: z.array(z.string()),
  }),
  GroupMemberAdded: z.object({ group_id: z.string(), user_id: z.string(), role_id: z.string() }),
  /**
   * One removal, atomically: the direct group membership (when there was one) and the user's explicit memberships of
   * the websites then in the group (`website_ids`).
   */
  GroupMemberRemoved: z.object({
    group_id: z.string(),
    user_id: z.string(),
    group_membership_removed: z.boolean(),
    website_ids: z.array(z.string()),
  }),
  /**
   * A pending invite (invite_method email) to one target; the invites of one bulk call share their token (one email).
   * The invitee's email and names are erasable: sealed under `invite-<id>`.
   */
  InviteCreated: z.object({
    invite_id: subject('invite'),
    batch_id: z.string(),
    type: InviteType,
    /** the website or group; null for an organization invite */
    target_id: z.string().nullable(),
    role_id: z.string(),
    email: sealed(z.string()),
    first_name: sealed(z.string()).optional(),
    last_name: sealed(z.string()).optional(),
    token_hash: z.string(),
    /** the acceptance link's token, for the invitation email (the invitation worker reads it; lookups use the hash) */
    token: sealed(z.string()),
    expires_at: z.string(),
  }),
  InviteAccepted: z.object({ invite_id: z.string(), user_id: z.string() }),
} as const;

/** The catalogue of one website (stream `catalog-<website_id>`). */
export const catalogEvents = {
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
  CompetitorRenamed: z.object({ competitor_id: z.string(), name: z.string() }),
  CompetitorIdentifiersChanged: z.object({ competitor_id: z.string(), identifiers: z.array(z.string()) }),
  CompetitorRemoved: z.object({ competitor_id: z.string() }),
  /** soft-deletes the topic; soft_deleted_prompt_ids were soft-deleted with it (delete_prompts=true) */
  TopicDeleted: z.object({ topic_id: z.string(), name: z.string(), soft_deleted_prompt_ids: z.array(z.string()) }),
  /** a soft-deleted topic re-created by name: it and the prompts deleted with it come back */
  TopicRestored: z.object({ topic_id: z.string(), name: z.string(), restored_prompt_ids: z.array(z.string()) }),
  /** only the fields that changed */
  PromptUpdated: z.object({
    prompt_id: z.string(),
    text: z.string().optional(),
    topic_id: z.string().nullable().optional(),
    type: z.enum(['branded', 'non_branded']).optional(),
    status: z.enum(['active', 'paused']).optional(),
    tags: z.array(z.string()).optional(),
  }),
  /** soft_deleted: the prompt had answers and keeps them; otherwise it is gone for good */
  PromptDeleted: z.object({ prompt_id: z.string(), soft_deleted: z.boolean() }),
  /** first answer marker: appended before a prompt's first answer is recorded, so a delete decides on it */
  PromptAnswered: z.object({ prompt_id: z.string() }),
  PersonaCreated: z.object({ persona_id: z.string(), name: z.string(), description: z.string().nullable() }),
  LocationCreated: z.object({
    location_id: z.string(),
    location: z.string(),
    country: z.string(),
    region: z.string().nullable(),
    city: z.string().nullable(),
  }),
  PromptScheduleCreated: z.object({
    schedule_id: z.string(),
    name: z.string(),
    models: z.array(z.string()),
    starts_on: z.string().nullable(),
    ends_on: z.string().nullable(),
    frequency: z.enum(['daily', 'weekly']),
    is_active: z.boolean(),
    /** how many times a run asks each (prompt, model, location, persona); absent: 1 */
    samples_per_prompt: z.number().int().min(1).max(10).optional(),
  }),
  /** only the fields that changed */
  PromptScheduleUpdated: z.object({
    schedule_id: z.string(),
    name: z.string().optional(),
    models: z.array(z.string()).optional(),
    starts_on: z.string().nullable().optional(),
    ends_on: z.string().nullable().optional(),
    frequency: z.enum(['daily', 'weekly']).optional(),
    is_active: z.boolean().optional(),
    samples_per_prompt: z.number().int().min(1).max(10).optional(),
  }),
  PromptScheduleArchived: z.object({ schedule_id: z.string() }),
  SavedViewCreated: z.object({ view_id: z.string(), name: z.string(), filters: z.record(z.string(), z.unknown()) }),
  /** only the fields that changed; filters replace the stored ones as a whole */
  SavedViewUpdated: z.object({ view_id: z.string(), name: z.string().optional(), filters: z.record(z.string(), z.unknown()).optional() }),
  AttributeCreated: z.object({ attribute_id: z.string(), name: z.string(), description: z.string().nullable() }),
  /** a topic's own economics (catalogue stream; docs/VALUATION.md): null removes them (the category's defaults apply) */
  TopicEconomicsSet: z.object({
    topic_id: z.string(),
    economics: z.object({ monthly_searches: z.number().int().nonnegative(), cpc_usd: z.number().nonnegative() }).nullable(),
  }),
} as const;

/**
 * Runs and answers: a run (`run-<run_id>`, with its units), its slot, each answer (`response-<response_id>`) and
 * imports.
 */
export const runEvents = {
  /** a run of a website's active prompts x a schedule's models x its locations (stream run-<run_id>, with its units) */
  RunStarted: z.object({
    run_id: z.string(),
    website_id: z.string(),
    /** null: the default schedule */
    schedule_id: z.string().nullable(),
    trigger: RunTrigger,
    /** the UTC day the run measures */
    day: z.string(),
    models: z.array(z.string()),
    total: z.number().int().nonnegative(),
    /** units per (prompt, model, location, persona); absent: 1 */
    samples_per_prompt: z.number().int().min(1).optional(),
  }),
  /**
   * a manual or scheduled run takes its schedule's slot (stream runslot-<website_id>-<schedule_id|default>) before it
   * starts: one run in progress per schedule; the slot is the run's until its end is recorded or expires_at passes
   */
  RunSlotTaken: z.object({
    run_id: z.string(),
    website_id: z.string(),
    schedule_id: z.string().nullable(),
    expires_at: z.string(),
  }),
  /**
   * the end of a run that held its schedule's slot, which frees it: finished (every unit has an outcome) or expired
   * (its slot's time ran out first; the units still pending then count as failed)
   */
  RunEnded: z.object({
    run_id: z.string(),
    website_id: z.string(),
    schedule_id: z.string().nullable(),
    reason: z.enum(['finished', 'expired']),
  }),
  /** one unit of work of a run: one prompt asked to one model at one location (a message the response workers take) */
  ResponseRequested: z.object({
    request_id: z.string(),
    run_id: z.string(),
    website_id: z.string(),
    prompt_id: z.string(),
    model: z.string(),
    location_id: z.string().nullable(),
    persona_id: z.string().nullable(),
    schedule_id: z.string().nullable(),
    day: z.string(),
    /** the answer's time for a backfilled day; null = when it is answered */
    run_at: z.string().nullable(),
    /** which of the run's samples of this (prompt, model, location, persona); absent: 0 */
    sample_index: z.number().int().nonnegative().optional(),
  }),
  /** an answer: the engine's text, citations and product cards, as they came (derivations live in projections) */
  ResponseRecorded: z.object({
    response_id: z.string(),
    website_id: z.string(),
    prompt_id: z.string(),
    model: z.string(),
    location_id: z.string().nullable(),
    persona_id: z.string().nullable(),
    schedule_id: z.string().nullable(),
    run_id: z.string().nullable(),
    request_id: z.string().nullable(),
    external_id: z.string().nullable(),
    run_at: z.string(),
    text: z.string(),
    citations: z.array(z.string()),
    products: z.array(ProductCardData),
    source: z.enum(['engine', 'import']),
    /** the import carried this answer's observations: the extractor leaves it alone */
    observations_supplied: z.boolean(),
    provider_model: z.string().nullable(),
    latency_ms: z.number().nullable(),
    /** pages the engine read or was given, cited or not (answer evidence); absent = not reported */
    retrieved: z.array(z.string()).optional(),
    /** the queries the engine searched (its fan-out); absent = not reported */
    search_queries: z.array(z.string()).optional(),
    /** the unit's sample (ResponseRequested.sample_index); absent: 0 */
    sample_index: z.number().int().nonnegative().optional(),
  }),
  /** a unit of work that produced no answer after its retries */
  ResponseFailed: z.object({
    request_id: z.string(),
    run_id: z.string(),
    website_id: z.string(),
    prompt_id: z.string(),
    model: z.string(),
    location_id: z.string().nullable(),
    error_kind: z.string(),
    message: z.string(),
    attempts: z.number().int().nullable(),
  }),
  /** one import call: what it brought in and what it skipped as already imported */
  ResponsesImported: z.object({
    import_id: z.string(),
    website_id: z.string(),
    response_ids: z.array(z.string()),
    imported: z.number().int().nonnegative(),
    skipped: z.number().int().nonnegative(),
  }),
  /** what an answer says about entities for the website's attributes (imported, or found by an extractor) */
  ObservationsRecorded: z.object({
    response_id: z.string(),
    website_id: z.string(),
    /** the answer's prompt, location and schedule: what the observations filters select on */
    prompt_id: z.string(),
    location_id: z.string().nullable(),
    schedule_id: z.string().nullable(),
    model: z.string(),
    /** the answer's time, to the second */
    observed_at: z.string(),
    extractor: z.enum(['import', 'rules', 'llm']),
    observations: z.array(
      z.object({
        observation_id: z.string(),
        entity_id: z.string(),
        attribute_id: z.string(),
        positive: z.boolean(),
        score: z.number().nullable(),
        text_span: z.string(),
      }),
    ),
  }),
} as const;

/** Credits: granted to an organization, spent by an answer or a job's step. */
export const creditEvents = {
  /** credits an engine call used (one per provider request that produced an answer) */
  CreditsUsed: z.object({
    website_id: z.string(),
    model: z.string(),
    credits: z.number().nonnegative(),
    input_tokens: z.number().int().nullable(),
    output_tokens: z.number().int().nullable(),
    run_id: z.string().nullable(),
    response_id: z.string().nullable(),
    purpose: z.enum(['response', 'observation_judge']),
  }),
  /**
   * credits charged by any other paid operation (a generation, a revision, a pitch, a discovery run, an SEO job, a pillar
   * research): appended in the job's own stream with an id derived from the job and step (`creditsCharged` in
   * src/domain/credits.ts), so a redelivered step charges once. Engine answers keep `CreditsUsed`.
   */
  CreditsCharged: z.object({
    kind: z.enum(['content_generation', 'content_revision', 'pitch', 'prompt_discovery', 'seo_recommendation', 'pillar_research', 'fact_judge']),
    credits: z.number().nonnegative(),
    website_id: z.string().nullable(),
    ref_id: z.string(),
    model: z.string().nullable(),
  }),
  /**
   * One-off credits an operator granted to an organization (`npm run cli -- credits:grant`): they are drawn once a
   * month has used the plan's monthly allowance (src/domain/credits.ts `oneOffBalance`).
   */
  CreditsGranted: z.object({
    grant_id: z.string(),
    credits: z.number().positive(),
    reason: z.string().nullable(),
  }),
} as const;

/**
 * Jobs: a job is the stream `<kind>-<job_id>` (src/domain/jobs.ts), opened by its kind's request event; the job
 * workers (src/workers/jobs.ts) append these around the kind's own step events.
 */
export const jobEvents = {
  /** the job has its running slot and a worker began it */
  JobStarted: z.object({ job_id: z.string(), kind: z.string() }),
  JobSucceeded: z.object({ job_id: z.string(), kind: z.string() }),
  /** error_kind: the kind's own reasons, `internal` (a step kept throwing), `abandoned` (its workers kept dying) */
  JobFailed: z.object({ job_id: z.string(), kind: z.string(), error_kind: z.string(), message: z.string() }),
  /** an idempotent request admitted: the first event of the stream it created (commands/idempotency) */
  RequestAdmitted: z.object({ scope: z.string(), key: z.string(), fingerprint: z.string(), result_id: z.string() }),
} as const;

/**
 * Allowances (stream `allowance-<organization>-<allowance>-<period>`): reserved at admission, settled when the job
 * ends.
 */
export const allowanceEvents = {
  AllowanceReserved: z.object({
    allowance: z.string(),
    /** the allowance's period, e.g. the UTC month `2026-11` */
    period: z.string(),
    /** the job's id */
    reservation_id: z.string(),
    /** the job's stream */
    subject: z.string(),
    amount: z.number().int().positive(),
    /** the allowance of the period when this was decided */
    limit: z.number().int().nonnegative(),
    /** what a failed job does with it: pitches keep it consumed */
    on_failure: z.enum(['consumed', 'released']),
  }),
  AllowanceSettled: z.object({
    allowance: z.string(),
    period: z.string(),
    reservation_id: z.string(),
    outcome: z.enum(['consumed', 'released']),
  }),
} as const;

/** The probe: the reference job (src/workers/probe.ts), which checks the job machinery end to end. */
export const probeJobEvents = {
  ProbeRequested: z.object({
    job_id: z.string(),
    website_id: z.string().nullable(),
    steps: z.number().int().positive(),
    step_ms: z.number().int().nonnegative(),
    /** the step that fails (the failure path, end to end); null: none */
    fail_at_step: z.number().int().positive().nullable(),
    /** the allowance reserved for it at admission, settled when it ends */
    allowance: z.object({ name: z.string(), period: z.string() }).nullable(),
  }),
  ProbeStepCompleted: z.object({ job_id: z.string(), step: z.number().int().positive(), worker: z.string() }),
} as const;

/** The email outbox (stream `email-<email_id>`): the only outbound side effect. */
export const emailEvents = {
  /**
   * An email to send. `to` (the recipient) and `params` (what the template shows, e.g. an acceptance link with its
   * token) are the fields erasure seals; the worker renders the body from the template when it sends.
   */
  EmailRequested: z.object({
    email_id: subject('email'),
    template: z.string(),
    to: sealed(z.string()),
    params: sealed(z.record(z.string(), z.unknown())),
    /** the message's Date header: the same on every attempt */
    requested_at: z.string(),
  }),
  /** a worker's claim on one attempt: no other worker sends the email until lease_until */
  EmailSending: z.object({ email_id: z.string(), attempt: z.number().int().positive(), message_id: z.string(), lease_until: z.string() }),
  /**
   * The transport took the message. possible_duplicate: an earlier attempt may have been delivered too (it ended
   * without the server's answer: a crash or a cut connection after the message was sent); it had the same Message-ID.
   */
  EmailSent: z.object({
    email_id: z.string(),
    attempt: z.number().int().positive(),
    message_id: z.string(),
    transport: z.enum(['smtp', 'file']),
    response: z.string().nullable(),
    possible_duplicate: z.boolean(),
  }),
  /** an attempt failed for a reason that may pass (4xx, network): tried again after retry_at */
  EmailDeferred: z.object({
    email_id: z.string(),
    attempt: z.number().int().positive(),
    reason: z.string(),
    retry_at: z.string(),
    /** the attempt ended without the server's answer to the message: it may have been delivered */
    ambiguous: z.boolean(),
  }),
  /** given up: refused for good (5xx), out of attempts, or nothing to send (erased, unknown template) */
  EmailFailed: z.object({ email_id: z.string(), attempts: z.number().int().nonnegative(), reason: z.string(), permanent: z.boolean() }),
} as const;

/** AI search value: a website's value job. */
export const aiValueEvents = {
  /** a valuation job of one website (stream aivalue-<job_id>); reason: what asked for it */
  AiValueRequested: z.object({
    job_id: z.string(),
    website_id: z.string(),
    reason: z.enum(['answers', 'economics', 'daily', 'demo', 'manual']),
    requested_at: z.string(),
  }),
  /**
   * One computation over the trailing 28 days ending at computed_at. valuation: the figure (the response's body
   * without the fields decided at read time), null while gathering (under 50 answers).
   */
  AiValueComputed: z.object({
    job_id: z.string(),
    website_id: z.string(),
    computed_at: z.string(),
    facts_version: z.string(),
    measured_responses: z.number().int().nonnegative(),
    assumptions_version: z.string(),
    valuation: z.record(z.string(), z.unknown()).nullable(),
  }),
} as const;

/**
 * A website's knowledge base (stream `knowledge-<website_id>`): pillars and brand facts, decided on one stream. A
 * fact's text, quote and source URL are erasable (sealed under fact-<id>).
 */
export const knowledgeEvents = {
  /** a pillar (subject area); its name is unique per website case-insensitively; a new pillar is `researching` */
  PillarCreated: z.object({ pillar_id: z.string(), website_id: z.string(), name: z.string(), description: z.string() }),
  /** only the fields that changed */
  PillarUpdated: z.object({
    pillar_id: z.string(),
    name: z.string().optional(),
    description: z.string().optional(),
    status: z.enum(['researching', 'draft', 'published', 'archived']).optional(),
  }),
  /** the research job finished: the pillar moves to `draft` (unless it was moved on meanwhile) */
  PillarResearched: z.object({ pillar_id: z.string(), job_id: z.string(), facts_found: z.number().int().nonnegative() }),
  /**
   * a fact: entered by hand, found by research (site pages, answers, automated analysis) or written by a text change
   * (`replaces`: the fact it replaced, archived in the same append). `duplicate_of`: a hidden duplicate of that fact.
   */
  FactRecorded: z.object({
    fact_id: subject('fact'),
    website_id: z.string(),
    pillar_id: z.string().nullable(),
    text: sealed(z.string()),
    source_url: sealed(z.string()).optional(),
    source_quote: sealed(z.string()).optional(),
    confidence: z.enum(['high', 'medium', 'low']),
    review_status: z.enum(['pending', 'approved', 'rejected']),
    source_type: z.enum(['manual', 'site', 'web_research', 'upload', 'ai_response', 'oracle']),
    response_id: z.string().nullable(),
    duplicate_of: z.string().nullable(),
    replaces: z.string().nullable(),
    job_id: z.string().nullable(),
  }),
  FactReviewed: z.object({ fact_id: z.string(), review_status: z.enum(['approved', 'rejected']) }),
  /** source_url or confidence changed in place (source_url null: cleared) */
  FactUpdated: z.object({
    fact_id: subject('fact'),
    source_url: sealed(z.string()).optional(),
    source_url_cleared: z.boolean().optional(),
    confidence: z.enum(['high', 'medium', 'low']).optional(),
  }),
  /** the fact's text was changed: it is archived (404 from now on) and `replaced_by` holds the new text */
  FactArchived: z.object({ fact_id: z.string(), replaced_by: z.string().nullable() }),
  /** physical delete: the facts and the archived facts they replaced are erased (their keys dropped) */
  FactsDeleted: z.object({ fact_ids: z.array(erases('fact')), replaced_ids: z.array(erases('fact')) }),
} as const;

/** A pillar's research: the job `pillar_research-<pillar_id>` (src/workers/pillar-research.ts). */
export const pillarResearchEvents = {
  /** the research of a pillar (job stream pillar_research-<job_id>, job id = pillar id) */
  PillarResearchRequested: z.object({ job_id: z.string(), website_id: z.string(), pillar_id: z.string() }),
  PillarResearchStepDone: z.object({ job_id: z.string(), step: z.string(), facts: z.number().int().nonnegative() }),
} as const;

/** SEO recommendations: a job `seo-<job_id>`. */
export const seoEvents = {
  /** an SEO recommendations job (stream seo-<job_id>): the page as submitted (a draft) or as fetched (a public HTTPS URL) */
  SeoRecommendationsRequested: z.object({
    job_id: z.string(),
    website_id: z.string(),
    request_id: z.string(),
    source: z.enum(['url', 'draft']),
    url: z.string().nullable(),
    page: z.object({
      title: z.string().nullable(),
      meta_description: z.string().nullable(),
      headings: z.array(z.object({ level: z.number().int().min(1).max(6), text: z.string() })),
      text: z.string(),
      /** what the page marks up: schema.org types (JSON-LD or microdata) */
      schema_types: z.array(z.string()),
    }),
  }),
  SeoRecommendationsProduced: z.object({
    job_id: z.string(),
    recommendations: z.array(
      z.object({
        id: z.string(),
        /** prompt_coverage, competitor_gap, facts, title, meta_description, headings, faq, schema, brand */
        category: z.string(),
        severity: z.enum(['high', 'medium', 'low']),
        title: z.string(),
        detail: z.string(),
        /** the part of the page it concerns; null when it concerns what the page lacks */
        excerpt: z.string().nullable(),
        /** a `facts` recommendation: the approved fact the page lacks (its text is read from the fact when polled, never copied here) */
        fact_id: z.string().optional(),
      }),
    ),
  }),
} as const;

/** Prompt discovery: a run `discovery-<run_id>`. */
export const discoveryEvents = {
  /** a prompt discovery run (stream discovery-<run_id>) */
  PromptDiscoveryRequested: z.object({
    run_id: z.string(),
    website_id: z.string(),
    name: z.string(),
    sources: z.array(z.string()),
    custom_instructions: z.string().nullable(),
    locale: z.string(),
    country: z.string(),
    prompt_count_min: z.number().int(),
    prompt_count_max: z.number().int(),
  }),
  PromptDiscoveryCompleted: z.object({
    run_id: z.string(),
    prompts: z.array(z.object({ text: z.string(), topic: z.string().nullable(), source: z.string() })),
    unavailable_sources: z.array(z.object({ source: z.string(), reason: z.string() })),
  }),
  /** suggestions of a run made prompts (through the catalogue's create-prompt command) */
  PromptDiscoveryAccepted: z.object({ run_id: z.string(), indices: z.array(z.number().int()), prompt_ids: z.array(z.string()) }),
} as const;

/**
 * A pitch report is the job stream `pitch-<id>` (opened by RequestAdmitted with its Idempotency-Key); the pitch
 * worker (src/workers/pitch.ts) appends the research, the plan, the answers of each model and the compiled report.
 */
export const pitchEvents = {
  /** a pitch report admitted: the prospect's site, where it is measured, the models asked, its public report token */
  PitchRequested: z.object({
    job_id: z.string(),
    website_url: z.string(),
    /** https://<host>: the prospect's home page */
    company_url: z.string(),
    /** the normalized host (without www.) */
    domain: z.string(),
    country: z.string(),
    language: z.string(),
    models: z.array(z.string()),
    /** the secret in report_url (`/r/<token>`): anyone with it can view the report */
    report_token: z.string(),
    allowance: z.object({ name: z.string(), period: z.string() }).nullable(),
  }),
  /** the home page read: the company's name and description (from the bare domain when the page could not be read) */
  PitchSiteResearched: z.object({
    job_id: z.string(),
    company_name: z.string(),
    company_description: z.string(),
    final_url: z.string(),
    /** why the home page could not be read, shown on the report; absent when it was read */
    research_note: z.string().optional(),
  }),
  /** the competitors found and the discovery prompts written by the answer engine */
  PitchPlanWritten: z.object({
    job_id: z.string(),
    competitors: z.array(z.object({ id: z.string(), name: z.string(), url: z.string() })),
    prompts: z.array(z.object({ id: z.string(), prompt: z.string(), type: z.string() })),
    attributes: z.array(z.object({ id: z.string(), name: z.string() })),
  }),
  /** one model's answers to every prompt (facts: text and cited URLs) */
  PitchAnswersRecorded: z.object({
    job_id: z.string(),
    model: z.string(),
    answers: z.array(z.object({ prompt_id: z.string(), text: z.string(), citations: z.array(z.string()) })),
  }),
  /** the report compiled from the answers by the shared analysis (mentions, citations, observations) */
  PitchReportCompiled: z.object({
    job_id: z.string(),
    competitors: z.array(z.object({ id: z.string(), name: z.string(), url: z.string(), mentions: z.number().int(), sentiment: z.number().int() })),
    attributes: z.array(
      z.object({ id: z.string(), attribute_name: z.string(), attribute_type: z.string(), applies_to: z.string(), count: z.number().int() }),
    ),
    sources: z.array(z.object({ domain: z.string(), mentions: z.number().int() })),
    metrics: z.object({
      total_responses: z.number().int(),
      brand_mentions: z.number().int(),
      sentiment_score: z.number().int(),
      response_rate: z.number().int(),
    }),
    /** per model asked: answers and answers mentioning the prospect (the report page's model table) */
    models: z.array(z.object({ model: z.string(), answers: z.number().int(), brand_mentions: z.number().int() })),
    /** the prospect's answers by sentiment: positive, neutral (mentioned without a judgement), negative */
    sentiment: z.object({ positive: z.number().int(), neutral: z.number().int(), negative: z.number().int() }),
  }),
} as const;

/**
 * A website's URL registry `contenturls-<website_id>`: it decides that a normalized URL names one content item.
 * Erasable parts of the content hub (title, URLs, custom field values, brief, body, version bodies) are sealed per
 * subject `content-<content_id>`, in the registry's claims too.
 */
export const contentUrlsEvents = {
  /** URLs taken by items of the website (tracking, publishing): each claim moves the item's previous URL, if any */
  ContentUrlsClaimed: z.object({
    website_id: z.string(),
    claims: z.array(
      z.object({ content_id: subject('content'), normalized_url: sealed(z.string()), type: ContentType, sheet_id: z.string().nullable() }),
    ),
  }),
  /** the item's URL free again (its item deleted); older events name the URL, in clear */
  ContentUrlReleased: z.object({ website_id: z.string(), content_id: z.string(), normalized_url: z.string().optional() }),
} as const;

/** A content item's own stream `content-<content_id>`. */
export const contentItemEvents = {
  /** a page tracked by URL (types imported and external): no page text, no generation */
  ContentTracked: z.object({
    content_id: subject('content'),
    website_id: z.string(),
    url: sealed(z.string()),
    normalized_url: sealed(z.string()),
    type: ContentType,
    title: sealed(z.string()),
    sheet_id: z.string().nullable(),
    /** custom column values by column id */
    fields: sealed(z.record(z.string(), ContentFieldValue)).optional(),
  }),
  ContentTitleChanged: z.object({ content_id: subject('content'), website_id: z.string(), title: sealed(z.string()) }),
  /** the item is gone for good: its sealed parts are erased with the subject's key (older events name its URL, in clear) */
  ContentDeleted: z.object({ content_id: erases('content'), website_id: z.string(), normalized_url: z.string().nullable().optional() }),
} as const;

/** A website's content sheets and their columns (stream `contentsheets-<website_id>`). */
export const contentSheetsEvents = {
  ContentSheetCreated: z.object({ website_id: z.string(), sheet_id: z.string(), name: z.string(), type: z.enum(['sheet', 'view']) }),
  ContentColumnCreated: z.object({
    website_id: z.string(),
    sheet_id: z.string(),
    column_id: z.string(),
    name: z.string(),
    type: ContentColumnType,
    options: z.array(z.string()),
  }),
  /** multi-select options added to a column (on the fly by tracking) */
  ContentColumnOptionsAdded: z.object({ website_id: z.string(), sheet_id: z.string(), column_id: z.string(), options: z.array(z.string()) }),
} as const;

/** A content item's pipeline, on its stream `content-<content_id>`: the generation job, publish, edit, revise. */
export const contentPipelineEvents = {
  /**
   * A generation requested: opens the item's stream and is the content job's request (JOB_KINDS.content). What the
   * writer is told is fixed here, at admission (the topic's and prompts' texts, the brand).
   */
  ContentGenerationRequested: z.object({
    content_id: subject('content'),
    website_id: z.string(),
    type: z.enum(['generated', 'optimize', 'snipe', 'slice']),
    title: sealed(z.string()),
    /** optimize: the live page (with its protocol, as fetched); stored on the item without it */
    url: sealed(z.string()),
    /** the live page's normalized URL: the item's citation join key once it is published (not before) */
    normalized_url: sealed(z.string()),
    topic_id: z.string().nullable(),
    topic_name: z.string().nullable(),
    prompt_ids: z.array(z.string()),
    prompts: z.array(z.string()),
    sheet_id: z.string().nullable(),
    auto_approve_brief: z.boolean(),
    mode: z.literal('draft'),
    /** the catalogue model that writes (CONTENT_MODEL) */
    model: z.string(),
    brand: z.object({ name: z.string(), domain: z.string() }).nullable(),
    /** knowledge-base grounding as asked (src/app/content-grounding.ts) */
    fact_review: z
      .object({ topic_ids: z.array(z.string()), kept_claim_ids: z.array(z.string()), excluded_claim_ids: z.array(z.string()) })
      .nullable(),
    /** the approved facts the writer is given, resolved from fact_review at admission (none without it) */
    fact_ids: z.array(z.string()).optional(),
  }),
  /** the writer's brief: stage generated_brief */
  ContentBriefGenerated: z.object({
    content_id: subject('content'),
    brief: sealed(z.string()),
    model: z.string(),
    version_id: z.string(),
    version_number: z.number().int().positive(),
    /** the knowledge-base facts the writer was given for this version */
    fact_ids: z.array(z.string()).optional(),
  }),
  /** the brief approved (by the approve call, or at once with auto_approve_brief): stage pending_article */
  ContentBriefApproved: z.object({ content_id: z.string(), auto: z.boolean() }),
  /** the article written: stage generated */
  ContentArticleGenerated: WriterVersion,
  /** optimize: the live page as fetched (its text), the draft the review starts from */
  ContentPageFetched: z.object({
    content_id: subject('content'),
    url: sealed(z.string()),
    http_status: z.number().int(),
    body: sealed(z.string()),
    version_id: z.string(),
    version_number: z.number().int().positive(),
  }),
  /** optimize: the review's rewrite of the live page (stage stays pending, the pipeline succeeds) */
  ContentReviewed: WriterVersion,
  /** published at url (stored without the protocol), the item's citation join key from then on */
  ContentPublished: z.object({
    content_id: subject('content'),
    url: sealed(z.string()),
    normalized_url: sealed(z.string()),
    /** the first publish time: kept when only the URL changes */
    published_at: z.string(),
    already_published: z.boolean(),
  }),
  /** exact replacements applied in order: one new version */
  ContentEdited: z.object({
    content_id: subject('content'),
    body: sealed(z.string()),
    edit_count: z.number().int().positive(),
    version_id: z.string(),
    version_number: z.number().int().positive(),
  }),
  /** a rewrite by the writer following an instruction: one new version */
  ContentRevised: z.object({
    content_id: subject('content'),
    body: sealed(z.string()),
    instruction: sealed(z.string()),
    model: z.string(),
    /** the writer was asked again for the whole document (its first answer was a fragment) */
    retried: z.boolean(),
    version_id: z.string(),
    version_number: z.number().int().positive(),
  }),
} as const;

/**
 * AI crawler analytics (docs/api/crawlers.md, stream `crawlerlogs-<website_id>`): one event per ingested batch of
 * log lines, aggregated, never one per line.
 */
export const crawlerEvents = {
  /** the new (not duplicate) AI-crawler hits of a batch of log lines, per (day, bot, page, status, verification) */
  CrawlerHitsImported: z.object({
    website_id: z.string(),
    import_id: z.string(),
    rows: z.array(
      z.object({
        day: z.string(),
        bot: z.string(),
        url: z.string(),
        status: z.number().int(),
        verification: z.enum(['verified', 'unverified', 'unverifiable']),
        hits: z.number().int().positive(),
        last_seen: z.string(),
      }),
    ),
  }),
} as const;

/** Competitor suggestions (stream `competitor-suggestions-<website_id>`). */
export const competitorSuggestionEvents = {
  /** a name answers put forward is never suggested again (key: the name compared case-insensitively) */
  CompetitorSuggestionDismissed: z.object({ website_id: z.string(), name: z.string(), key: z.string() }),
  /** a name answers put forward reached the default min_answers for the first time */
  CompetitorSuggested: z.object({ website_id: z.string(), name: z.string(), key: z.string(), answers: z.number().int().positive() }),
} as const;

/**
 * Fact conflicts, one stream each (`fact-conflict-<conflict_id>`); a conflict's texts are sealed under its fact's
 * subject, so erasing the fact erases them.
 */
export const factConflictEvents = {
  /** the judge found a sentence about the brand contradicting an approved fact */
  FactConflictDetected: z.object({
    conflict_id: z.string(),
    website_id: z.string(),
    response_id: z.string(),
    fact_id: subject('fact'),
    fact_text: sealed(z.string()),
    answer_excerpt: sealed(z.string()),
    model: z.string(),
    judge: z.enum(['simulated', 'engine']),
  }),
  FactConflictResolved: z.object({ conflict_id: z.string() }),
  FactConflictDismissed: z.object({ conflict_id: z.string() }),
} as const;

/**
 * A webhook endpoint (stream `webhook-<id>`); its signing secrets are sealed under webhook-<id>: encrypted at rest,
 * erased with the endpoint. Deliveries and their attempts are the delivery worker's table (src/workers/webhooks.ts).
 */
export const webhookEvents = {
  WebhookCreated: z.object({
    webhook_id: subject('webhook'),
    url: z.string(),
    description: z.string().nullable(),
    event_types: z.array(z.string()),
    /** null: every website of the organization, later ones included */
    website_ids: z.array(z.string()).nullable(),
    format: z.enum(['standard', 'slack']),
    secret: sealed(z.string()),
  }),
  /** only the fields that changed; `reason` says why the worker disabled it (a 410) */
  WebhookUpdated: z.object({
    webhook_id: z.string(),
    url: z.string().optional(),
    description: z.string().nullable().optional(),
    event_types: z.array(z.string()).optional(),
    website_ids: z.array(z.string()).nullable().optional(),
    status: z.enum(['enabled', 'disabled']).optional(),
    reason: z.string().optional(),
  }),
  /** a new secret; the one before it still signs until previous_valid_until */
  WebhookSecretRotated: z.object({ webhook_id: subject('webhook'), secret: sealed(z.string()), previous_valid_until: z.string() }),
  WebhookDeleted: z.object({ webhook_id: erases('webhook') }),
  /** a `webhook.test` event for this endpoint alone */
  WebhookTested: z.object({ webhook_id: z.string() }),
} as const;

/**
 * An alert rule and the alerts it fires, on one stream (`alert-rule-<id>`): a firing is decided there with the
 * stream's expected version, so instances evaluating at once fire once per (window end day, direction); the rule's
 * email addresses are sealed under alert_rule-<id>: deleting the rule erases them.
 */
export const alertRuleEvents = {
  AlertRuleCreated: z.object({
    rule_id: subject('alert_rule'),
    website_id: z.string(),
    name: z.string(),
    kind: z.enum(ALERT_KINDS),
    params: z.record(z.string(), z.unknown()),
    webhook_ids: z.array(z.string()),
    emails: sealed(z.array(z.string())),
  }),
  /** only the fields that changed */
  AlertRuleUpdated: z.object({
    rule_id: subject('alert_rule'),
    name: z.string().optional(),
    params: z.record(z.string(), z.unknown()).optional(),
    webhook_ids: z.array(z.string()).optional(),
    emails: sealed(z.array(z.string())).optional(),
    enabled: z.boolean().optional(),
  }),
  AlertRuleDeleted: z.object({ rule_id: erases('alert_rule') }),
  /** `key` is (window end day, direction): a rule fires once per key; `alert` is what alert.fired carries */
  AlertFired: z.object({
    key: z.string(),
    alert: z.object({
      id: z.string(),
      rule_id: z.string(),
      website_id: z.string(),
      kind: z.string(),
      fired_at: z.string(),
      summary: z.string(),
      details: z.record(z.string(), z.unknown()),
      webhook_ids: z.array(z.string()),
    }),
  }),
  AlertAcknowledged: z.object({ alert_id: z.string(), rule_id: z.string() }),
} as const;

/**
 * A website report (stream `report-<id>`): the snapshot of its numbers taken at creation, which its page shows
 * forever.
 */
export const reportEvents = {
  ReportCreated: z.object({
    report_id: z.string(),
    website_id: z.string(),
    title: z.string(),
    start_date: z.string(),
    end_date: z.string(),
    token: z.string(),
    snapshot: z.record(z.string(), z.unknown()),
  }),
  ReportDeleted: z.object({ report_id: z.string() }),
} as const;

/** A report schedule (stream `report-schedule-<id>`): each period's report made and mailed once (claimed, then sent). */
export const reportScheduleEvents = {
  ReportScheduleCreated: z.object({
    schedule_id: z.string(),
    website_id: z.string(),
    frequency: z.enum(['weekly', 'monthly']),
    recipients: z.array(z.string()),
  }),
  ReportScheduleUpdated: z.object({
    schedule_id: z.string(),
    frequency: z.enum(['weekly', 'monthly']).optional(),
    recipients: z.array(z.string()).optional(),
  }),
  ReportScheduleDeleted: z.object({ schedule_id: z.string() }),
  /** the period (`weekly:<monday>` or `monthly:<yyyy-mm>`) taken by one instance: its report has this id */
  ReportSchedulePeriodClaimed: z.object({
    schedule_id: z.string(),
    period: z.string(),
    start_date: z.string(),
    end_date: z.string(),
    report_id: z.string(),
    claimed_at: z.string(),
  }),
  /** the period's report made and its emails asked of the outbox */
  ReportSchedulePeriodSent: z.object({ schedule_id: z.string(), period: z.string(), report_id: z.string(), recipients: z.number() }),
} as const;

/**
 * The event catalogue: every event type with its data schema, one group above per kind of stream. Adding an event is
 * one entry in its group. Facts only: derivations live in projections. What a user can erase is marked sealed (see
 * src/domain/sealing.ts).
 */
export const catalogue = {
  ...organizationEvents,
  ...teamEvents,
  ...catalogEvents,
  ...runEvents,
  ...creditEvents,
  ...jobEvents,
  ...allowanceEvents,
  ...probeJobEvents,
  ...emailEvents,
  ...aiValueEvents,
  ...knowledgeEvents,
  ...pillarResearchEvents,
  ...seoEvents,
  ...discoveryEvents,
  ...pitchEvents,
  ...contentUrlsEvents,
  ...contentItemEvents,
  ...contentSheetsEvents,
  ...contentPipelineEvents,
  ...crawlerEvents,
  ...competitorSuggestionEvents,
  ...factConflictEvents,
  ...webhookEvents,
  ...alertRuleEvents,
  ...reportEvents,
  ...reportScheduleEvents,
} as const;

export type EventType = keyof typeof catalogue;
export type EventData<T extends EventType> = z.infer<(typeof catalogue)[T]>;
export type DomainEvent = { [T in EventType]: { type: T; data: EventData<T> } }[EventType];

/** The events of an organization's team (roles, users, members, groups, invites): what its decider folds and its read model applies. */
export const TEAM_EVENT_TYPES = typesOf(teamEvents);

/** The events of an item's generation pipeline, the content job's end included. */
export const CONTENT_PIPELINE_EVENT_TYPES = eventTypeList(...typesOf(contentPipelineEvents), 'JobSucceeded', 'JobFailed');
export type ContentPipelineEvent = EventsOf<typeof CONTENT_PIPELINE_EVENT_TYPES>;

/** The events of an item's stream `content-<content_id>`: its own, its pipeline's, and its job's start and charges. */
export const CONTENT_EVENT_TYPES = eventTypeList(...typesOf(contentItemEvents), ...CONTENT_PIPELINE_EVENT_TYPES, 'JobStarted', 'CreditsCharged');
export type ContentEvent = EventsOf<typeof CONTENT_EVENT_TYPES>;
export type EventOf<T extends EventType> = Extract<DomainEvent, { type: T }>;
/** The events of one kind of stream, from the const list of its types. */
export type EventsOf<L extends readonly EventType[]> = EventOf<L[number]>;

/** The end of an evolve's switch: `e` is `never` once every type of the stream's union has its case, or tsc fails. */
export const exhaustive = <S>(_e: never, s: S): S => s;

/** A guard for the events of a list of types (a stream's, a part of a state's). */
export function isEventOf<const L extends readonly EventType[]>(types: L): (e: DomainEvent) => e is EventsOf<L> {
  const known = new Set<string>(types);
  return (e): e is EventsOf<L> => known.has(e.type);
}

export const isKnownType = (t: string): t is EventType => Object.hasOwn(catalogue, t);
/** The stream of one email of the outbox: `email-<email id>`. */
/** The AI crawler log imports of a website: `crawlerlogs-<website_id>`. */
export const CRAWLER_EVENT_TYPES = typesOf(crawlerEvents);
export const CRAWLER_STREAM_PREFIX = 'crawlerlogs-';
export const EMAIL_STREAM_PREFIX = 'email-';
/** The stream of one engine answer (its outcome and credits): `response-<response id>`; imports have their own. */
export const RESPONSE_STREAM_PREFIX = 'response-';

/** Every event type of the catalogue. */
export const knownEventTypes = (): EventType[] => Object.keys(catalogue) as EventType[];

export class MalformedEventError extends Error {
  constructor(
    readonly eventId: string,
    readonly eventType: string,
    readonly reason: string,
  ) {
    super(`event ${eventId} of type ${eventType} is malformed: ${reason}`);
  }
}

/** Lifts an event's stored data from one schema version to the next. */
export type Upcaster = (data: unknown) => unknown;
/**
 * A breaking change of an event's data (a field renamed, retyped, made required) goes here: by type, the function
 * lifting each older version to the next (`{ TopicCreated: { 1: (d) => ... } }` makes today's version 2). Stored
 * events keep their shape; new ones are stored with today's version. A field added as optional needs none.
 */
export const UPCASTERS: Partial<Record<EventType, Record<number, Upcaster>>> = {};

/** The schema version events of this type are written with today: 1 past its last upcaster. */
export function schemaVersion(type: string): number {
  const steps = isKnownType(type) ? UPCASTERS[type] : undefined;
  return steps ? Math.max(0, ...Object.keys(steps).map(Number)) + 1 : 1;
}

/** An event's metadata as it is stored: with its schema version when its type is past version 1. */
export function withSchemaVersion(type: string, metadata: EventMetadata): EventMetadata {
  const version = schemaVersion(type);
  return version === 1 ? metadata : { ...metadata, schema_version: version };
}

/**
 * Validates an event read from a store against the catalogue, upcast first from the version it was stored with
 * (metadata.schema_version); never silently drops it.
 */
export function decodeEvent(id: string, type: string, data: unknown, storedVersion = 1): DomainEvent {
  if (!isKnownType(type)) throw new MalformedEventError(id, type, 'unknown event type');
  const steps = UPCASTERS[type];
  if (steps) for (let v = storedVersion; steps[v]; v++) data = steps[v](data);
  const r = catalogue[type].safeParse(data);
  if (!r.success) throw new MalformedEventError(id, type, r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; '));
  return { type, data: r.data } as DomainEvent;
}
