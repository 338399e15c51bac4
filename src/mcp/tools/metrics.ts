import { z } from 'zod';
import type { Family } from '../../../queries/metrics/metrics';
import { ToolSharedFilters } from '../../domain/filters';
import { Comparison, ConnectorPage, FamilySeries, Stability } from '../../../queries/metrics/views';
import { compareInput, stabilityInput, ToolCompareInput, ToolStabilityInput } from '../../domain/comparison';
import * as metrics from '../../app/metrics';
import { PageNum, PageSize, WebsiteId } from '../../domain/schemas';
import { tool, type ToolDef, READS } from '../tool';

const Input = z.strictObject({
  website_id: WebsiteId,
  filters: ToolSharedFilters.optional(),
  series: z
    .enum(['cumulative', 'daily'], { error: "must be 'cumulative' or 'daily'" })
    .default('cumulative')
    .describe("'cumulative' (default): one value per brand over the range; 'daily': one row per UTC day"),
});

const family = (name: string, title: string, f: Family, what: string): ToolDef =>
  tool({
    name,
    title,
    annotations: READS,
    description: `${what}, per brand name (is_self: the website's own), each with its sample and 95% interval.`,
    input: Input,
    output: FamilySeries(f),
    handler: (ctx, input) =>
      input.series === 'daily'
        ? metrics.timeSeries(ctx, f, input.website_id, input.filters)
        : metrics.cumulative(ctx, f, input.website_id, input.filters),
  });

/** The metric families over MCP: the same operations as the REST routes (src/app/metrics.ts). */
export const metricsTools: ToolDef[] = [
  family(
    'get_mention_rate',
    'Get mention rates',
    'mention-rate',
    '% of answers mentioning each brand, among all answers (mention_rate) and among those mentioning any included brand',
  ),
  family('get_share_of_voice', 'Get share of voice', 'share-of-voice', "Share of voice (each brand's share of all mentions of the included brands)"),
  family('get_citation_rate', 'Get citation rates', 'citation-rate', "Citation rate (% of answers citing each brand's domain)"),
  family('get_average_position', 'Get average positions', 'position', 'Average 1-based position of each brand among the brands an answer mentions'),
  tool({
    name: 'get_reporting_rows',
    title: 'Get reporting rows',
    annotations: READS,
    description:
      'Flat rows for reporting and export: per day, model, prompt, location and brand, the selected answers, how many mention and cite the brand, and its mean position.',
    input: z.strictObject({
      website_id: WebsiteId,
      filters: ToolSharedFilters.optional(),
      page_num: PageNum(),
      page_size: PageSize(false, 10_000, 5_000),
    }),
    output: ConnectorPage,
    handler: (ctx, input) => metrics.connector(ctx, input.website_id, input.filters, input),
  }),
  tool({
    name: 'compare_periods',
    title: 'Compare two periods',
    annotations: READS,
    description:
      'Whether a metric really changed between two periods: per brand, both values, the change with its 95% interval, p-value and verdict (up, down, within_noise).',
    input: ToolCompareInput,
    output: Comparison,
    handler: (ctx, input) => metrics.comparePeriods(ctx, compareInput(input)),
  }),
  tool({
    name: 'get_prompt_stability',
    title: 'Get prompt stability',
    annotations: READS,
    description:
      'Per prompt and model, how steadily the brand is mentioned day to day: rate with its 95% interval, days, flips, volatility, consistency; volatile pairs counted.',
    input: ToolStabilityInput,
    output: Stability,
    handler: (ctx, input) => metrics.promptStability(ctx, stabilityInput(input)),
  }),
];
