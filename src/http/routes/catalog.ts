import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import { AddCompetitor } from '../../../commands/catalog/add-competitor';
import { CreatePrompt } from '../../../commands/catalog/create-prompt';
import { CreateTopic } from '../../../commands/catalog/create-topic';
import { UpdateCompetitor } from '../../../commands/catalog/update-competitor';
import { UpdatePrompt } from '../../../commands/catalog/update-prompt';
import { badRequest } from '../errors';
import { route, Uuid } from '../route';
import { Answers } from '../../../queries/catalog/views';
import * as catalog from '../../app/catalog';

/** `?website_id=` of the website-scoped endpoints; missing gives 400 'website_id is required'. */
export const WebsiteQuery = z.strictObject({ website_id: Uuid });

/** Delete endpoints take no request body (spec): one sent is refused rather than ignored. */
export function requireNoBody(req: FastifyRequest) {
  const length = req.headers['content-length'];
  if ((length !== undefined && length !== '0') || req.headers['transfer-encoding'] !== undefined) {
    throw badRequest('this endpoint takes no request body');
  }
}

export const catalogRoutes = [
  // competitors
  route({
    method: 'GET',
    url: '/api/v1/competitors',
    summary: "The website's competitors",
    tag: 'competitors',
    query: WebsiteQuery,
    responses: { 200: Answers.competitors },
    handler: (ctx) => catalog.listCompetitors(ctx, ctx.query.website_id),
  }),
  route({
    method: 'POST',
    url: '/api/v1/competitors',
    summary: "Add a competitor (not the website's own URL or a page below it)",
    tag: 'competitors',
    extension: true,
    body: AddCompetitor,
    status: 201,
    responses: { 201: Answers.competitor },
    handler: (ctx) => catalog.addCompetitor(ctx, ctx.body),
  }),
  route({
    method: 'PATCH',
    url: '/api/v1/competitors/:competitor_id',
    summary: 'Rename a competitor or replace its identifiers',
    tag: 'competitors',
    extension: true,
    params: z.object({ competitor_id: Uuid }),
    body: UpdateCompetitor,
    responses: { 200: Answers.competitor },
    handler: (ctx) => catalog.updateCompetitor(ctx, ctx.params.competitor_id, ctx.body),
  }),
  route({
    method: 'DELETE',
    url: '/api/v1/competitors/:competitor_id',
    summary: 'Remove a competitor',
    tag: 'competitors',
    extension: true,
    params: z.object({ competitor_id: Uuid }),
    query: WebsiteQuery,
    responses: { 200: Answers.success },
    handler: (ctx) => {
      requireNoBody(ctx.req);
      return catalog.removeCompetitor(ctx, ctx.query.website_id, ctx.params.competitor_id);
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
    responses: { 200: Answers.topics },
    handler: (ctx) => catalog.listTopics(ctx, ctx.query.website_id),
  }),
  route({
    method: 'POST',
    url: '/api/v1/topics',
    summary: 'Create a topic; a soft-deleted topic of that name (case-insensitive) comes back with its prompt grouping',
    tag: 'topics',
    extension: true,
    body: CreateTopic,
    status: 201,
    responses: { 201: Answers.topicCreated },
    handler: (ctx) => catalog.createTopic(ctx, ctx.body),
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
    responses: { 200: Answers.topicDeleted },
    handler: (ctx) => {
      requireNoBody(ctx.req);
      return catalog.deleteTopic(ctx, {
        website_id: ctx.query.website_id,
        topic_id: ctx.params.topic_id,
        delete_prompts: ctx.query.delete_prompts === 'true',
      });
    },
  }),

  // prompts
  route({
    method: 'GET',
    url: '/api/v1/prompts',
    summary: "The website's prompts, active and paused (soft-deleted ones left out)",
    tag: 'prompts',
    query: WebsiteQuery,
    responses: { 200: Answers.prompts },
    handler: (ctx) => catalog.listPrompts(ctx, ctx.query.website_id),
  }),
  route({
    method: 'POST',
    url: '/api/v1/prompts',
    summary: 'Create a prompt',
    tag: 'prompts',
    extension: true,
    body: CreatePrompt,
    status: 201,
    responses: { 201: Answers.prompt },
    handler: (ctx) => catalog.createPrompt(ctx, ctx.body),
  }),
  route({
    method: 'PATCH',
    url: '/api/v1/prompts/:prompt_id',
    summary: "Change a prompt's text, topic, type, status or tags",
    tag: 'prompts',
    extension: true,
    params: z.object({ prompt_id: Uuid }),
    body: UpdatePrompt,
    responses: { 200: Answers.prompt },
    handler: (ctx) => catalog.updatePrompt(ctx, ctx.params.prompt_id, ctx.body),
  }),
  route({
    method: 'DELETE',
    url: '/api/v1/prompts/:prompt_id',
    summary: 'Delete a prompt: soft when it already has answers (history kept), hard otherwise',
    tag: 'prompts',
    params: z.object({ prompt_id: Uuid }),
    query: WebsiteQuery,
    responses: { 200: Answers.promptDeleted },
    handler: (ctx) => {
      requireNoBody(ctx.req);
      return catalog.deletePrompt(ctx, ctx.query.website_id, ctx.params.prompt_id);
    },
  }),

  // models
  route({
    method: 'GET',
    url: '/api/v1/models',
    summary: 'The model catalogue: the identifiers every models filter accepts',
    tag: 'models',
    extension: true,
    responses: { 200: Answers.models },
    handler: async () => catalog.listModels(),
  }),
];
