import type { Knex } from 'knex';
import { z } from 'zod';
import { ContentStage, PipelineStatus } from '../../src/domain/content';
import { iso } from '../timestamps';
import { ContentItemView } from './views';

/** One version of an item (spec, Content hub records): its brief, body and meta description as they were then. */
export const ContentVersionView = z.object({
  version_id: z.string(),
  version_number: z.number().int(),
  ...ContentItemView.pick({ body: true, brief: true, meta_description: true }).shape,
  label: z.string(),
  change_type: z.string(),
  created_at: z.string(),
  /** the knowledge-base facts the writer was given for this version (grounded generation; empty otherwise) */
  fact_ids: z.array(z.string()),
});
export type ContentVersionView = z.infer<typeof ContentVersionView>;

/** GET /content/{id}/versions: newest first, without the texts. */
export const ContentVersionsView = z.object({
  versions: z.array(ContentVersionView.pick({ version_id: true, version_number: true, label: true, change_type: true, created_at: true })),
});
export type ContentVersionsView = z.infer<typeof ContentVersionsView>;

/** GET /content/{id}/status: the pipeline's status (null before any generation), its stage, and why it failed. */
export const ContentStatusView = z.object({
  status: PipelineStatus.nullable(),
  stage: ContentStage.nullable(),
  error: z.string().nullable(),
});
export type ContentStatusView = z.infer<typeof ContentStatusView>;

export const PipelineAnswers = {
  generated: z.object({ content_id: z.string(), status: z.literal('running'), stage: ContentStage }),
  approved: z.object({ content_id: z.string(), stage: ContentStage.nullable() }),
  status: ContentStatusView,
  published: z.object({
    success: z.literal(true),
    content_id: z.string(),
    url: z.string(),
    normalized_url: z.string(),
    stage: ContentStage,
    mark_as_done_time: z.string(),
    already_published: z.boolean().describe('Published before: only the URL changed, the first publish time is kept'),
  }),
  edited: z.object({ success: z.literal(true), version_id: z.string(), version_number: z.number().int(), body_word_count: z.number().int() }),
  revised: z.object({
    body: z.string(),
    body_word_count: z.number().int(),
    previous_body_word_count: z.number().int(),
    version_id: z.string(),
    version_number: z.number().int(),
  }),
  versions: ContentVersionsView,
  version: ContentVersionView,
};

export async function listVersions(db: Knex, contentId: string): Promise<ContentVersionsView> {
  const rows = await db('rm_content_versions')
    .where('content_id', contentId)
    .orderBy('version_number', 'desc')
    .select('version_id', 'version_number', 'label', 'change_type', 'created_at');
  return { versions: rows.map((r) => ({ ...r, created_at: iso(r.created_at) })) };
}

/** One version of the item (null: its latest), or undefined when the item has no such version. */
export async function getVersion(db: Knex, contentId: string, versionId: string | null): Promise<ContentVersionView | undefined> {
  const q = db('rm_content_versions').where('content_id', contentId);
  const r = await (versionId ? q.where('version_id', versionId) : q.orderBy('version_number', 'desc')).first(
    'version_id',
    'version_number',
    'body',
    'brief',
    'meta_description',
    'label',
    'change_type',
    'created_at',
    'fact_ids',
  );
  return r ? { ...r, created_at: iso(r.created_at) } : undefined;
}
