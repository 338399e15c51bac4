import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import { AddCompetitor } from '../../../commands/catalog/add-competitor';
import { CreatePrompt } from '../../../commands/catalog/create-prompt';
import { CreateTopic } from '../../../commands/catalog/create-topic';
import { UpdateCompetitor } from '../../../commands/catalog/update-competitor';
import { UpdatePrompt } from '../../../commands/catalog/update-prompt';
import { badRequest } from '../../app/problem';
import { route, Uuid } from '../route';
import { Answers } from '../../../queries/catalog/views';
import * as catalog from '../../app/catalog';
import type { Caller } from '../../app/context';

/** `?website_id=` of the website-scoped endpoints; missing gives 400 'website_id is required'. */
export const WebsiteQuery = z.strictObject({ website_id: Uuid });

/** Delete endpoints take no request body (spec): one sent is refused rather than ignored. */
export function requireNoBody(req: FastifyRequest) {
  const length = req.headers['content-length'];
  if ((length !== undefined && length !== '0') || req.headers['transfer-encoding'] !== undefined) {
    throw badRequest('this endpoint takes no request body');
  }
}

interface CollectionSide {
  summary: string;
  /** not in the spec: tagged `extension` in the OpenAPI document */
  extension?: boolean;
  answer: z.ZodType;
}

/**
 * A website's collection at one path and tag: GET lists it (`?website_id=`), POST creates one (201 with the new one).
 */
export function websiteCollection<B extends z.ZodType>(c: {
  url: string;
  tag: string;
  list: CollectionSide & { op: (caller: Caller, websiteId: string) => Promise<unknown> };
  create: CollectionSide & { body: B; op: (caller: Caller, input: z.output<B>) => Promise<unknown> };
}) {
  const side = (s: CollectionSide) => ({ summary: s.summary, tag: c.tag, ...(s.extension && { extension: true }) });
  return [
    route({
      method: 'GET',
      url: c.url,
      ...side(c.list),
      query: WebsiteQuery,
      responses: { 200: c.list.answer },
      handler: (ctx) => c.list.op(ctx, ctx.query.website_id),
    }),
    route({
      method: 'POST',
      url: c.url,
      ...side(c.create),
      body: c.create.body,
      status: 201,
      responses: { 201: c.create.answer },
      handler: (ctx) => c.create.op(ctx, ctx.body as z.output<B>),
    }),
  ];
}

/**
 * One item of a website's collection, `<url>/:<id>`: PATCH changes it (the body names the website) and answers it;
 * DELETE removes it (`?website_id=`, no body).
 */
export function websiteItem<B extends z.ZodType>(c: {
  url: string;
  tag: string;
  /** the path parameter: a uuid unless `params` says otherwise */
  id: string;
  params?: z.ZodType;
  patch?: CollectionSide & { body: B; op: (caller: Caller, id: string, input: z.output<B>) => Promise<unknown> };
  remove?: CollectionSide & { op: (caller: Caller, websiteId: string, id: string) => Promise<unknown> };
}) {
  const side = (s: CollectionSide) => ({ summary: s.summary, tag: c.tag, ...(s.extension && { extension: true }) });
  const url = `${c.url}/:${c.id}`;
  const params = c.params ?? z.object({ [c.id]: Uuid });
  const idOf = (p: unknown) => (p as Record<string, string>)[c.id];
  const { patch, remove } = c;
  return [
    ...(patch
      ? [
          route({
            method: 'PATCH',
            url,
            ...side(patch),
            params,
            body: patch.body,
            responses: { 200: patch.answer },
            handler: (ctx) => patch.op(ctx, idOf(ctx.params), ctx.body as z.output<B>),
          }),
        ]
      : []),
    ...(remove
      ? [
          route({
            method: 'DELETE',
            url,
            ...side(remove),
            params,
            query: WebsiteQuery,
            responses: { 200: remove.answer },
            handler: (ctx) => {
              requireNoBody(ctx.req);
              return remove.op(ctx, ctx.query.website_id, idOf(ctx.params));
            },
          }),
        ]
      : []),
  ];
}

export const catalogRoutes = [
  // competitors
  ...websiteCollection({
    url: '/api/v1/competitors',
    tag: 'competitors',
    list: { summary: "The website's competitors", answer: Answers.competitors, op: catalog.listCompetitors },
    create: {
      summary: "Add a competitor (not the website's own URL or a page below it)",
      extension: true,
      body: AddCompetitor,
      answer: Answers.competitor,
      op: catalog.addCompetitor,
    },
  }),
  ...websiteItem({
    url: '/api/v1/competitors',
    tag: 'competitors',
    id: 'competitor_id',
    patch: {
      summary: 'Rename a competitor or replace its identifiers',
      extension: true,
      body: UpdateCompetitor,
      answer: Answers.competitor,
      op: catalog.updateCompetitor,
    },
    remove: { summary: 'Remove a competitor', extension: true, answer: Answers.success, op: catalog.removeCompetitor },
  }),

  // topics
  ...websiteCollection({
    url: '/api/v1/topics',
    tag: 'topics',
    list: {
      summary: "The website's topics (soft-deleted ones left out) with their live prompt counts",
      extension: true,
      answer: Answers.topics,
      op: catalog.listTopics,
    },
    create: {
      summary: 'Create a topic; a soft-deleted topic of that name (case-insensitive) comes back with its prompt grouping',
      extension: true,
      body: CreateTopic,
      answer: Answers.topicCreated,
      op: catalog.createTopic,
    },
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
  ...websiteCollection({
    url: '/api/v1/prompts',
    tag: 'prompts',
    list: { summary: "The website's prompts, active and paused (soft-deleted ones left out)", answer: Answers.prompts, op: catalog.listPrompts },
    create: { summary: 'Create a prompt', extension: true, body: CreatePrompt, answer: Answers.prompt, op: catalog.createPrompt },
  }),
  ...websiteItem({
    url: '/api/v1/prompts',
    tag: 'prompts',
    id: 'prompt_id',
    patch: {
      summary: "Change a prompt's text, topic, type, status or tags",
      extension: true,
      body: UpdatePrompt,
      answer: Answers.prompt,
      op: catalog.updatePrompt,
    },
    remove: {
      summary: 'Delete a prompt: soft when it already has answers (history kept), hard otherwise',
      answer: Answers.promptDeleted,
      op: catalog.deletePrompt,
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
