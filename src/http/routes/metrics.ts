import { z } from 'zod';
import { FAMILIES, type Family } from '../../../queries/metrics/metrics';
import { SharedFilters } from '../../domain/filters';
import { PageNum, PageSize } from '../../domain/schemas';
import { type RouteDef, routeGroup, Uuid } from '../route';
import { Comparison, ConnectorPage, Cumulative, FamilyValue, Stability, TimeSeries } from '../../../queries/metrics/views';
import { CompareQuery, StabilityQuery } from '../../domain/comparison';
import * as metrics from '../../app/metrics';

const api = routeGroup({ tag: 'metrics' });

export const MetricsBody = z.strictObject({ website_id: Uuid, filters: SharedFilters.optional() });

const WHAT: Record<Family, string> = {
  'mention-rate':
    'mention rate (answers mentioning the brand / answers selected) and relative mention rate (/ answers mentioning any included brand)',
  'share-of-voice': "share of voice (the brand's mentions / mentions of every included brand)",
  'citation-rate': 'citation rate (answers citing the brand / answers selected)',
  position: 'average 1-based position among the brands an answer mentions (null when never mentioned)',
};

/** Each family is answered two ways: one value per brand over the range, or one row per UTC day. */
const SERIES: {
  path: string;
  per: string;
  view: (value: z.ZodType) => z.ZodType;
  read: (...args: Parameters<typeof metrics.cumulative>) => Promise<unknown>;
}[] = [
  { path: 'cumulative', per: 'one value per brand over the range', view: Cumulative, read: metrics.cumulative },
  { path: 'time-series', per: 'one row per UTC day with answers, oldest first', view: TimeSeries, read: metrics.timeSeries },
];

export const metricsRoutes: RouteDef<any, any, any>[] = [
  ...FAMILIES.flatMap((family) =>
    SERIES.map((series) =>
      api.post(`/api/v1/metrics/${family}/${series.path}`, {
        summary: `${WHAT[family]}, ${series.per}`,
        body: MetricsBody,
        answer: series.view(FamilyValue[family]),
        handler: (ctx) => series.read(ctx, family, ctx.body.website_id, ctx.body.filters),
      }),
    ),
  ),
  api.post('/api/v1/looker-studio/data', {
    summary: 'Reporting connector: flat rows per day, model, prompt, location and brand (responses, mentions and citations count answers)',
    body: MetricsBody.extend({ page_num: PageNum(), page_size: PageSize(false, 10_000, 5_000) }),
    answer: ConnectorPage,
    handler: (ctx) => metrics.connector(ctx, ctx.body.website_id, ctx.body.filters, ctx.body),
  }),
  api.get('/api/v1/metrics/compare', {
    summary:
      "Two periods compared per brand: each period's value, the change with its 95% interval (Newcombe for rates, normal for positions), p-value and verdict",
    extension: true,
    query: CompareQuery,
    answer: Comparison,
    handler: (ctx) => metrics.comparePeriods(ctx, ctx.query),
  }),
  api.get('/api/v1/metrics/stability', {
    summary: 'Per prompt and model, how steadily the brand is mentioned day to day: rate with its 95% interval, flips, volatility, consistency',
    extension: true,
    query: StabilityQuery,
    answer: Stability,
    handler: (ctx) => metrics.promptStability(ctx, ctx.query),
  }),
];
