import { z } from 'zod';
import { catalogue } from '../../src/domain/events';

/** The answers and runs read models' rows as the API answers them: the one description each. */

export const Source = z.object({ url: z.string(), root_domain: z.string(), normalized_url: z.string(), suffix: z.string() });

/** An answer (rm_responses) with what analysis derives from it for the website's current brand and competitors. */
export const Answer = z.object({
  id: z.string(),
  website_id: z.string(),
  prompt_id: z.string(),
  prompt: z.string().nullable(),
  model: z.string(),
  response: z.string(),
  mentioned: z.boolean(),
  cited: z.boolean(),
  position: z.number().int().nullable(),
  created_at: z.string(),
  sources: z.array(Source),
  competitors: z.array(z.object({ id: z.string(), name: z.string(), url: z.string().nullable(), position: z.number().int() })),
  schedule: z.string(),
  // as recorded (ResponseRecorded)
  ...catalogue.ResponseRecorded.pick({ location_id: true, persona_id: true, run_id: true, external_id: true, citations: true }).shape,
  products: z.array(z.record(z.string(), z.unknown())),
  /** the pages the engine read or was given, one per normalized URL; its cited sources count as retrieved */
  retrieved: z.array(z.object({ url: z.string(), normalized_url: z.string(), cited: z.boolean() })),
  /** the queries the engine searched */
  search_queries: z.array(z.string()),
  /** which sample of its run's (prompt, model, location, persona) it is: 0 to the schedule's samples_per_prompt - 1 */
  sample_index: z.number().int(),
});
export type Answer = z.infer<typeof Answer>;
export const AnswerPage = z.object({ responses: z.array(Answer), page_num: z.number(), page_size: z.number(), has_more: z.boolean() });
export type AnswerPage = z.infer<typeof AnswerPage>;

/** A run (rm_runs) as listed. */
export const Run = z.object({
  run_id: z.string(),
  website_id: z.string(),
  schedule: z.string(),
  trigger: z.string(),
  day: z.string(),
  models: z.array(z.string()),
  status: z.enum(['running', 'completed', 'completed_with_failures', 'failed']),
  total: z.number(),
  recorded: z.number(),
  failed: z.number(),
  pending: z.number(),
  started_at: z.string(),
  finished_at: z.string().nullable(),
});
export type Run = z.infer<typeof Run>;
export const RunStatus = Run.shape.status;
export type RunStatus = z.infer<typeof RunStatus>;

/** One run with why its failed units failed (rm_run_units). */
export const RunDetail = Run.extend({
  failures: z.array(
    z.object({
      request_id: z.string(),
      prompt_id: z.string(),
      model: z.string(),
      location_id: z.string().nullable(),
      error_kind: z.string(),
      error: z.string(),
      attempts: z.number().nullable(),
    }),
  ),
});
export type RunDetail = z.infer<typeof RunDetail>;
export const RunPage = z.object({ data: z.array(Run), page_num: z.number(), page_size: z.number(), has_more: z.boolean() });
export type RunPage = z.infer<typeof RunPage>;

/** A run just started: what it asks, and where to follow it. */
export const StartedRun = z.object({
  run_id: z.string(),
  status: z.literal('running'),
  schedule: z.string(),
  day: z.string(),
  models: z.array(z.string()),
  total: z.number(),
  status_url: z.string(),
});

export const DateRange = z.object({ start_date: z.string().nullable(), end_date: z.string().nullable(), schedule: z.string() });
export type DateRange = z.infer<typeof DateRange>;

export const ImportAnswer = z.object({ imported: z.number(), skipped: z.number(), response_ids: z.array(z.string()) });
