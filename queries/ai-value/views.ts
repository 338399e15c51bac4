import { z } from 'zod';

/** A range in US dollars per month: conservative ≤ expected ≤ upside (docs/VALUATION.md). */
export const Band = z
  .object({ conservative: z.number(), expected: z.number(), upside: z.number() })
  .describe('US dollars per month; conservative <= expected <= upside');
export type Band = z.infer<typeof Band>;

export const ShareBasis = z.enum(['pw_sov', 'mention_rate', 'unmeasured']);

export const TopicValue = z.object({
  topic_id: z.string(),
  name: z.string().describe('extension: the topic name'),
  category: z.string().describe("from the topic's name and prompts (infra/topic-economics.json); general = no default"),
  local_intent: z.boolean(),
  branded: z.boolean().describe('extension: more than half of its live prompts are branded'),
  share_basis: ShareBasis,
  economics_source: z.enum(['topic', 'category', 'none']).describe('extension: where monthly searches x CPC came from'),
  value_usd_mo: z.number().describe("extension: the topic's market value (monthly searches x CPC)"),
  pw_sov_pct: z.number(),
  mix_adjusted_share_pct: z.number(),
  mention_rate_pct: z.number(),
  drift_pp: z.number().nullable().describe('against the previous 28 days; null when the topic had no answers then'),
  standard_error_pp: z.number(),
  responses_28d: z.number().int(),
  models_measured: z.number().int(),
  personas_measured: z.number().int(),
  locations_measured: z.number().int(),
  captured: Band,
  headroom: Band,
  counted_in_total: z.boolean(),
});
export type TopicValue = z.infer<typeof TopicValue>;

export const MergeSuggestion = z.object({
  topic_ids: z.tuple([z.string(), z.string()]).describe('older first'),
  names: z.tuple([z.string(), z.string()]),
  similarity: z.number().describe('Jaccard similarity of the name tokens, 0 to 1'),
  duplicate: z.boolean().describe('same tokens: only the older one is counted in the totals'),
});

export const Market = z.object({
  value_usd_mo: z.number(),
  topics_priced: z.number().int(),
  topics_total: z.number().int(),
  coverage_pct: z.number(),
  current_sov_pct: z.number().describe('position-weighted, non-branded topics only, weighted by topic value'),
});

export const Contribution = z.object({
  modeled_attributed: Band,
  attributed_share: z.number(),
  attribution_unavailable: z.boolean(),
  unavailable_reason: z.string().nullable().describe('extension: why attribution is unavailable'),
});

/** One computed figure, as stored by AiValueComputed. */
export const Valuation = z.object({
  assumptions_version: z.string(),
  market: Market,
  captured: Band,
  headroom: Band,
  measured_responses: z.number().int(),
  topics: z.array(TopicValue),
  merge_suggestions: z.array(MergeSuggestion),
  contribution: Contribution,
  forecast: z.null(),
});
export type Valuation = z.infer<typeof Valuation>;

/** GET /api/v1/ai-search-value (spec: "AI search value response"). */
export const AiSearchValue = Valuation.extend({
  website_id: z.string().describe('extension'),
  computed_at: z.string().nullable(),
  has_computed_valuations: z.boolean().describe('false while gathering: under 50 answers'),
  is_stale_value: z.boolean().describe('The last figure is over 7 days old and the website is below the 50-answer threshold'),
  measured_responses: z.number().int().describe('AI answers in the trailing 28 days, at the latest check'),
  forecast: z.null().describe('null until a forecast exists'),
});
export type AiSearchValue = z.infer<typeof AiSearchValue>;

export const TopicEconomicsView = z.object({
  topic: z.object({
    id: z.string(),
    name: z.string(),
    economics: z.object({ monthly_searches: z.number().int(), cpc_usd: z.number() }).nullable(),
  }),
});
