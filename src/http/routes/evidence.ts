import { Readable } from 'node:stream';
import { stringify } from 'csv-stringify';
import { z } from 'zod';
import { Answer } from '../../../queries/responses/views';
import { SearchQueryList, SourcePage } from '../../../queries/evidence/views';
import * as evidence from '../../app/evidence';
import { filterDateSchema } from '../../domain/dates';
import { endNotBeforeStart, ModelList } from '../../domain/filters';
import { PageNum, PageSize, queryList, Text } from '../../domain/schemas';
import { routeGroup, Uuid } from '../route';

const api = routeGroup({ tag: 'answer evidence', extension: true });

export const SourcesQuery = z
  .strictObject({
    website_id: Uuid,
    start_date: filterDateSchema('start').optional(),
    end_date: filterDateSchema('end').optional(),
    models: queryList(ModelList).optional(),
    group_by: z.enum(['domain', 'url'], { error: "must be 'domain' or 'url'" }).default('domain'),
    page_num: PageNum(true),
    page_size: PageSize(true),
  })
  .superRefine(endNotBeforeStart);

export const SearchQueriesQuery = z
  .strictObject({
    website_id: Uuid,
    start_date: filterDateSchema('start').optional(),
    end_date: filterDateSchema('end').optional(),
    prompt_id: Uuid.optional(),
  })
  .superRefine(endNotBeforeStart);

export const MAX_EXPORT = 100_000;
export const ExportQuery = z.strictObject({
  website_id: Uuid,
  format: z.enum(['ndjson', 'csv'], { error: "must be 'ndjson' or 'csv'" }).default('ndjson'),
  after: Text.optional().describe('The x-next-cursor of the previous call: only answers recorded or re-derived since'),
  limit: PageSize(true, MAX_EXPORT, 10_000).describe(`Answers at most, 1 to ${MAX_EXPORT} (default 10000)`),
});

/** The CSV columns: the answers listing's keys, in its order. */
const COLUMNS = Object.keys(Answer.shape);
const cell = (v: unknown) => (v === null || v === undefined ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v));

async function* csvRows(answers: AsyncIterable<Answer>) {
  for await (const a of answers) yield COLUMNS.map((k) => cell((a as Record<string, unknown>)[k]));
}

export const evidenceRoutes = [
  api.get('/api/v1/sources', {
    summary:
      'Per domain or URL: answers that retrieved it, answers that cited it, cited_when_retrieved, and the entity it belongs to (whole UTC days)',
    query: SourcesQuery,
    answer: SourcePage,
    handler: (ctx) => {
      const { website_id, start_date, end_date, models, group_by, page_num, page_size } = ctx.query;
      return evidence.getSources(ctx, { website_id, start: start_date, end: end_date, models, groupBy: group_by }, { page_num, page_size });
    },
  }),
  api.get('/api/v1/search-queries', {
    summary: 'The queries the engines searched, compared case-insensitively, most answers first',
    query: SearchQueriesQuery,
    answer: SearchQueryList,
    handler: (ctx) => {
      const { website_id, start_date, end_date, prompt_id } = ctx.query;
      return evidence.getSearchQueries(ctx, { website_id, start: start_date, end: end_date, promptId: prompt_id });
    },
  }),
  api.get('/api/v1/responses/export', {
    summary:
      'Every answer as the listing shows it, NDJSON or CSV, streamed in a stable order; x-next-cursor is the after of the next call (answers recorded or re-derived since)',
    query: ExportQuery,
    handler: async (ctx) => {
      const { website_id, format, after, limit } = ctx.query;
      const out = await evidence.exportResponses(ctx, website_id, evidence.parseCursor(after), limit);
      const next = out.next;
      const body = format === 'csv' ? Readable.from(csvRows(out.answers())).pipe(stringify({ header: true, columns: COLUMNS })) : await out.ndjson();
      ctx.reply
        .code(200)
        .header('x-next-cursor', next)
        .header('content-type', format === 'csv' ? 'text/csv; charset=utf-8' : 'application/x-ndjson; charset=utf-8');
      return ctx.reply.send(body);
    },
  }),
];
