import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import { AddCompetitor } from '../../../commands/catalog/add-competitor';
import { CreatePrompt } from '../../../commands/catalog/create-prompt';
import { CreateTopic } from '../../../commands/catalog/create-topic';
import { UpdateCompetitor } from '../../../commands/catalog/update-competitor';
import { UpdatePrompt } from '../../../commands/catalog/update-prompt';
import { badRequest } from '../../app/problem';
import { routeGroup, Uuid, WebsiteQuery } from '../route';
import { Answers } from '../../../queries/catalog/views';
import * as catalog from '../../app/catalog';
import type { Caller } from '../../app/context';

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

/** A side's summary, `extension` and answer, as a route of a group takes them. */
const side = (s: CollectionSide) => ({ summary: s.summary, ...(s.extension && { extension: true }), answer: s.answer });

interface ItemSides<B extends z.ZodType> {
  /** the path parameter: a uuid unless `params` says otherwise */
  id: string;
  params?: z.ZodType;
  patch?: CollectionSide & { body: B; op: (caller: Caller, id: string, input: z.output<B>) => Promise<unknown> };
  remove?: CollectionSide & { op: (caller: Caller, websiteId: string, id: string) => Promise<unknown> };
}

/**
 * A website's collection at one path and tag: GET lists it (`?website_id=`), POST creates one (201 with the new one);
 * `item`: its items' routes (websiteItem) at the same path and tag.
 */
export function websiteCollection<B extends z.ZodType, I extends z.ZodType = z.ZodType>(c: {
  url: string;
  tag: string;
  list: CollectionSide & { op: (caller: Caller, websiteId: string) => Promise<unknown> };
  create: CollectionSide & { body: B; op: (caller: Caller, input: z.output<B>) => Promise<unknown> };
  item?: ItemSides<I>;
}) {
  const api = routeGroup({ tag: c.tag });
  return [
    api.get(c.url, { ...side(c.list), query: WebsiteQuery, handler: (ctx) => c.list.op(ctx, ctx.query.website_id) }),
    api.post(c.url, { ...side(c.create), body: c.create.body, status: 201, handler: (ctx) => c.create.op(ctx, ctx.body as z.output<B>) }),
    ...(c.item ? websiteItem({ url: c.url, tag: c.tag, ...c.item }) : []),
  ];
}

/**
 * One item of a website's collection, `<url>/:<id>`: PATCH changes it (the body names the website) and answers it;
 * DELETE removes it (`?website_id=`, no body).
 */
function websiteItem<B extends z.ZodType>(c: { url: string; tag: string } & ItemSides<B>) {
  const api = routeGroup({ tag: c.tag });
  const url = `${c.url}/:${c.id}`;
  const params = c.params ?? z.object({ [c.id]: Uuid });
  const idOf = (p: unknown) => (p as Record<string, string>)[c.id];
  const { patch, remove } = c;
  return [
    ...(patch
      ? [
          api.patch(url, {
            ...side(patch),
            params,
            body: patch.body,
            handler: (ctx) => patch.op(ctx, idOf(ctx.params), ctx.body as z.output<B>),
          }),
        ]
      : []),
    ...(remove
      ? [
          api.delete(url, {
            ...side(remove),
            params,
            query: WebsiteQuery,
            handler: (ctx) => {
              requireNoBody(ctx.req);
              return remove.op(ctx, ctx.query.website_id, idOf(ctx.params));
            },
          }),
        ]
      : []),
  ];
}

const topics = routeGroup({ tag: 'topics' });
const models = routeGroup({ tag: 'models', extension: true });

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
    item: {
      id: 'competitor_id',
      patch: {
        summary: 'Rename a competitor or replace its identifiers',
        extension: true,
        body: UpdateCompetitor,
        answer: Answers.competitor,
        op: catalog.updateCompetitor,
      },
      remove: { summary: 'Remove a competitor', extension: true, answer: Answers.success, op: catalog.removeCompetitor },
    },
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
  topics.delete('/api/v1/topics/:topic_id', {
    summary: 'Soft-delete a topic; delete_prompts=true also soft-deletes every active prompt in it',
    params: z.object({ topic_id: Uuid }),
    query: z.strictObject({
      website_id: Uuid,
      delete_prompts: z.enum(['true', 'false'], { error: "must be 'true' or 'false'" }).default('false'),
    }),
    answer: Answers.topicDeleted,
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
    item: {
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
    },
  }),

  // models
  models.get('/api/v1/models', {
    summary: 'The model catalogue: the identifiers every models filter accepts',
    answer: Answers.models,
    handler: async () => catalog.listModels(),
  }),
];
