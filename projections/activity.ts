import type { Knex } from 'knex';
import type { EventType } from '../src/domain/events';
import type { TypedEvent } from '../src/eventstore/port';
import { copyRows, type Projection, migrateSql } from '../src/eventstore/projection';

export interface FeedEntry {
  entity_type: string;
  change_type: string;
  /** null: too many to list, re-list the website */
  entity_ids: string[] | null;
  /** overrides the event's website (organization-level changes have none) */
  website_id?: string | null;
}

/** A feed entry; website_id null for an organization-level change, left out for the event's own website. */
const entry = (entity_type: string, change_type: string, entity_ids: string[] | null, website_id?: string | null): FeedEntry =>
  website_id === undefined ? { entity_type, change_type, entity_ids } : { entity_type, change_type, entity_ids, website_id };

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
  WebsiteCreated: (e) => entry('website', 'created', [e.data.website_id], e.data.website_id),
  WebsiteExternalIdSet: (e) => entry('website', 'updated', [e.data.website_id], e.data.website_id),
  WebsiteStatusChanged: (e) => entry('website', e.data.status === 'active' ? 'resumed' : e.data.status, [e.data.website_id], e.data.website_id),
  ApiKeyCreated: (e) => entry('api_key', 'created', [e.data.api_key_id], null),
  ApiKeyRevoked: (e) => entry('api_key', 'revoked', [e.data.api_key_id], null),
  CreditsGranted: (e) => entry('credit_grant', 'created', [e.data.grant_id], null),
  UserAdded: (e) => entry('user', 'created', [e.data.user_id], null),
  RoleCreated: (e) => entry('role', 'created', [e.data.role_id], null),
  RoleDeleted: (e) => entry('role', 'deleted', [e.data.role_id], null),
  UserCreated: (e) => entry('user', 'created', [e.data.user_id], null),
  OrganizationMemberAdded: (e) => entry('organization_member', 'created', [e.data.user_id], null),
  OrganizationMemberRoleChanged: (e) => entry('organization_member', 'updated', [e.data.user_id], null),
  OrganizationMemberRemoved: (e) => entry('organization_member', 'deleted', [e.data.user_id], null),
  WebsiteMemberAdded: (e) => entry('website_member', 'created', [e.data.user_id], e.data.website_id),
  WebsiteMemberRoleChanged: (e) => entry('website_member', 'updated', [e.data.user_id], e.data.website_id),
  WebsiteMemberRemoved: (e) => entry('website_member', 'deleted', [e.data.user_id], e.data.website_id),
  GroupCreated: (e) => entry('group', 'created', [e.data.group_id], null),
  GroupUpdated: (e) => entry('group', 'updated', [e.data.group_id], null),
  GroupMemberAdded: (e) => entry('group_member', 'created', [e.data.user_id, e.data.group_id], null),
  GroupMemberRemoved: (e) => entry('group_member', 'deleted', [e.data.user_id, e.data.group_id], null),
  InviteCreated: (e) => entry('invite', 'created', [e.data.invite_id], e.data.type === 'website' ? e.data.target_id : null),
  InviteAccepted: (e) => entry('invite', 'accepted', [e.data.invite_id, e.data.user_id], null),
  CompetitorAdded: (e) => entry('competitor', 'created', [e.data.competitor_id]),
  TopicCreated: (e) => entry('topic', 'created', [e.data.topic_id]),
  PromptCreated: (e) => entry('prompt', 'created', [e.data.prompt_id]),
  CompetitorRenamed: (e) => entry('competitor', 'updated', [e.data.competitor_id]),
  CompetitorIdentifiersChanged: (e) => entry('competitor', 'updated', [e.data.competitor_id]),
  CompetitorRemoved: (e) => entry('competitor', 'deleted', [e.data.competitor_id]),
  TopicDeleted: (e) => entry('topic', 'deleted', affected(e.data.topic_id, e.data.soft_deleted_prompt_ids)),
  TopicRestored: (e) => entry('topic', 'restored', affected(e.data.topic_id, e.data.restored_prompt_ids)),
  PromptUpdated: (e) => entry('prompt', 'updated', [e.data.prompt_id]),
  PromptDeleted: (e) => entry('prompt', 'deleted', [e.data.prompt_id]),
  PersonaCreated: (e) => entry('persona', 'created', [e.data.persona_id]),
  LocationCreated: (e) => entry('location', 'created', [e.data.location_id]),
  PromptScheduleCreated: (e) => entry('prompt_schedule', 'created', [e.data.schedule_id]),
  PromptScheduleUpdated: (e) => entry('prompt_schedule', 'updated', [e.data.schedule_id]),
  PromptScheduleArchived: (e) => entry('prompt_schedule', 'archived', [e.data.schedule_id]),
  SavedViewCreated: (e) => entry('saved_view', 'created', [e.data.view_id]),
  SavedViewUpdated: (e) => entry('saved_view', 'updated', [e.data.view_id]),
  AttributeCreated: (e) => entry('attribute', 'created', [e.data.attribute_id]),
  SeoRecommendationsRequested: (e) => entry('seo_recommendation_job', 'created', [e.data.job_id], e.data.website_id),
  SeoRecommendationsProduced: (e) => entry('seo_recommendation_job', 'completed', [e.data.job_id]),
  PromptDiscoveryCompleted: (e) => entry('prompt_discovery_run', 'completed', [e.data.run_id]),
  PromptDiscoveryRequested: (e) => entry('prompt_discovery_run', 'created', [e.data.run_id], e.data.website_id),
  PromptDiscoveryAccepted: (e) => entry('prompt_discovery_run', 'accepted', [e.data.run_id, ...e.data.prompt_ids]),
  RunStarted: (e) => entry('run', 'started', [e.data.run_id]),
  RunEnded: (e) => entry('run', e.data.reason, [e.data.run_id]),
  ResponsesImported: (e) => entry('response', 'imported', e.data.response_ids.length <= 100 ? e.data.response_ids : null),
  TopicEconomicsSet: (e) => entry('topic', 'updated', [e.data.topic_id]),
  AiValueComputed: (e) => entry('ai_search_value', 'computed', [e.data.job_id]),
  // ---- knowledge ----
  PillarCreated: (e) => entry('pillar', 'created', [e.data.pillar_id]),
  PillarUpdated: (e) => entry('pillar', 'updated', [e.data.pillar_id]),
  PillarResearched: (e) => entry('pillar', 'researched', [e.data.pillar_id]),
  // a text change is the new fact (listed with the one it replaced), then the old one archived
  FactRecorded: (e) => (e.data.replaces ? entry('fact', 'updated', [e.data.fact_id, e.data.replaces]) : entry('fact', 'created', [e.data.fact_id])),
  FactReviewed: (e) => entry('fact', e.data.review_status, [e.data.fact_id]),
  FactUpdated: (e) => entry('fact', 'updated', [e.data.fact_id]),
  FactArchived: (e) => entry('fact', 'archived', [e.data.fact_id]),
  FactsDeleted: (e) => entry('fact', 'deleted', e.data.fact_ids),
  PitchRequested: (e) => entry('pitch', 'created', [e.data.job_id], null),
  PitchReportCompiled: (e) => entry('pitch', 'completed', [e.data.job_id], null),
  ContentTracked: (e) => entry('content', 'created', [e.data.content_id], e.data.website_id),
  ContentTitleChanged: (e) => entry('content', 'updated', [e.data.content_id], e.data.website_id),
  ContentDeleted: (e) => entry('content', 'deleted', [e.data.content_id], e.data.website_id),
  ContentSheetCreated: (e) => entry('content_sheet', 'created', [e.data.sheet_id], e.data.website_id),
  ContentColumnCreated: (e) => entry('content_column', 'created', [e.data.column_id, e.data.sheet_id], e.data.website_id),
  ContentColumnOptionsAdded: (e) => entry('content_column', 'updated', [e.data.column_id, e.data.sheet_id], e.data.website_id),
  // ---- content pipeline ----
  ContentGenerationRequested: (e) => entry('content', 'generation_requested', [e.data.content_id]),
  ContentBriefGenerated: (e) => entry('content', 'brief_generated', [e.data.content_id]),
  ContentBriefApproved: (e) => entry('content', 'brief_approved', [e.data.content_id]),
  ContentArticleGenerated: (e) => entry('content', 'generated', [e.data.content_id]),
  ContentReviewed: (e) => entry('content', 'optimized', [e.data.content_id]),
  ContentPublished: (e) => entry('content', 'published', [e.data.content_id]),
  ContentEdited: (e) => entry('content', 'edited', [e.data.content_id]),
  ContentRevised: (e) => entry('content', 'revised', [e.data.content_id]),
  JobFailed: (e) => {
    if (e.data.kind === 'pitch') return entry('pitch', 'failed', [e.data.job_id], null);
    // the jobs whose start and end the feed shows: their failure too (the website from the job's metadata)
    const entity_type = FAILURES_SHOWN[e.data.kind];
    return entity_type ? entry(entity_type, 'failed', [e.data.job_id]) : null;
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
  migrate: migrateSql(
    `
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
      )`,
    // after a rebuild these are three sorts of the whole table: each on its own connection, they run side by side
    (db) =>
      Promise.all([
        db.raw('create index if not exists rm_activity_org_time on rm_activity (organization_id, created_at, seq)'),
        db.raw('create index if not exists rm_activity_site_time on rm_activity (website_id, created_at, seq)'),
        uniqueId(db),
      ]),
  ),
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
