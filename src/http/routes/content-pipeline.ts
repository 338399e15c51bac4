import { z } from 'zod';
import { EditContent } from '../../../commands/content/edit-content';
import { GenerateContent } from '../../../commands/content/generate-content';
import { PublishContent } from '../../../commands/content/publish-content';
import { ReviseContent } from '../../../commands/content/revise-content';
import { PipelineAnswers } from '../../../queries/content/versions';
import type { Caller } from '../../app/context';
import * as pipeline from '../../app/content-pipeline';
import { type RouteContext, routeGroup, Uuid } from '../route';

/** The content hub's routes, here and in content.ts. */
export const contentApi = routeGroup({ tag: 'content' });

/** `website_id` may be sent on every item endpoint (query on GET, body on POST): the content id decides the website. */
export const ItemQuery = z.strictObject({ website_id: Uuid.optional() });
export const ItemParams = z.object({ content_id: Uuid });
const withWebsite = { website_id: Uuid.optional() };

/** A POST changing one item: its body may also carry website_id, handed to the operation apart from the rest. */
function itemChange<B extends z.ZodObject>(
  def: { url: string; summary: string; body: B; answer: z.ZodType },
  op: (c: RouteContext<z.ZodObject, undefined, typeof ItemParams>, contentId: string, input: z.output<B>, websiteId?: string) => Promise<unknown>,
) {
  return contentApi.post(def.url, {
    summary: def.summary,
    params: ItemParams,
    body: def.body.extend(withWebsite),
    answer: def.answer,
    handler: (ctx) => {
      const { website_id, ...input } = ctx.body as { website_id?: string };
      return op(ctx, ctx.params.content_id, input as z.output<B>, website_id);
    },
  });
}

/** A GET of one item: website_id may be in its query, handed to the operation with the content id (which decides the website). */
export function itemRead(
  def: { url: string; summary: string; extension?: boolean; answer: z.ZodType },
  op: (c: Caller, contentId: string, websiteId?: string) => Promise<unknown>,
) {
  return contentApi.get(def.url, {
    summary: def.summary,
    ...(def.extension && { extension: true }),
    params: ItemParams,
    query: ItemQuery,
    answer: def.answer,
    handler: (ctx) => op(ctx, ctx.params.content_id, ctx.query.website_id),
  });
}

/** The content pipeline (CONTRACT.md, Content hub): generation, brief approval, status, publish, edit, revise, versions. */
export const contentPipelineRoutes = [
  contentApi.post('/api/v1/content/generate', {
    summary: 'Generate content (generated, optimize, snipe, slice) as a job: 202 with its id, status running and its first stage',
    body: GenerateContent,
    status: 202,
    answer: PipelineAnswers.generated,
    handler: (ctx) => pipeline.generateContent(ctx, ctx.body),
  }),
  contentApi.post('/api/v1/content/:content_id/brief/approve', {
    summary: 'Approve a generated brief: the article is written next (stage pending_article)',
    extension: true,
    params: ItemParams,
    body: z.strictObject(withWebsite),
    answer: PipelineAnswers.approved,
    handler: (ctx) => pipeline.approveContentBrief(ctx, ctx.params.content_id, ctx.body.website_id),
  }),
  itemRead(
    {
      url: '/api/v1/content/:content_id/status',
      summary: "The item's pipeline status (running, succeeded, failed; null before any generation) and stage",
      answer: PipelineAnswers.status,
    },
    pipeline.contentStatus,
  ),
  itemChange(
    {
      url: '/api/v1/content/:content_id/publish',
      summary: 'Mark content published at its live URL (the citation join key from then on); 409 with the reason when it is not finished',
      body: PublishContent,
      answer: PipelineAnswers.published,
    },
    pipeline.publish,
  ),
  itemChange(
    {
      url: '/api/v1/content/:content_id/edit',
      summary: 'Exact replacements (1 to 20 {find, replace}, each find matching the current body once), one new version',
      body: EditContent,
      answer: PipelineAnswers.edited,
    },
    pipeline.edit,
  ),
  itemChange(
    {
      url: '/api/v1/content/:content_id/revise',
      summary: 'Rewrite the draft by instruction through the writer; 500 when it keeps returning a fragment (the draft unchanged)',
      body: ReviseContent,
      answer: PipelineAnswers.revised,
    },
    pipeline.revise,
  ),
  itemRead(
    {
      url: '/api/v1/content/:content_id/versions',
      summary: "The item's versions, newest first: number, label and change type",
      extension: true,
      answer: PipelineAnswers.versions,
    },
    pipeline.versions,
  ),
  contentApi.get('/api/v1/content/:content_id/versions/:version_id', {
    summary: 'One version of the item: its body, brief and meta description as they were then',
    params: z.object({ content_id: Uuid, version_id: Uuid }),
    query: ItemQuery,
    answer: PipelineAnswers.version,
    handler: (ctx) => pipeline.version(ctx, ctx.params.content_id, ctx.params.version_id, ctx.query.website_id),
  }),
];
