import { z } from 'zod';
import { UpdateContent } from '../../../commands/content/item-commands';
import { CreateColumn, CreateSheet } from '../../../commands/content/sheets';
import { TrackContent } from '../../../commands/content/track';
import { Answers } from '../../../queries/content/views';
import * as content from '../../app/content';
import { route, Uuid } from '../route';
import { requireNoBody, websiteCollection } from './catalog';
import { contentPipelineRoutes, ItemParams, ItemQuery, itemRead } from './content-pipeline';

/** The content hub (spec: content endpoints; CONTRACT.md, Content hub): thin routes over src/app/content.ts. */
export const contentRoutes = [
  route({
    method: 'POST',
    url: '/api/v1/content',
    summary: 'Tracked content with citation figures over the answers the shared filters select (citations joined by normalized URL)',
    tag: 'content',
    body: content.ListContent,
    responses: { 200: Answers.list },
    handler: (ctx) => content.listContent(ctx, ctx.body),
  }),
  route({
    method: 'POST',
    url: '/api/v1/content/prompts',
    summary: "One item's citations per prompt over the selected answers",
    tag: 'content',
    body: content.ContentPromptsRequest,
    responses: { 200: Answers.prompts },
    handler: (ctx) => content.contentPrompts(ctx, ctx.body),
  }),
  route({
    method: 'POST',
    url: '/api/v1/content/track',
    summary: 'Track pages by URL (1 to 500): idempotent per URL, duplicates collapse, custom fields all or nothing; no credit cost',
    tag: 'content',
    body: TrackContent,
    responses: { 200: Answers.track },
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
  route({
    method: 'POST',
    url: '/api/v1/content/sheets/:sheet_id/columns',
    summary: 'Add a customer column to a sheet: text, link, number, date, checkbox, multi_select or generated',
    tag: 'content',
    extension: true,
    params: z.object({ sheet_id: Uuid }),
    body: CreateColumn,
    status: 201,
    responses: { 201: Answers.column },
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
  route({
    method: 'PATCH',
    url: '/api/v1/content/:content_id',
    summary: 'Change the title (the only field this endpoint changes)',
    tag: 'content',
    params: ItemParams,
    body: UpdateContent,
    responses: { 200: Answers.item },
    handler: (ctx) => content.updateContent(ctx, ctx.params.content_id, ctx.body),
  }),
  route({
    method: 'DELETE',
    url: '/api/v1/content/:content_id',
    summary: 'Delete a content item physically: its body, brief, versions and custom values are erased; no undo',
    tag: 'content',
    params: ItemParams,
    query: ItemQuery,
    responses: { 200: Answers.deleted },
    handler: (ctx) => {
      requireNoBody(ctx.req);
      return content.deleteContent(ctx, ctx.params.content_id, ctx.query.website_id);
    },
  }),
  ...contentPipelineRoutes,
];
