import { z } from 'zod';
import type { connectorRows, cumulative, Family, timeSeries } from './metrics';
import type { comparePeriods, promptStability } from './compare';

/** The metrics' answers (read from the answers read model's facts): the one description each. */

const Interval = z.tuple([z.number(), z.number()]).nullable();
/** numerator and denominator of a rate, and its 95% Wilson interval (additive) */
const Sample = z.object({ numerator: z.number(), denominator: z.number(), ci95: Interval });

/** One entity's value object per family; keys are brand names (the website's own has is_self true). */
export const FamilyValue = {
  'mention-rate': z.object({
    mention_rate: z.number(),
    relative_mention_rate: z.number(),
    is_self: z.boolean(),
    sample: z.object({ mention_rate: Sample, relative_mention_rate: Sample }),
  }),
  'share-of-voice': z.object({ share_of_voice: z.number(), is_self: z.boolean(), sample: z.object({ share_of_voice: Sample }) }),
  'citation-rate': z.object({ citation_rate: z.number(), is_self: z.boolean(), sample: z.object({ citation_rate: Sample }) }),
  position: z.object({
    avg_position: z.number().nullable(),
    is_self: z.boolean(),
    sample: z.object({ avg_position: z.object({ mentions: z.number(), ci95: Interval }) }),
  }),
} satisfies Record<Family, z.ZodType>;

/** A read of a website whose data waits behind an event set aside (see /readyz) says so. */
const stale = { stale: z.literal(true).optional() };

export const Cumulative = <V extends z.ZodType>(value: V) =>
  z.object({ data: z.record(z.string(), value), schedule: z.string(), responses: z.number(), ...stale });
export const TimeSeries = <V extends z.ZodType>(value: V) =>
  z.object({
    data: z.array(z.object({ date: z.string(), schedule: z.string(), responses: z.number(), metrics: z.record(z.string(), value) })),
    schedule: z.string(),
    ...stale,
  });
/** Either series of one family (the tools answer one or the other). */
export const FamilySeries = (family: Family) => z.union([Cumulative(FamilyValue[family]), TimeSeries(FamilyValue[family])]);

export const ConnectorRow = z.object({
  date: z.string(),
  model: z.string(),
  prompt_id: z.string(),
  prompt: z.string().nullable(),
  location_id: z.string().nullable(),
  location: z.string().nullable(),
  entity_id: z.string(),
  entity: z.string(),
  is_self: z.boolean(),
  responses: z.number(),
  mentions: z.number(),
  citations: z.number(),
  position: z.number().nullable(),
  schedule: z.string(),
});
export const ConnectorPage = z.object({
  rows: z.array(ConnectorRow),
  page_num: z.number(),
  page_size: z.number(),
  has_more: z.boolean(),
  schedule: z.string(),
  ...stale,
});

// the queries answer exactly what these describe
type Returned<F extends (...args: never[]) => unknown> = Awaited<ReturnType<F>>;
const AnyValue = z.union([FamilyValue['mention-rate'], FamilyValue['share-of-voice'], FamilyValue['citation-rate'], FamilyValue.position]);
const _cumulative: z.input<ReturnType<typeof Cumulative<typeof AnyValue>>> = {} as Returned<typeof cumulative>;
const _timeSeries: z.input<ReturnType<typeof TimeSeries<typeof AnyValue>>> = {} as Returned<typeof timeSeries>;
const _connector: z.input<typeof ConnectorPage> = {} as Returned<typeof connectorRows>;
void _cumulative;
void _timeSeries;
void _connector;

/** The period comparison (CONTRACT "Signal, not noise"): values in percent (avg_position: a rank), change in points. */
const Verdict = z.enum(['up', 'down', 'within_noise', 'insufficient_data']);
const PeriodSummary = z.object({ start_date: z.string(), end_date: z.string(), responses: z.number() });
/** One entity's figure in both periods, its change with the interval, and the verdict. */
export const ComparedEntity = z.object({
  is_self: z.boolean(),
  current: z.number().nullable(),
  previous: z.number().nullable(),
  change: z.number().nullable(),
  change_ci_low: z.number().nullable(),
  change_ci_high: z.number().nullable(),
  p_value: z.number().nullable(),
  verdict: Verdict,
});
export const Comparison = z.object({
  metric: z.enum(['mention_rate', 'share_of_voice', 'citation_rate', 'avg_position']),
  current: PeriodSummary,
  previous: PeriodSummary,
  data: z.record(z.string(), ComparedEntity),
  ...stale,
});

export const Stability = z.object({
  data: z.array(
    z.object({
      prompt_id: z.string(),
      prompt: z.string(),
      model: z.string(),
      answers: z.number(),
      mentioned: z.number(),
      mention_rate: z.number(),
      ci_low: z.number(),
      ci_high: z.number(),
      days: z.number(),
      flips: z.number(),
      volatility: z.number(),
      consistency: z.number(),
    }),
  ),
  summary: z.object({ pairs: z.number(), volatile_pairs: z.number() }),
  ...stale,
});
const _comparison: z.input<typeof Comparison> = {} as Returned<typeof comparePeriods>;
const _stability: z.input<typeof Stability> = {} as Returned<typeof promptStability>;
void _comparison;
void _stability;
