import { z } from 'zod';
import { filterDateSchema, toolDateSchema } from './dates';
import { isUuid } from './ids';
import { MODEL_COUNT, modelIdSchema } from './models';
import { text, Uuid } from './schemas';

/**
 * The shared filters object of metric-style requests (spec, "Shared filters object"), validated field by field with
 * messages that name the field. Dates come out as instants; a schedule selection as null (`default`, alias `manual`)
 * or a schedule id. REST takes ISO dates (a plain date is a whole UTC day); MCP tools also take spelled-out dates.
 */

/** `default` (alias `manual`) or a custom schedule's id; null = default. Never a combination. */
export const ScheduleSelection = text("must be 'default' or a schedule id (UUID)")
  .refine((s) => s === 'default' || s === 'manual' || isUuid(s), "must be 'default' or a schedule id (UUID)")
  .transform((s): string | null => (s === 'default' || s === 'manual' ? null : s.toLowerCase()))
  .meta({ type: 'string', description: "'default' (alias 'manual') or a schedule id" });

/** The selection value answers carry in their `schedule` field. */
export const scheduleValue = (scheduleId: string | null) => scheduleId ?? 'default';

export const Ids = (max: number) => z.array(Uuid, { error: 'must be an array of UUIDs' }).max(max, `must have at most ${max} items`);
export const ModelList = z
  .array(modelIdSchema, { error: 'must be an array of model identifiers' })
  .max(MODEL_COUNT, `must have at most ${MODEL_COUNT} items`);
export const PromptStatusFilter = z.enum(['active', 'paused'], { error: "must be 'active' or 'paused'" });
export const PromptTypeFilter = z.enum(['branded', 'non_branded'], { error: "must be 'branded' or 'non_branded'" });

export const MAX_FILTER_PROMPTS = 1000;
export const MAX_FILTER_LOCATIONS = 100;
export const MAX_FILTER_COMPETITORS = 100;

function filterFields(date: (side: 'start' | 'end') => z.ZodType<Date, string>) {
  return {
    schedule_id: ScheduleSelection.optional(),
    saved_view_id: Uuid.optional().describe(
      "Applies this saved view of the website; a filter sent beside it replaces the view's value for that field",
    ),
    start_date: date('start').optional(),
    end_date: date('end').optional(),
    models: ModelList.optional().describe(`Only answers of these model identifiers (at most ${MODEL_COUNT}); omitted = every model`),
    prompt_ids: Ids(MAX_FILTER_PROMPTS).optional().describe(`Only answers to these prompts (at most ${MAX_FILTER_PROMPTS}); omitted = every prompt`),
    location_ids: Ids(MAX_FILTER_LOCATIONS)
      .optional()
      .describe(`Only answers asked from these locations (ids from the locations listing; at most ${MAX_FILTER_LOCATIONS}, an array even for one)`),
    prompt_status: PromptStatusFilter.optional().describe(
      "Only prompts with this status, 'active' or 'paused'; omitted = both (a saved view counts active prompts only)",
    ),
    prompt_type: PromptTypeFilter.optional().describe("Only prompts of this type, 'branded' or 'non_branded'; omitted = both"),
    competitor_ids: Ids(MAX_FILTER_COMPETITORS)
      .optional()
      .describe(`The competitors to report beside the brand (at most ${MAX_FILTER_COMPETITORS}); omitted = every competitor`),
  };
}

/** An end before its start is refused naming end_date; a date that failed its own check is left to that check. */
export const endNotBeforeStart = (f: { start_date?: Date; end_date?: Date }, ctx: z.RefinementCtx) => {
  // a date that failed its own check is still its input string here: nothing to compare
  if (f.start_date instanceof Date && f.end_date instanceof Date && f.end_date.getTime() < f.start_date.getTime()) {
    ctx.addIssue({ code: 'custom', path: ['end_date'], message: `is before start_date (${f.start_date.toISOString()})` });
  }
};

/** A range kept as text (a saved view's start_date and end_date), checked as the metric reads will parse it. */
export const StoredDateRange = z
  .object({ start_date: filterDateSchema('start').optional(), end_date: filterDateSchema('end').optional() })
  .superRefine(endNotBeforeStart);

const SHARED_FILTERS = 'Which answers count (the shared filters object); unknown keys are refused. Omitted: every answer of the default schedule';
const OBSERVATION_FILTERS =
  'Which answers count: the shared filters without competitor_ids (use entity_ids), start_date required; unknown keys are refused';

/** A filters object of these fields: unknown keys refused, end_date not before start_date. */
const filtersObject = <F extends z.ZodRawShape>(fields: F, description: string) =>
  z.strictObject(fields).superRefine(endNotBeforeStart).describe(description);

/** REST: the shared filters; unknown keys are refused. */
export const SharedFilters = filtersObject(
  filterFields((side) => filterDateSchema(side)),
  SHARED_FILTERS,
);
/** MCP tools: the same fields; dates also spelled out ("March 5, 2026"). */
export const ToolSharedFilters = filtersObject(
  filterFields((side) => toolDateSchema(side)),
  SHARED_FILTERS,
);
export type SharedFilters = z.output<typeof SharedFilters>;

/**
 * The observations endpoint's filters (spec, "Shared filters object"): the shared fields minus competitor_ids, nothing
 * else, start_date required. On REST both dates are ISO 8601 date-times (no plain date, unlike the metric endpoints).
 */
function observationFilterFields(date: (side: 'start' | 'end') => z.ZodType<Date, string>) {
  const { competitor_ids: _refused, ...fields } = filterFields(date);
  return { ...fields, start_date: date('start') };
}

/** REST: POST /api/v1/attributes/observations `filters`. */
export const ObservationFilters = filtersObject(
  observationFilterFields((side) => filterDateSchema(side, { allowDateOnly: false })),
  OBSERVATION_FILTERS,
);
/** MCP get_attribute_observations `filters`: the same fields, with the tool date forms. */
export const ToolObservationFilters = filtersObject(
  observationFilterFields((side) => toolDateSchema(side)),
  OBSERVATION_FILTERS,
);
export type ObservationFilters = z.output<typeof ObservationFilters>;
