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

const CITED = "an answer cites an item when a URL it cites or contains is the item's normalized URL.";

/** The content hub's tools: the same operations as the REST routes (src/app/content.ts). */
export const contentTools: ToolDef[] = [
  ...contentPipelineTools,
  tool({
    name: 'track_content_urls',
    title: 'Track content URLs',
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
    description:
      'Track existing pages by URL (1 to 500; own domain: imported, others: external) to measure their citations; no generation, no credits. URLs already on the website come back in skipped with their type.',
    input: TrackContent,
    output: Answers.track,
    handler: (ctx, input) => content.trackContent(ctx, input),
  }),
  tool({
    name: 'list_content',
    title: 'List content',
    annotations: READS,
    description: `The website's content items, newest first, with how many selected answers cite each and their %; ${CITED}`,
    input: content.ToolListContent,
    output: Answers.list,
    handler: (ctx, input) => content.listContent(ctx, input),
  }),
  tool({
    name: 'get_tracked_content',
    title: 'Get tracked content with citations',
    annotations: READS,
    description: `Tracked pages and published items, newest first, with how many selected answers cite each and their %; ${CITED}`,
    input: content.ToolListContent,
    output: Answers.list,
    handler: (ctx, input) => content.listContent(ctx, input, { withUrl: true }),
  }),
  tool({
    name: 'get_content_detail',
    title: 'Get a content item',
    annotations: READS,
    description: 'One content item in full: title, url, type, tab, topic, stage, brief, body, meta description, custom fields, version number.',
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
    description: `Per prompt, the selected answers citing one content item and their % of that prompt's answers, most first; ${CITED}`,
    input: content.ToolContentPromptsRequest,
    output: Answers.prompts,
    handler: (ctx, input) => content.contentPrompts(ctx, input),
  }),
  tool({
    name: 'delete_content',
    title: 'Delete a content item',
    annotations: REPLACES,
    description:
      'Delete a content item for good, no undo: its body, brief, versions and custom values are erased; its URL can be tracked again. Check its type first: a generated draft goes too.',
    input: OfItem,
    output: Answers.deleted,
    handler: (ctx, input) => content.deleteContent(ctx, input.content_id, input.website_id),
  }),
];
