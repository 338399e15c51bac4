import { z } from 'zod';
import { FAMILIES, type Family } from '../../../queries/metrics/metrics';
import { SharedFilters } from '../../domain/filters';
import { PageNum, PageSize } from '../../domain/schemas';
import { route, type RouteDef, Uuid } from '../route';
import { metricsOps } from './metrics-ops';

export const MetricsBody = z.strictObject({ website_id: Uuid, filters: SharedFilters.optional() });

const Interval = z.tuple([z.number(), z.number()]).nullable();
/** numerator and denominator of a rate, and its 95% Wilson interval (additive) */
const Sample = z.object({ numerator: z.number(), denominator: z.number(), ci95: Interval });

/** One entity's value object per family; keys are brand names (the website's own has is_self true). */
export const FamilyValue: Record<Family, z.ZodType> = {
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
};

const WHAT: Record<Family, string> = {
  'mention-rate': 'mention rate (answers mentioning the brand / answers selected) and relative mention rate (/ answers mentioning any included brand)',
  'share-of-voice': "share of voice (the brand's mentions / mentions of every included brand)",
  'citation-rate': 'citation rate (answers citing the brand / answers selected)',
  position: 'average 1-based position among the brands an answer mentions (null when never mentioned)',
};

const ConnectorRow = z.object({
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

export const metricsRoutes: RouteDef<any, any, any>[] = [
  ...FAMILIES.flatMap((family) => [
    route({
      method: 'POST',
      url: `/api/v1/metrics/${family}/cumulative`,
      summary: `${WHAT[family]}, one value per brand over the range`,
      tag: 'metrics',
      body: MetricsBody,
      responses: { 200: z.object({ data: z.record(z.string(), FamilyValue[family]), schedule: z.string(), responses: z.number() }) },
      handler: (ctx) => metricsOps.cumulative(ctx, family, ctx.body.website_id, ctx.body.filters),
    }),
    route({
      method: 'POST',
      url: `/api/v1/metrics/${family}/time-series`,
      summary: `${WHAT[family]}, one row per UTC day with answers, oldest first`,
      tag: 'metrics',
      body: MetricsBody,
      responses: {
        200: z.object({
          data: z.array(z.object({ date: z.string(), schedule: z.string(), responses: z.number(), metrics: z.record(z.string(), FamilyValue[family]) })),
          schedule: z.string(),
        }),
      },
      handler: (ctx) => metricsOps.timeSeries(ctx, family, ctx.body.website_id, ctx.body.filters),
    }),
  ]),
  route({
    method: 'POST',
    url: '/api/v1/looker-studio/data',
    summary: 'Reporting connector: flat rows per day, model, prompt, location and brand (responses, mentions and citations count answers)',
    tag: 'metrics',
    body: MetricsBody.extend({ page_num: PageNum(), page_size: PageSize(false, 10_000, 5_000) }),
    responses: { 200: z.object({ rows: z.array(ConnectorRow), page_num: z.number(), page_size: z.number(), has_more: z.boolean(), schedule: z.string() }) },
    handler: (ctx) => metricsOps.connector(ctx, ctx.body.website_id, ctx.body.filters, ctx.body),
  }),
];
