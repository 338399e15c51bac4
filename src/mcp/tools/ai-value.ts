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
      "The brand's estimated monthly US-dollar value in AI answers: market, captured and headroom ranges, per topic; has_computed_valuations false under 50 answers. Needs the ai_search_value feature.",
    output: AiSearchValue,
    read: getAiSearchValue,
  }),
  tool({
    name: 'set_topic_economics',
    title: 'Set topic economics',
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
    description:
      "Set a topic's monthly searches and cost per click (USD) for the AI search value, or null for its category's defaults; the value is recomputed shortly after.",
    input: z.strictObject({
      website_id: WebsiteId,
      topic_id: idOf('topic'),
      economics: TopicEconomics.nullable().describe("the topic's monthly_searches and cpc_usd; null removes them (the category's defaults apply)"),
    }),
    output: TopicEconomicsView,
    handler: (ctx, { topic_id, ...input }) => updateTopicEconomics(ctx, topic_id, input),
  }),
];
