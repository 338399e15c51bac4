import { z } from 'zod';
import { ImportResponses } from '../../../commands/responses/import-responses';
import { StartRun } from '../../../commands/responses/start-run';
import { ScheduleSelection, ToolSharedFilters } from '../../domain/filters';
import { AnswerPage, DateRange, ImportAnswer, RunDetail, StartedRun } from '../../../queries/responses/views';
import * as responses from '../../app/responses';
import { idOf, PageNum, PageSize, WebsiteId } from '../../domain/schemas';
import { READS, tool, websiteCreate } from '../tool';

/** The answers tools: the same operations as the REST routes (src/app/responses.ts). */
export const responseTools = [
  tool({
    name: 'start_response_run',
    title: 'Start a response run',
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    description:
      "Ask the engines now (costs credits): the website's active prompts go to every model of the schedule at each of its locations. Answers arrive over minutes; poll get_response_run.",
    input: StartRun,
    output: StartedRun,
    handler: (ctx, input) => responses.startRun(ctx, input),
  }),
  tool({
    name: 'get_response_run',
    title: 'Get a response run',
    annotations: READS,
    description:
      'A run: status (running, completed, completed_with_failures, failed), total, recorded, failed and pending units, and why units failed.',
    input: z.strictObject({ website_id: WebsiteId, run_id: idOf('run') }),
    output: RunDetail,
    handler: (ctx, input) => responses.getRun(ctx, input.website_id, input.run_id),
  }),
  tool({
    name: 'list_responses',
    title: 'List AI answers',
    annotations: READS,
    description:
      "The website's AI answers, newest first: the text, whether and where it mentions and cites the brand, the competitors it mentions, its sources. Use to read what the engines said.",
    input: z.strictObject({ website_id: WebsiteId, filters: ToolSharedFilters.optional(), page_num: PageNum(), page_size: PageSize() }),
    output: AnswerPage,
    handler: (ctx, input) => responses.listResponses(ctx, input.website_id, input.filters ?? {}, input, 'filters'),
  }),
  tool({
    name: 'get_date_range',
    title: 'Get the date range of answers',
    annotations: READS,
    description: "The first and last UTC day with answers for a schedule selection ('default' when omitted, or a schedule id).",
    input: z.strictObject({ website_id: WebsiteId, schedule_id: ScheduleSelection.optional() }),
    output: DateRange,
    handler: (ctx, input) => responses.dateRange(ctx, input.website_id, input.schedule_id ?? null),
  }),
  websiteCreate({
    name: 'import_responses',
    title: 'Import AI answers',
    description:
      'Import 1 to 1000 answers collected elsewhere, all or none; an external_id already imported is skipped. They are analyzed like the answers aivis asks for.',
    input: ImportResponses,
    output: ImportAnswer,
    create: responses.importResponses,
  }),
];
