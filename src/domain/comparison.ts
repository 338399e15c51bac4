import { z } from 'zod';
import { filterDateSchema, toolDateSchema } from './dates';
import { SharedFilters, ToolSharedFilters } from './filters';
import { queryList, WebsiteId } from './schemas';

/** The metrics a period comparison takes. */
export const COMPARE_METRICS = ['mention_rate', 'share_of_voice', 'citation_rate', 'avg_position'] as const;
export type CompareMetric = (typeof COMPARE_METRICS)[number];

/** The inputs of the period comparison and the stability read (CONTRACT "Signal, not noise"): query names, on REST and MCP. */

const FIRST = Date.UTC(2000, 0, 1);
const LAST = Date.UTC(2100, 0, 1) - 1;
export const DATE_RANGE_ERROR = 'must be between 2000-01-01 and 2099-12-31';

type Surface = 'rest' | 'tool';

const date = (surface: Surface, side: 'start' | 'end', what: string) =>
  (surface === 'rest' ? filterDateSchema(side) : toolDateSchema(side))
    .refine((d) => d.getTime() >= FIRST && d.getTime() <= LAST, DATE_RANGE_ERROR)
    .describe(`${what}: YYYY-MM-DD (${side === 'start' ? 'from 00:00:00Z' : 'through 23:59:59.999Z'}) or an ISO 8601 date-time`);

/** The shared filters as flat arguments, lists also comma-separated; the dates are each read's own. */
function filterFields(surface: Surface) {
  const f = (surface === 'rest' ? SharedFilters : ToolSharedFilters).shape;
  return {
    website_id: WebsiteId,
    schedule_id: f.schedule_id.describe("'default' (alias 'manual', the default) or a schedule id"),
    saved_view_id: f.saved_view_id,
    models: queryList(f.models),
    prompt_ids: queryList(f.prompt_ids),
    location_ids: queryList(f.location_ids),
    prompt_status: f.prompt_status,
    prompt_type: f.prompt_type,
  };
}

type Flat = { [k: string]: unknown };
/** The shared filters object of the flat arguments (undefined ones left out). */
const filtersOf = (flat: Flat): SharedFilters => Object.fromEntries(Object.entries(flat).filter(([, v]) => v !== undefined)) as SharedFilters;

const notBefore = (ctx: z.RefinementCtx, start: Date, end: Date, endName: string, startName: string) => {
  if (end.getTime() < start.getTime()) ctx.addIssue({ code: 'custom', path: [endName], message: `is before ${startName} (${start.toISOString()})` });
};

const METRIC_ERROR = `must be one of ${COMPARE_METRICS.join(', ')}`;

const compareShape = (surface: Surface) =>
  z
    .strictObject({
      ...filterFields(surface),
      competitor_ids: queryList((surface === 'rest' ? SharedFilters : ToolSharedFilters).shape.competitor_ids),
      metric: z.enum(COMPARE_METRICS, { error: METRIC_ERROR }).describe(`The metric compared: ${COMPARE_METRICS.join(', ')}`),
      current_start: date(surface, 'start', 'Start of the current period'),
      current_end: date(surface, 'end', 'End of the current period'),
      previous_start: date(surface, 'start', 'Start of the previous period'),
      previous_end: date(surface, 'end', 'End of the previous period'),
    })
    .superRefine((q, ctx) => {
      if (!(q.current_start instanceof Date) || !(q.current_end instanceof Date)) return;
      notBefore(ctx, q.current_start, q.current_end, 'current_end', 'current_start');
      if (!(q.previous_start instanceof Date) || !(q.previous_end instanceof Date)) return;
      notBefore(ctx, q.previous_start, q.previous_end, 'previous_end', 'previous_start');
    });

export const ToolCompareInput = compareShape('tool');
/** The operation's input of the flat arguments. */
export const compareInput = ({
  website_id,
  metric,
  current_start,
  current_end,
  previous_start,
  previous_end,
  ...filters
}: z.output<typeof ToolCompareInput>) => ({
  website_id,
  metric: metric as CompareMetric,
  current: { start: current_start, end: current_end },
  previous: { start: previous_start, end: previous_end },
  filters: filtersOf(filters),
});
export const CompareQuery = compareShape('rest').transform(compareInput);
export type CompareInput = ReturnType<typeof compareInput>;

const stabilityShape = (surface: Surface) =>
  z
    .strictObject({
      ...filterFields(surface),
      start_date: date(surface, 'start', 'Start of the range'),
      end_date: date(surface, 'end', 'End of the range'),
    })
    .superRefine((q, ctx) => {
      if (q.start_date instanceof Date && q.end_date instanceof Date) notBefore(ctx, q.start_date, q.end_date, 'end_date', 'start_date');
    });

export const ToolStabilityInput = stabilityShape('tool');
export const stabilityInput = ({ website_id, ...filters }: z.output<typeof ToolStabilityInput>) => ({
  website_id,
  range: { start: filters.start_date, end: filters.end_date },
  filters: filtersOf(filters),
});
export const StabilityQuery = stabilityShape('rest').transform(stabilityInput);
export type StabilityInput = ReturnType<typeof stabilityInput>;
