import { z } from 'zod';
import { TopicEconomics } from '../../../commands/ai-value/set-topic-economics';
import { AiSearchValue, TopicEconomicsView } from '../../../queries/ai-value/views';
import { getAiSearchValue, updateTopicEconomics } from '../../app/ai-value';
import { idOf, WebsiteId } from '../../domain/schemas';
import { tool, type ToolDef, websiteRead } from '../tool';

/** The AI search value tools: the same operations as GET /api/v1/ai-search-value and PATCH /api/v1/topics/{id}. */
export const aiValueTools: ToolDef[] = [
  websiteRead({
    name: 'get_ai_search_value',
    title: 'Get AI search value',
    description:
      "The estimated monthly US-dollar value of the brand's presence in AI answers, always as a range (conservative <= expected <= upside): market (value of the tracked topics: monthly searches x cost per click, topics_priced, topics_total, coverage_pct, current_sov_pct = position-weighted share over non-branded topics weighted by value), captured and headroom bands, measured_responses (answers in the trailing 28 days), topics[] (category, local_intent, share_basis, pw_sov_pct, mix_adjusted_share_pct, mention_rate_pct, drift_pp vs the previous 28 days, standard_error_pp, responses_28d, models/personas/locations measured, captured, headroom, counted_in_total), merge_suggestions (near-duplicate topics), contribution (the part attributed to the brand's published content, never added to captured) and forecast (null). has_computed_valuations false = still gathering (under 50 answers); is_stale_value true = the last figure is over 7 days old and the website is below that threshold; market.value_usd_mo 0 = no priced topic. Needs the organization's ai_search_value feature.",
    output: AiSearchValue,
    read: getAiSearchValue,
  }),
  tool({
    name: 'set_topic_economics',
    title: 'Set topic economics',
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
    description:
      "Sets a topic's own economics for the AI search value: monthly_searches and cpc_usd (cost per click, US dollars); economics null removes them and the topic's category defaults apply. The value is computed again shortly after.",
    input: z.strictObject({
      website_id: WebsiteId,
      topic_id: idOf('topic'),
      economics: TopicEconomics.nullable().describe("the topic's monthly_searches and cpc_usd; null removes them (the category's defaults apply)"),
    }),
    output: TopicEconomicsView,
    handler: (ctx, { topic_id, ...input }) => updateTopicEconomics(ctx, topic_id, input),
  }),
];
