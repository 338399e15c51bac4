import type { Knex } from 'knex';
import type { EventType } from '../src/domain/events';
import type { TypedEvent } from '../src/eventstore/port';
import { copyRows, type Projection } from '../src/eventstore/projection';

export interface FeedEntry {
  entity_type: string;
  change_type: string;
  /** null: too many to list, re-list the website */
  entity_ids: string[] | null;
  /** overrides the event's website (organization-level changes have none) */
  website_id?: string | null;
}

/** A change's own id plus the ids it carried along (a topic's prompts); null (re-list the website) past 100. */
const affected = (id: string, carried: string[]) => (carried.length < 100 ? [id, ...carried] : null);

/** A Postgres array literal (each element quoted), so a list of ids travels as one element of a text[] column array. */
const pgArray = (xs: string[]) => `{${xs.map((x) => `"${x.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`).join(',')}}`;

/** null: this event of the type is no change of a resource (a job end of a kind the feed does not show) */
type Mapper<T extends EventType> = (e: Extract<TypedEvent, { type: T }>) => FeedEntry | null;

/** Job kinds whose failure is a feed entry of their own entity type (pitches are organization-level: mapped apart). */
const FAILURES_SHOWN: Record<string, string> = { seo: 'seo_recommendation_job', discovery: 'prompt_discovery_run' };

/** Every event type that changes a resource, as a feed entry. Adding a type to the feed is one line here. */
export const feed: { [T in EventType]?: Mapper<T> } = {
  WebsiteCreated: (e) => ({ entity_type: 'website', change_type: 'created', entity_ids: [e.data.website_id], website_id: e.data.website_id }),
  WebsiteExternalIdSet: (e) => ({ entity_type: 'website', change_type: 'updated', entity_ids: [e.data.website_id], website_id: e.data.website_id }),
  WebsiteStatusChanged: (e) => ({
    entity_type: 'website',
    change_type: e.data.status === 'active' ? 'resumed' : e.data.status,
    entity_ids: [e.data.website_id],
    website_id: e.data.website_id,
  }),
  ApiKeyCreated: (e) => ({ entity_type: 'api_key', change_type: 'created', entity_ids: [e.data.api_key_id], website_id: null }),
  ApiKeyRevoked: (e) => ({ entity_type: 'api_key', change_type: 'revoked', entity_ids: [e.data.api_key_id], website_id: null }),
  CreditsGranted: (e) => ({ entity_type: 'credit_grant', change_type: 'created', entity_ids: [e.data.grant_id], website_id: null }),
  UserAdded: (e) => ({ entity_type: 'user', change_type: 'created', entity_ids: [e.data.user_id], website_id: null }),
  RoleCreated: (e) => ({ entity_type: 'role', change_type: 'created', entity_ids: [e.data.role_id], website_id: null }),
  RoleDeleted: (e) => ({ entity_type: 'role', change_type: 'deleted', entity_ids: [e.data.role_id], website_id: null }),
  UserCreated: (e) => ({ entity_type: 'user', change_type: 'created', entity_ids: [e.data.user_id], website_id: null }),
  OrganizationMemberAdded: (e) => ({ entity_type: 'organization_member', change_type: 'created', entity_ids: [e.data.user_id], website_id: null }),
  OrganizationMemberRoleChanged: (e) => ({
    entity_type: 'organization_member',
    change_type: 'updated',
    entity_ids: [e.data.user_id],
    website_id: null,
  }),
  OrganizationMemberRemoved: (e) => ({ entity_type: 'organization_member', change_type: 'deleted', entity_ids: [e.data.user_id], website_id: null }),
  WebsiteMemberAdded: (e) => ({ entity_type: 'website_member', change_type: 'created', entity_ids: [e.data.user_id], website_id: e.data.website_id }),
  WebsiteMemberRoleChanged: (e) => ({
    entity_type: 'website_member',
    change_type: 'updated',
    entity_ids: [e.data.user_id],
    website_id: e.data.website_id,
  }),
  WebsiteMemberRemoved: (e) => ({
    entity_type: 'website_member',
    change_type: 'deleted',
    entity_ids: [e.data.user_id],
    website_id: e.data.website_id,
  }),
  GroupCreated: (e) => ({ entity_type: 'group', change_type: 'created', entity_ids: [e.data.group_id], website_id: null }),
  GroupUpdated: (e) => ({ entity_type: 'group', change_type: 'updated', entity_ids: [e.data.group_id], website_id: null }),
  GroupMemberAdded: (e) => ({ entity_type: 'group_member', change_type: 'created', entity_ids: [e.data.user_id, e.data.group_id], website_id: null }),
  GroupMemberRemoved: (e) => ({
    entity_type: 'group_member',
    change_type: 'deleted',
    entity_ids: [e.data.user_id, e.data.group_id],
    website_id: null,
  }),
  InviteCreated: (e) => ({
    entity_type: 'invite',
    change_type: 'created',
    entity_ids: [e.data.invite_id],
    website_id: e.data.type === 'website' ? e.data.target_id : null,
  }),
  InviteAccepted: (e) => ({ entity_type: 'invite', change_type: 'accepted', entity_ids: [e.data.invite_id, e.data.user_id], website_id: null }),
  CompetitorAdded: (e) => ({ entity_type: 'competitor', change_type: 'created', entity_ids: [e.data.competitor_id] }),
  TopicCreated: (e) => ({ entity_type: 'topic', change_type: 'created', entity_ids: [e.data.topic_id] }),
  PromptCreated: (e) => ({ entity_type: 'prompt', change_type: 'created', entity_ids: [e.data.prompt_id] }),
  CompetitorRenamed: (e) => ({ entity_type: 'competitor', change_type: 'updated', entity_ids: [e.data.competitor_id] }),
  CompetitorIdentifiersChanged: (e) => ({ entity_type: 'competitor', change_type: 'updated', entity_ids: [e.data.competitor_id] }),
  CompetitorRemoved: (e) => ({ entity_type: 'competitor', change_type: 'deleted', entity_ids: [e.data.competitor_id] }),
  TopicDeleted: (e) => ({ entity_type: 'topic', change_type: 'deleted', entity_ids: affected(e.data.topic_id, e.data.soft_deleted_prompt_ids) }),
  TopicRestored: (e) => ({ entity_type: 'topic', change_type: 'restored', entity_ids: affected(e.data.topic_id, e.data.restored_prompt_ids) }),
  PromptUpdated: (e) => ({ entity_type: 'prompt', change_type: 'updated', entity_ids: [e.data.prompt_id] }),
  PromptDeleted: (e) => ({ entity_type: 'prompt', change_type: 'deleted', entity_ids: [e.data.prompt_id] }),
  PersonaCreated: (e) => ({ entity_type: 'persona', change_type: 'created', entity_ids: [e.data.persona_id] }),
  LocationCreated: (e) => ({ entity_type: 'location', change_type: 'created', entity_ids: [e.data.location_id] }),
  PromptScheduleCreated: (e) => ({ entity_type: 'prompt_schedule', change_type: 'created', entity_ids: [e.data.schedule_id] }),
  PromptScheduleUpdated: (e) => ({ entity_type: 'prompt_schedule', change_type: 'updated', entity_ids: [e.data.schedule_id] }),
  PromptScheduleArchived: (e) => ({ entity_type: 'prompt_schedule', change_type: 'archived', entity_ids: [e.data.schedule_id] }),
  SavedViewCreated: (e) => ({ entity_type: 'saved_view', change_type: 'created', entity_ids: [e.data.view_id] }),
  SavedViewUpdated: (e) => ({ entity_type: 'saved_view', change_type: 'updated', entity_ids: [e.data.view_id] }),
  AttributeCreated: (e) => ({ entity_type: 'attribute', change_type: 'created', entity_ids: [e.data.attribute_id] }),
  SeoRecommendationsRequested: (e) => ({
    entity_type: 'seo_recommendation_job',
    change_type: 'created',
    entity_ids: [e.data.job_id],
    website_id: e.data.website_id,
  }),
  SeoRecommendationsProduced: (e) => ({ entity_type: 'seo_recommendation_job', change_type: 'completed', entity_ids: [e.data.job_id] }),
  PromptDiscoveryCompleted: (e) => ({ entity_type: 'prompt_discovery_run', change_type: 'completed', entity_ids: [e.data.run_id] }),
  PromptDiscoveryRequested: (e) => ({
    entity_type: 'prompt_discovery_run',
    change_type: 'created',
    entity_ids: [e.data.run_id],
    website_id: e.data.website_id,
  }),
  PromptDiscoveryAccepted: (e) => ({
    entity_type: 'prompt_discovery_run',
    change_type: 'accepted',
    entity_ids: [e.data.run_id, ...e.data.prompt_ids],
  }),
  RunStarted: (e) => ({ entity_type: 'run', change_type: 'started', entity_ids: [e.data.run_id] }),
  RunEnded: (e) => ({ entity_type: 'run', change_type: e.data.reason, entity_ids: [e.data.run_id] }),
  ResponsesImported: (e) => ({
    entity_type: 'response',
    change_type: 'imported',
    entity_ids: e.data.response_ids.length <= 100 ? e.data.response_ids : null,
  }),
  TopicEconomicsSet: (e) => ({ entity_type: 'topic', change_type: 'updated', entity_ids: [e.data.topic_id] }),
  AiValueComputed: (e) => ({ entity_type: 'ai_search_value', change_type: 'computed', entity_ids: [e.data.job_id] }),
  // ---- knowledge ----
  PillarCreated: (e) => ({ entity_type: 'pillar', change_type: 'created', entity_ids: [e.data.pillar_id] }),
  PillarUpdated: (e) => ({ entity_type: 'pillar', change_type: 'updated', entity_ids: [e.data.pillar_id] }),
  PillarResearched: (e) => ({ entity_type: 'pillar', change_type: 'researched', entity_ids: [e.data.pillar_id] }),
  // a text change is the new fact (listed with the one it replaced), then the old one archived
  FactRecorded: (e) =>
    e.data.replaces
      ? { entity_type: 'fact', change_type: 'updated', entity_ids: [e.data.fact_id, e.data.replaces] }
      : { entity_type: 'fact', change_type: 'created', entity_ids: [e.data.fact_id] },
  FactReviewed: (e) => ({ entity_type: 'fact', change_type: e.data.review_status, entity_ids: [e.data.fact_id] }),
  FactUpdated: (e) => ({ entity_type: 'fact', change_type: 'updated', entity_ids: [e.data.fact_id] }),
  FactArchived: (e) => ({ entity_type: 'fact', change_type: 'archived', entity_ids: [e.data.fact_id] }),
  FactsDeleted: (e) => ({ entity_type: 'fact', change_type: 'deleted', entity_ids: e.data.fact_ids }),
  PitchRequested: (e) => ({ entity_type: 'pitch', change_type: 'created', entity_ids: [e.data.job_id], website_id: null }),
  PitchReportCompiled: (e) => ({ entity_type: 'pitch', change_type: 'completed', entity_ids: [e.data.job_id], website_id: null }),
  ContentTracked: (e) => ({ entity_type: 'content', change_type: 'created', entity_ids: [e.data.content_id], website_id: e.data.website_id }),
  ContentTitleChanged: (e) => ({ entity_type: 'content', change_type: 'updated', entity_ids: [e.data.content_id], website_id: e.data.website_id }),
  ContentDeleted: (e) => ({ entity_type: 'content', change_type: 'deleted', entity_ids: [e.data.content_id], website_id: e.data.website_id }),
  ContentSheetCreated: (e) => ({
    entity_type: 'content_sheet',
    change_type: 'created',
    entity_ids: [e.data.sheet_id],
    website_id: e.data.website_id,
  }),
  ContentColumnCreated: (e) => ({
    entity_type: 'content_column',
    change_type: 'created',
    entity_ids: [e.data.column_id, e.data.sheet_id],
    website_id: e.data.website_id,
  }),
  ContentColumnOptionsAdded: (e) => ({
    entity_type: 'content_column',
    change_type: 'updated',
    entity_ids: [e.data.column_id, e.data.sheet_id],
    website_id: e.data.website_id,
  }),
  // ---- content pipeline ----
  ContentGenerationRequested: (e) => ({ entity_type: 'content', change_type: 'generation_requested', entity_ids: [e.data.content_id] }),
  ContentBriefGenerated: (e) => ({ entity_type: 'content', change_type: 'brief_generated', entity_ids: [e.data.content_id] }),
  ContentBriefApproved: (e) => ({ entity_type: 'content', change_type: 'brief_approved', entity_ids: [e.data.content_id] }),
  ContentArticleGenerated: (e) => ({ entity_type: 'content', change_type: 'generated', entity_ids: [e.data.content_id] }),
  ContentReviewed: (e) => ({ entity_type: 'content', change_type: 'optimized', entity_ids: [e.data.content_id] }),
  ContentPublished: (e) => ({ entity_type: 'content', change_type: 'published', entity_ids: [e.data.content_id] }),
  ContentEdited: (e) => ({ entity_type: 'content', change_type: 'edited', entity_ids: [e.data.content_id] }),
  ContentRevised: (e) => ({ entity_type: 'content', change_type: 'revised', entity_ids: [e.data.content_id] }),
  JobFailed: (e) => {
    if (e.data.kind === 'pitch') return { entity_type: 'pitch', change_type: 'failed', entity_ids: [e.data.job_id], website_id: null };
    // the jobs whose start and end the feed shows: their failure too (the website from the job's metadata)
    const entity_type = FAILURES_SHOWN[e.data.kind];
    return entity_type ? { entity_type, change_type: 'failed', entity_ids: [e.data.job_id] } : null;
  },
};

const COLUMNS = [
  'id',
  'organization_id',
  'website_id',
  'entity_type',
  'change_type',
  'entity_ids',
  'via_api_key',
  'api_key_id',
  'actor_user_id',
  'actor_kind',
  'created_at',
];
type FeedRow = (string | boolean | null)[];

/** An event's row of rm_activity (COLUMNS, entity_ids as an array literal), or null when the feed has no entry for it. */
function feedRow(e: TypedEvent): FeedRow | null {
  const map = feed[e.type] as Mapper<EventType> | undefined;
  if (!map) return null;
  const entry = map(e as never);
  if (!entry) return null;
  const actor = e.metadata.actor;
  return [
    e.id,
    e.metadata.organization_id,
    entry.website_id !== undefined ? entry.website_id : (e.metadata.website_id ?? null),
    entry.entity_type,
    entry.change_type,
    entry.entity_ids === null ? null : pgArray(entry.entity_ids),
    actor.kind === 'api_key',
    actor.api_key_id,
    actor.user_id,
    actor.kind,
    e.metadata.time,
  ];
}

async function writeFeed(trx: Knex.Transaction, rows: FeedRow[], rebuilding: boolean): Promise<void> {
  // a rebuild has no row to skip (the unique index is dropped, every event is new): COPY, on a Postgres server
  if (rebuilding && (await copyRows(trx, 'rm_activity', COLUMNS, rows))) return;
  // one column array per field and one INSERT … SELECT unnest: a rebuild spends a third less CPU than a knex multi-row insert
  const cols: unknown[][] = COLUMNS.map(() => []);
  for (const row of rows) for (let i = 0; i < row.length; i++) cols[i].push(row[i]);
  await trx.raw(
    `insert into rm_activity (${COLUMNS.join(', ')})
     select id, org, site, et, ct, ids::uuid[], via, key, usr, kind, at
       from unnest(?::uuid[], ?::uuid[], ?::uuid[], ?::text[], ?::text[], ?::text[], ?::boolean[], ?::uuid[], ?::uuid[], ?::text[], ?::timestamptz[])
         as t(id, org, site, et, ct, ids, via, key, usr, kind, at)
     ${rebuilding ? '' : 'on conflict (id) do nothing'}`,
    cols as unknown as readonly Knex.RawBinding[],
  );
}

/** The unique index on id (tables made before the rebuild hook dropped it carry it as the constraint of that name). */
async function uniqueId(db: Knex): Promise<void> {
  if ((await db.raw(`select to_regclass('rm_activity_id_key') is not null as has`)).rows[0].has) return;
  try {
    await db.raw('create unique index if not exists rm_activity_id_key on rm_activity (id)');
  } catch (err) {
    if ((err as { code?: string }).code !== '23505') throw err;
    // a rebuild wrote an event id twice (a store that let one id into two streams): keep the first, as ON CONFLICT does
    await db.raw('delete from rm_activity a using rm_activity b where a.id = b.id and a.seq > b.seq');
    await db.raw('create unique index if not exists rm_activity_id_key on rm_activity (id)');
  }
}

export const activityProjection: Projection = {
  name: 'activity',
  version: 1,
  tables: ['rm_activity'],
  handles: Object.keys(feed) as EventType[],
  rebuild: {
    // a rebuild writes every row once: one index build at the end is cheaper than a million index inserts (the unique
    // index on id most of all: a random uuid per row, and ON CONFLICT probes it before every insert)
    async before(db) {
      await db.raw(`alter table rm_activity drop constraint if exists rm_activity_id_key;
        drop index if exists rm_activity_id_key; drop index if exists rm_activity_org_time; drop index if exists rm_activity_site_time`);
    },
    async after(db) {
      await activityProjection.migrate(db);
    },
  },
  async migrate(db: Knex) {
    await db.raw(`
      create table if not exists rm_activity (
        seq bigserial primary key,
        id uuid not null,
        organization_id uuid not null,
        website_id uuid,
        entity_type text not null,
        change_type text not null,
        entity_ids uuid[],
        via_api_key boolean not null,
        api_key_id uuid,
        actor_user_id uuid,
        actor_kind text not null,
        created_at timestamptz not null
      )`);
    // after a rebuild these are three sorts of the whole table: each on its own connection, they run side by side
    await Promise.all([
      db.raw('create index if not exists rm_activity_org_time on rm_activity (organization_id, created_at, seq)'),
      db.raw('create index if not exists rm_activity_site_time on rm_activity (website_id, created_at, seq)'),
      uniqueId(db),
    ]);
  },
  // not async: the events are mapped before it returns, and nothing here keeps them while the rows are written
  apply(trx, events, ctx) {
    const rows: FeedRow[] = [];
    for (const e of events) {
      const row = feedRow(e);
      if (row) rows.push(row);
    }
    return rows.length === 0 ? Promise.resolve() : writeFeed(trx, rows, ctx.rebuilding);
  },
};
