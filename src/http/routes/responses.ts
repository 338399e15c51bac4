import { z } from 'zod';
import { ImportResponses } from '../../../commands/responses/import-responses';
import { StartRun } from '../../../commands/responses/start-run';
import { PromptStatusFilter, PromptTypeFilter, ScheduleSelection, SharedFilters } from '../../domain/filters';
import { PageNum, PageSize, queryList, Text } from '../../domain/schemas';
import { routeGroup, Uuid, WebsiteQuery } from '../route';
import { AnswerPage, DateRange, ImportAnswer, RunDetail, RunPage, StartedRun } from '../../../queries/responses/views';
import * as responses from '../../app/responses';

/** GET /responses: the shared filters as query parameters (location_ids travel in the body only, per the spec). */
const ListQuery = z
  .strictObject({
    website_id: Uuid,
    schedule_id: Text.optional(),
    start_date: Text.optional(),
    end_date: Text.optional(),
    models: queryList(z.array(Text)).optional(),
    prompt_ids: queryList(z.array(Text)).optional(),
    competitor_ids: queryList(z.array(Text)).optional(),
    prompt_status: PromptStatusFilter.optional(),
    prompt_type: PromptTypeFilter.optional(),
    location_ids: z.unknown().optional(),
    page_num: PageNum(true),
    page_size: PageSize(true),
  })
  .transform(({ website_id, page_num, page_size, ...filters }, ctx) => {
    if (filters.location_ids !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['location_ids'], message: 'must be sent in the body as filters.location_ids (POST /api/v1/responses)' });
      return z.NEVER;
    }
    const f = SharedFilters.safeParse(Object.fromEntries(Object.entries(filters).filter(([, v]) => v !== undefined)));
    if (!f.success) {
      for (const issue of f.error.issues) ctx.addIssue({ ...issue, code: 'custom', message: issue.message } as never);
      return z.NEVER;
    }
    return { website_id, page_num, page_size, filters: f.data };
  });

const ListBody = z.strictObject({
  website_id: Uuid,
  filters: SharedFilters.optional(),
  page_num: PageNum(),
  page_size: PageSize(),
});

const api = routeGroup({ tag: 'responses' });

export const responseRoutes = [
  api.post('/api/v1/response-streaming/start', {
    summary: "Start a run now: the website's active prompts x the schedule's models (every model for default) x its locations",
    body: StartRun,
    status: 202,
    answer: StartedRun,
    handler: (ctx) => responses.startRun(ctx, ctx.body),
  }),
  api.get('/api/v1/response-streaming/runs/:run_id', {
    summary: 'A run: its status, counts, and why units failed',
    extension: true,
    params: z.object({ run_id: Uuid }),
    query: WebsiteQuery,
    answer: RunDetail,
    handler: (ctx) => responses.getRun(ctx, ctx.query.website_id, ctx.params.run_id),
  }),
  api.get('/api/v1/response-streaming/runs', {
    summary: "The website's runs, newest first",
    extension: true,
    query: WebsiteQuery.extend({ page_num: PageNum(true), page_size: PageSize(true) }),
    answer: RunPage,
    handler: (ctx) => responses.listRuns(ctx, ctx.query.website_id, ctx.query),
  }),
  api.get('/api/v1/responses', {
    summary: 'Answers, newest first, with the brand mention, citation and position and the competitors each mentions',
    query: ListQuery,
    answer: AnswerPage,
    handler: (ctx) => responses.listResponses(ctx, ctx.query.website_id, ctx.query.filters, ctx.query),
  }),
  api.post('/api/v1/responses', {
    summary: 'Answers selected by the shared filters (location_ids included), newest first',
    extension: true,
    body: ListBody,
    answer: AnswerPage,
    handler: (ctx) => responses.listResponses(ctx, ctx.body.website_id, ctx.body.filters ?? {}, ctx.body, 'filters'),
  }),
  api.post('/api/v1/responses/import', {
    summary: 'Import 1 to 1000 answers, all or none; a known external_id is skipped',
    extension: true,
    body: ImportResponses,
    status: 201,
    answer: ImportAnswer,
    handler: (ctx) => responses.importResponses(ctx, ctx.body),
  }),
  api.get('/api/v1/date-range', {
    summary: 'The first and last UTC day with answers for a schedule selection (default when omitted)',
    query: WebsiteQuery.extend({ schedule_id: ScheduleSelection.optional() }),
    answer: DateRange,
    handler: (ctx) => responses.dateRange(ctx, ctx.query.website_id, ctx.query.schedule_id ?? null),
  }),
];
