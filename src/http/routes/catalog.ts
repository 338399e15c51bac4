import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import { AddCompetitor } from '../../../commands/catalog/add-competitor';
import { CreatePrompt } from '../../../commands/catalog/create-prompt';
import { CreateTopic } from '../../../commands/catalog/create-topic';
import { UpdateCompetitor } from '../../../commands/catalog/update-competitor';
import { UpdatePrompt } from '../../../commands/catalog/update-prompt';
import { badRequest } from '../errors';
import { route, Uuid } from '../route';
import { catalogOps } from './catalog-ops';

/** `?website_id=` of the website-scoped endpoints; missing gives 400 'website_id is required'. */
export const WebsiteQuery = z.strictObject({ website_id: Uuid });

/** Delete endpoints take no request body (spec): one sent is refused rather than ignored. */
export function requireNoBody(req: FastifyRequest) {
  const length = req.headers['content-length'];
  if ((length !== undefined && length !== '0') || req.headers['transfer-encoding'] !== undefined) {
    throw badRequest('this endpoint takes no request body');
  }
}

const Competitor = z.object({ id: z.string(), name: z.string(), url: z.string(), normalized_url: z.string(), identifiers: z.array(z.string()) });
const Topic = z.object({ id: z.string(), name: z.string() });
const Prompt = z.object({
  id: z.string(),
  text: z.string(),
  topic_id: z.string().nullable(),
  type: z.enum(['branded', 'non_branded']),
  status: z.enum(['active', 'paused']),
  tags: z.array(z.string()),
  created_at: z.string(),
});

export const catalogRoutes = [
  // competitors
  route({
    method: 'GET',
    url: '/api/v1/competitors',
    summary: "The website's competitors",
    tag: 'competitors',
    query: WebsiteQuery,
    responses: { 200: z.object({ competitors: z.array(Competitor) }) },
    handler: (ctx) => catalogOps.listCompetitors(ctx, ctx.query.website_id),
  }),
  route({
    method: 'POST',
    url: '/api/v1/competitors',
    summary: "Add a competitor (not the website's own URL or a page below it)",
    tag: 'competitors',
    extension: true,
    body: AddCompetitor,
    status: 201,
    responses: { 201: z.object({ competitor: Competitor }) },
    handler: (ctx) => catalogOps.addCompetitor(ctx, ctx.body),
  }),
  route({
    method: 'PATCH',
    url: '/api/v1/competitors/:competitor_id',
    summary: "Rename a competitor or replace its identifiers",
    tag: 'competitors',
    extension: true,
    params: z.object({ competitor_id: Uuid }),
    body: UpdateCompetitor,
    responses: { 200: z.object({ competitor: Competitor }) },
    handler: (ctx) => catalogOps.updateCompetitor(ctx, ctx.params.competitor_id, ctx.body),
  }),
  route({
    method: 'DELETE',
    url: '/api/v1/competitors/:competitor_id',
    summary: 'Remove a competitor',
    tag: 'competitors',
    extension: true,
    params: z.object({ competitor_id: Uuid }),
    query: WebsiteQuery,
    responses: { 200: z.object({ success: z.literal(true) }) },
    handler: (ctx) => {
      requireNoBody(ctx.req);
      return catalogOps.removeCompetitor(ctx, ctx.query.website_id, ctx.params.competitor_id);
    },
  }),

  // topics
  route({
    method: 'GET',
    url: '/api/v1/topics',
    summary: "The website's topics (soft-deleted ones left out) with their live prompt counts",
    tag: 'topics',
    extension: true,
    query: WebsiteQuery,
    responses: { 200: z.object({ data: z.array(Topic.extend({ prompt_count: z.number() })) }) },
    handler: (ctx) => catalogOps.listTopics(ctx, ctx.query.website_id),
  }),
  route({
    method: 'POST',
    url: '/api/v1/topics',
    summary: 'Create a topic; a soft-deleted topic of that name (case-insensitive) comes back with its prompt grouping',
    tag: 'topics',
    extension: true,
    body: CreateTopic,
    status: 201,
    responses: { 201: z.object({ topic: Topic, restored: z.boolean() }) },
    handler: (ctx) => catalogOps.createTopic(ctx, ctx.body),
  }),
  route({
    method: 'DELETE',
    url: '/api/v1/topics/:topic_id',
    summary: 'Soft-delete a topic; delete_prompts=true also soft-deletes every active prompt in it',
    tag: 'topics',
    params: z.object({ topic_id: Uuid }),
    query: z.strictObject({
      website_id: Uuid,
      delete_prompts: z.enum(['true', 'false'], { error: "must be 'true' or 'false'" }).default('false'),
    }),
    responses: { 200: z.object({ success: z.literal(true), name: z.string(), deleted_prompt_count: z.number().int() }) },
    handler: (ctx) => {
      requireNoBody(ctx.req);
      return catalogOps.deleteTopic(ctx, ctx.query.website_id, ctx.params.topic_id, ctx.query.delete_prompts === 'true');
    },
  }),

  // prompts
  route({
    method: 'GET',
    url: '/api/v1/prompts',
    summary: "The website's prompts, active and paused (soft-deleted ones left out)",
    tag: 'prompts',
    query: WebsiteQuery,
    responses: { 200: z.object({ data: z.array(Prompt) }) },
    handler: (ctx) => catalogOps.listPrompts(ctx, ctx.query.website_id),
  }),
  route({
    method: 'POST',
    url: '/api/v1/prompts',
    summary: 'Create a prompt',
    tag: 'prompts',
    extension: true,
    body: CreatePrompt,
    status: 201,
    responses: { 201: z.object({ prompt: Prompt }) },
    handler: (ctx) => catalogOps.createPrompt(ctx, ctx.body),
  }),
  route({
    method: 'PATCH',
    url: '/api/v1/prompts/:prompt_id',
    summary: "Change a prompt's text, topic, type, status or tags",
    tag: 'prompts',
    extension: true,
    params: z.object({ prompt_id: Uuid }),
    body: UpdatePrompt,
    responses: { 200: z.object({ prompt: Prompt }) },
    handler: (ctx) => catalogOps.updatePrompt(ctx, ctx.params.prompt_id, ctx.body),
  }),
  route({
    method: 'DELETE',
    url: '/api/v1/prompts/:prompt_id',
    summary: 'Delete a prompt: soft when it already has answers (history kept), hard otherwise',
    tag: 'prompts',
    params: z.object({ prompt_id: Uuid }),
    query: WebsiteQuery,
    responses: { 200: z.object({ success: z.literal(true), soft_deleted: z.boolean() }) },
    handler: (ctx) => {
      requireNoBody(ctx.req);
      return catalogOps.deletePrompt(ctx, ctx.query.website_id, ctx.params.prompt_id);
    },
  }),

  // models
  route({
    method: 'GET',
    url: '/api/v1/models',
    summary: 'The model catalogue: the identifiers every models filter accepts',
    tag: 'models',
    extension: true,
    responses: { 200: z.object({ data: z.array(z.object({ id: z.string(), label: z.string(), shopping: z.boolean() })) }) },
    handler: async () => catalogOps.listModels(),
  }),
];
