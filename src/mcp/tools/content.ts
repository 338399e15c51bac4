import { z } from 'zod';
import { CreateColumn, CreateSheet } from '../../../commands/content/sheets';
import { TrackContent } from '../../../commands/content/track';
import { Answers } from '../../../queries/content/views';
import * as content from '../../app/content';
import { idOf, WebsiteId } from '../../domain/schemas';
import { ADDS, byId, READS, REPLACES, tool, type ToolDef, websiteCreate, websiteRead } from '../tool';
import { contentPipelineTools } from './content-pipeline';

const OfItem = z.strictObject({
  content_id: idOf('content item'),
  website_id: WebsiteId.optional().describe('The website (brand) id; optional: the content id decides it (one that differs answers 404)'),
});

const FIGURES =
  "citations = selected answers citing the item (an answer cites it when one of its cited URLs, engine citations or URLs in its text, has the item's normalized URL), total_responses = selected answers, citation_percent = 100 × citations / total_responses. filters: schedule_id, start_date/end_date (YYYY-MM-DD, ISO timestamps or spelled-out dates), models, prompt_ids, location_ids, prompt_status, prompt_type, saved_view_id; mentioned true/false keeps answers that do / do not mention the brand.";

/** The content hub's tools: the same operations as the REST routes (src/app/content.ts). */
export const contentTools: ToolDef[] = [
  ...contentPipelineTools,
  tool({
    name: 'track_content_urls',
    title: 'Track content URLs',
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
    description:
      "Track 1 to 500 pages by URL (own pages become type imported, other domains external): no generation, no credit cost. Idempotent per URL: a URL already on the website (any type) is listed in skipped with its content_id and type (check the type before destructive calls) and is not moved; duplicates in one call (tracking-parameter variants included) collapse, first wins. title overrides the slug title. sheet_id: a tab (a view-type tab or none: the shared pool). fields: [{column, value}] for the tab's customer columns (text, link, number, date, checkbox, multi_select up to 50 labels; options created on the fly); a bad field tracks nothing.",
    input: TrackContent,
    output: Answers.track,
    handler: (ctx, input) => content.trackContent(ctx, input),
  }),
  tool({
    name: 'list_content',
    title: 'List content',
    annotations: READS,
    description: `The website's content items, newest first, with citation figures over the selected answers. content_type: generated, optimize, snipe, slice, manual, external, imported, draft (= generated) or generated_any; stage; sheet_id. ${FIGURES} page_num from 0, page_size 1 to 100 (default 40).`,
    input: content.ToolListContent,
    output: Answers.list,
    handler: (ctx, input) => content.listContent(ctx, input),
  }),
  tool({
    name: 'get_tracked_content',
    title: 'Get tracked content with citations',
    annotations: READS,
    description: `The website's finished content, the items with a URL (tracked pages and published items), newest first, with their citation figures. ${FIGURES}`,
    input: content.ToolListContent,
    output: Answers.list,
    handler: (ctx, input) => content.listContent(ctx, input, { withUrl: true }),
  }),
  tool({
    name: 'get_content_detail',
    title: 'Get a content item',
    annotations: READS,
    description:
      'One content item: title, url (without protocol), normalized_url, type, tab, topic, stage (status repeats it), pipeline_status, brief, body, meta_description, custom fields, version_number, mark_as_done_time.',
    input: OfItem,
    output: Answers.item,
    handler: (ctx, input) => content.getContent(ctx, input.content_id, input.website_id),
  }),
  websiteRead({
    name: 'get_content_hub_sheets',
    title: 'Get content hub tabs',
    description: "The website's content hub tabs (type sheet or view) with their customer columns (name, type, multi-select options).",
    output: Answers.sheets,
    read: content.listSheets,
  }),
  websiteCreate({
    name: 'create_content_hub_sheet',
    title: 'Create a content hub tab',
    description:
      "Create a tab: type 'sheet' (default; has customer columns) or 'view' (tracking into it goes to the shared pool). Names are unique per website, case-insensitively.",
    input: CreateSheet,
    output: Answers.sheet,
    create: content.createSheet,
  }),
  byId({
    name: 'create_content_hub_column',
    title: 'Add a column to a content hub tab',
    annotations: ADDS,
    description:
      'Add a customer column to a sheet: text, link, number, date, checkbox, multi_select (options) or generated (filled by aivis; tracking refuses it).',
    id: 'sheet_id',
    of: 'tab (sheet)',
    body: CreateColumn,
    output: Answers.column,
    call: content.createColumn,
  }),
  tool({
    name: 'get_content_citation_prompts',
    title: "Get a content item's citing prompts",
    annotations: READS,
    description: `Per prompt, the selected answers citing one content item (citations) and their share of that prompt's selected answers (citation_percent); prompts with at least one citation, most first. ${FIGURES}`,
    input: content.ToolContentPromptsRequest,
    output: Answers.prompts,
    handler: (ctx, input) => content.contentPrompts(ctx, input),
  }),
  tool({
    name: 'delete_content',
    title: 'Delete a content item',
    annotations: REPLACES,
    description:
      'Delete a content item permanently (no undo): its body, brief, versions and custom values are erased everywhere. Its URL can then be tracked again (under a new id). Check the item type first: a generated draft is deleted too.',
    input: OfItem,
    output: Answers.deleted,
    handler: (ctx, input) => content.deleteContent(ctx, input.content_id, input.website_id),
  }),
];
