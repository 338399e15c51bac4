import { z } from 'zod';
import { UpdateContent } from '../../../commands/content/item-commands';
import { CreateColumn, CreateSheet } from '../../../commands/content/sheets';
import { TrackContent } from '../../../commands/content/track';
import { Answers } from '../../../queries/content/views';
import * as content from '../../app/content';
import { Uuid } from '../route';
import { requireNoBody, websiteCollection } from './catalog';
import { contentApi, contentPipelineRoutes, ItemParams, ItemQuery, itemRead } from './content-pipeline';

/** The content hub (spec: content endpoints; CONTRACT.md, Content hub): thin routes over src/app/content.ts. */
export const contentRoutes = [
  contentApi.post('/api/v1/content', {
    summary: 'Tracked content with citation figures over the answers the shared filters select (citations joined by normalized URL)',
    body: content.ListContent,
    answer: Answers.list,
    handler: (ctx) => content.listContent(ctx, ctx.body),
  }),
  contentApi.post('/api/v1/content/prompts', {
    summary: "One item's citations per prompt over the selected answers",
    body: content.ContentPromptsRequest,
    answer: Answers.prompts,
    handler: (ctx) => content.contentPrompts(ctx, ctx.body),
  }),
  contentApi.post('/api/v1/content/track', {
    summary: 'Track pages by URL (1 to 500): idempotent per URL, duplicates collapse, custom fields all or nothing; no credit cost',
    body: TrackContent,
    answer: Answers.track,
    handler: (ctx) => content.trackContent(ctx, ctx.body),
  }),
  ...websiteCollection({
    url: '/api/v1/content/sheets',
    tag: 'content',
    list: {
      summary: "The website's content hub tabs (sheets and views) with their customer columns",
      extension: true,
      answer: Answers.sheets,
      op: content.listSheets,
    },
    create: {
      summary: 'Create a tab: a sheet (default) or a view (tracking into a view goes to the shared pool)',
      extension: true,
      body: CreateSheet,
      answer: Answers.sheet,
      op: content.createSheet,
    },
  }),
  contentApi.post('/api/v1/content/sheets/:sheet_id/columns', {
    summary: 'Add a customer column to a sheet: text, link, number, date, checkbox, multi_select or generated',
    extension: true,
    params: z.object({ sheet_id: Uuid }),
    body: CreateColumn,
    status: 201,
    answer: Answers.column,
    handler: (ctx) => content.createColumn(ctx, ctx.params.sheet_id, ctx.body),
  }),
  itemRead(
    {
      url: '/api/v1/content/:content_id',
      summary: 'A content item: its URL, type, stage, brief, body, fields and timestamps',
      extension: true,
      answer: Answers.item,
    },
    content.getContent,
  ),
  contentApi.patch('/api/v1/content/:content_id', {
    summary: 'Change the title (the only field this endpoint changes)',
    params: ItemParams,
    body: UpdateContent,
    answer: Answers.item,
    handler: (ctx) => content.updateContent(ctx, ctx.params.content_id, ctx.body),
  }),
  contentApi.delete('/api/v1/content/:content_id', {
    summary: 'Delete a content item physically: its body, brief, versions and custom values are erased; no undo',
    params: ItemParams,
    query: ItemQuery,
    answer: Answers.deleted,
    handler: (ctx) => {
      requireNoBody(ctx.req);
      return content.deleteContent(ctx, ctx.params.content_id, ctx.query.website_id);
    },
  }),
  ...contentPipelineRoutes,
];
