import { z } from 'zod';
import { PageInfo } from '../paging';
import { ContentColumnType, ContentFieldValue, ContentStage, ContentType, PipelineStatus } from '../../src/domain/content';

/** A custom column's value on an item. */
export const ContentField = z.object({ column_id: z.string(), column: z.string(), type: ContentColumnType, value: ContentFieldValue });

/**
 * The item (CONTRACT.md, Content hub; the public documentation's detail): `status` repeats `stage`; `url` has no
 * protocol; sealed parts (brief, body, field values) are null / absent once erased.
 */
export const ContentItemView = z.object({
  content_id: z.string(),
  website_id: z.string(),
  title: z.string(),
  url: z.string().nullable().describe('The live URL without its protocol; null until it has one'),
  normalized_url: z.string().nullable(),
  type: ContentType,
  sheet_id: z.string().nullable(),
  sheet_name: z.string().nullable(),
  topic_id: z.string().nullable(),
  topic_name: z.string().nullable(),
  stage: ContentStage.nullable(),
  status: ContentStage.nullable(),
  pipeline_status: PipelineStatus.nullable(),
  brief: z.string().nullable(),
  body: z.string().nullable(),
  meta_description: z.string().nullable(),
  cited_urls: z.array(z.string()),
  internal_links: z.array(z.string()),
  fields: z.array(ContentField),
  version_number: z.number().int(),
  mark_as_done_time: z.string().nullable(),
  content_hub_url: z.string(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type ContentItemView = z.infer<typeof ContentItemView>;

/** One row of the listing (POST /api/v1/content), with its citation figures over the selected answers. */
export const ContentListItem = z.object({
  content_id: z.string(),
  title: z.string(),
  url: z.string().nullable().describe('The live URL without its protocol; null until it has one'),
  normalized_url: z.string().nullable(),
  type: ContentType,
  stage: ContentStage.nullable(),
  topic_name: z.string().nullable(),
  sheet_id: z.string().nullable(),
  sheet_name: z.string().nullable(),
  citations: z.number().int(),
  citation_percent: z.number(),
  total_responses: z.number().int(),
  mark_as_done_time: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type ContentListItem = z.infer<typeof ContentListItem>;

export const ContentListView = z.object({
  content: z.array(ContentListItem),
  pagination: z.object(PageInfo),
  /** the read model set the website aside (see /readyz): the figures may miss answers */
  stale: z.literal(true).optional(),
});
export type ContentListView = z.infer<typeof ContentListView>;

export const ContentPromptsView = z.object({
  content_id: z.string(),
  content_url: z.string().nullable(),
  content_normalized_url: z.string().nullable(),
  prompts: z.array(z.object({ prompt_id: z.string(), prompt: z.string(), citations: z.number().int(), citation_percent: z.number() })),
});
export type ContentPromptsView = z.infer<typeof ContentPromptsView>;

export const ColumnView = z.object({ column_id: z.string(), name: z.string(), type: ContentColumnType, options: z.array(z.string()) });
export type ColumnView = z.infer<typeof ColumnView>;
export const SheetView = z.object({ sheet_id: z.string(), name: z.string(), type: z.enum(['sheet', 'view']), columns: z.array(ColumnView) });
export type SheetView = z.infer<typeof SheetView>;
export const SheetsView = z.object({ sheets: z.array(SheetView) });

const TrackedRow = z.object({
  content_id: z.string(),
  url: z.string(),
  sheet_id: z.string().nullable(),
  destination_name: z.string(),
  content_hub_url: z.string(),
});
/** POST /api/v1/content/track (spec). */
export const TrackView = z.object({
  success: z.boolean(),
  created_count: z.number().int(),
  skipped_count: z.number().int(),
  created: z.array(TrackedRow),
  skipped: z.array(TrackedRow.extend({ type: ContentType })),
});
export type TrackView = z.infer<typeof TrackView>;

export const Answers = {
  item: ContentItemView,
  list: ContentListView,
  prompts: ContentPromptsView,
  sheets: SheetsView,
  sheet: z.object({ sheet: SheetView }),
  column: z.object({ column: ColumnView }),
  track: TrackView,
  deleted: z.object({ success: z.literal(true) }),
};
