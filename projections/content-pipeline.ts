import type { Knex } from 'knex';
import { stripProtocol, VERSION_KINDS, type VersionEventType } from '../commands/content/pipeline';
import type { EventOf, EventType } from '../src/domain/events';
import type { TypedEvent } from '../src/eventstore/port';
import type { EventHandlers } from '../src/eventstore/projection';

/**
 * The pipeline's part of the content read model (projections/content.ts spreads these in): an item made by a
 * generation, its stage and pipeline status, its draft, its publish, and rm_content_versions, one row per version with
 * the brief, body and meta description as they were then (sealed in the log: null once the item is erased, and the
 * rows go with the item's delete).
 */

const at = (e: TypedEvent) => e.metadata.time;
const CONTENT_PREFIX = 'content-';

export const PIPELINE_TABLES = ['rm_content_versions'] as const;

/** Job lifecycle events are read from content streams only. */
export const PIPELINE_STREAM_PREFIXES: Partial<Record<EventType, string>> = {
  JobSucceeded: CONTENT_PREFIX,
  JobFailed: CONTENT_PREFIX,
};

export async function migratePipeline(db: Knex): Promise<void> {
  await db.raw(`
    create table if not exists rm_content_versions (
      version_id uuid primary key,
      content_id uuid not null,
      website_id uuid not null,
      version_number int not null,
      label text not null,
      change_type text not null,
      body text,
      brief text,
      meta_description text,
      created_at timestamptz not null
    );
    create unique index if not exists rm_content_versions_item on rm_content_versions (content_id, version_number);
    alter table rm_content_versions add column if not exists fact_ids text[] not null default '{}';`);
}

interface Ctx {
  trx: Knex.Transaction;
}

type VersionEvent = TypedEvent<EventOf<VersionEventType>>;

/** Labels: the kind of change, an edit with its number of replacements. */
function labelOf(e: VersionEvent): string {
  if (e.type === 'ContentEdited') return `Edited (${e.data.edit_count} replacement${e.data.edit_count === 1 ? '' : 's'})`;
  if (e.type === 'ContentRevised' && e.data.retried) return 'Revised (whole document asked again)';
  return VERSION_KINDS[e.type].label;
}

/** The item's row after a change of its draft, and the version that records it (what it does not change kept from the last one). */
async function versioned(
  e: VersionEvent,
  trx: Knex.Transaction,
  change: { brief?: string | null; body?: string | null; meta_description?: string | null },
  stage?: string,
): Promise<void> {
  const d = e.data;
  const item = await trx('rm_content').where('content_id', d.content_id).first('website_id');
  if (!item) return;
  await trx('rm_content')
    .where('content_id', d.content_id)
    .update({ ...change, ...(stage ? { stage } : {}), version_number: d.version_number, updated_at: at(e) });
  const last = await trx('rm_content_versions')
    .where('content_id', d.content_id)
    .where('version_number', '<', d.version_number)
    .orderBy('version_number', 'desc')
    .first('body', 'brief', 'meta_description');
  await trx.raw(
    `insert into rm_content_versions (version_id, content_id, website_id, version_number, label, change_type, body, brief, meta_description, created_at, fact_ids)
     values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) on conflict do nothing`,
    [
      d.version_id,
      d.content_id,
      item.website_id,
      d.version_number,
      labelOf(e),
      VERSION_KINDS[e.type].change_type,
      'body' in change ? (change.body ?? null) : (last?.body ?? null),
      'brief' in change ? (change.brief ?? null) : (last?.brief ?? null),
      'meta_description' in change ? (change.meta_description ?? null) : (last?.meta_description ?? null),
      at(e),
      // the knowledge-base facts the writer was given (generated versions)
      ('fact_ids' in d ? d.fact_ids : undefined) ?? [],
    ],
  );
}

export const pipelineHandlers: EventHandlers<Ctx> = {
  async ContentGenerationRequested(e, { trx }) {
    const d = e.data;
    // an erased item (a rebuild): no row, so its later events have none to change
    if (d.title === null) return;
    await trx.raw(
      `insert into rm_content (content_id, organization_id, website_id, title, url, normalized_url, type, sheet_id, topic_id, stage,
                               pipeline_status, created_at, updated_at)
       values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'running', ?, ?) on conflict (content_id) do nothing`,
      [
        d.content_id,
        e.metadata.organization_id,
        d.website_id,
        d.title,
        d.url ? stripProtocol(d.url) : null,
        null,
        d.type,
        d.sheet_id,
        d.topic_id,
        d.type === 'optimize' ? 'pending' : 'pending_brief',
        at(e),
        at(e),
      ],
    );
  },
  ContentBriefGenerated: (e, { trx }) => versioned(e, trx, { brief: e.data.brief }, 'generated_brief'),
  async ContentBriefApproved(e, { trx }) {
    await trx('rm_content')
      .where({ content_id: e.data.content_id, stage: 'generated_brief' })
      .update({ stage: 'pending_article', updated_at: at(e) });
  },
  ContentArticleGenerated: (e, { trx }) => versioned(e, trx, { body: e.data.body, meta_description: e.data.meta_description }, 'generated'),
  ContentPageFetched: (e, { trx }) => versioned(e, trx, { body: e.data.body }),
  ContentReviewed: (e, { trx }) => versioned(e, trx, { body: e.data.body, meta_description: e.data.meta_description }),
  ContentEdited: (e, { trx }) => versioned(e, trx, { body: e.data.body }),
  ContentRevised: (e, { trx }) => versioned(e, trx, { body: e.data.body }),
  async ContentPublished(e, { trx }) {
    const d = e.data;
    if (d.url === null) return;
    await trx('rm_content')
      .where('content_id', d.content_id)
      .update({
        url: d.url,
        normalized_url: d.normalized_url,
        stage: 'done',
        mark_as_done_time: d.published_at,
        updated_at: at(e),
      });
  },
  async JobSucceeded(e, { trx }) {
    if (e.streamId.startsWith(CONTENT_PREFIX) && e.data.kind === 'content')
      await trx('rm_content')
        .where('content_id', e.data.job_id)
        .update({ pipeline_status: 'succeeded', updated_at: at(e) });
  },
  async JobFailed(e, { trx }) {
    if (e.streamId.startsWith(CONTENT_PREFIX) && e.data.kind === 'content')
      await trx('rm_content')
        .where('content_id', e.data.job_id)
        .update({ pipeline_status: 'failed', stage: 'failed', pipeline_error: e.data.message, updated_at: at(e) });
  },
};

/** The item's versions go with it. */
export async function deletePipelineRows(trx: Knex.Transaction, contentId: string): Promise<void> {
  await trx('rm_content_versions').where('content_id', contentId).delete();
}
