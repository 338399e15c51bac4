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
      "Start a run now: the website's active prompts are asked to every model of the schedule (schedule_id: 'default' or a schedule id; default when omitted) at each of its locations. Answers arrive over the next minutes; poll get_response_run with the run_id.",
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
      'AI answers of a website, newest first: the answer text, whether it mentions and cites the brand and at which position, the competitors it mentions with theirs, and its sources. filters: schedule_id, start_date/end_date (YYYY-MM-DD, ISO timestamps or spelled-out dates; a date end covers the whole day), models, prompt_ids, location_ids, prompt_status, prompt_type, competitor_ids. page_num from 0, page_size 1 to 100 (default 40).',
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
      'Import 1 to 1000 answers (all or none): each {external_id?, prompt_id, model, run_at, text, citations?, location_id?, persona_id?, schedule_id?, products?, observations?}. An external_id already imported is skipped. Imported answers are analyzed like streamed ones.',
    input: ImportResponses,
    output: ImportAnswer,
    create: responses.importResponses,
  }),
];
