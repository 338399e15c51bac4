import { z } from 'zod';
import { UpdateTopicEconomics } from '../../../commands/ai-value/set-topic-economics';
import { AiSearchValue, TopicEconomicsView } from '../../../queries/ai-value/views';
import { getAiSearchValue, updateTopicEconomics } from '../../app/ai-value';
import { type RouteDef, routeGroup, Uuid, WebsiteQuery } from '../route';

const metrics = routeGroup({ tag: 'metrics' });
const topics = routeGroup({ tag: 'topics', extension: true });

/** The AI search value area's REST routes (docs/VALUATION.md). */
export const aiValueRoutes: RouteDef<any, any, any>[] = [
  metrics.get('/api/v1/ai-search-value', {
    summary:
      "The monthly US-dollar value of the brand's AI search presence, as bands (conservative <= expected <= upside): the tracked topics' market, what the brand captures and the headroom, per topic and in total, from the trailing 28 days of answers (model: docs/VALUATION.md). has_computed_valuations false while gathering (under 50 answers); is_stale_value true when a once-priced website fell below that and its figure is older than 7 days. Needs the organization's ai_search_value feature (403 otherwise).",
    query: WebsiteQuery,
    answer: AiSearchValue,
    handler: (ctx) => getAiSearchValue(ctx, ctx.query.website_id),
  }),
  topics.patch('/api/v1/topics/:topic_id', {
    summary:
      "Set a topic's economics (monthly_searches, cpc_usd) for the AI search value; economics null removes them and the category's defaults apply",
    params: z.object({ topic_id: Uuid }),
    body: UpdateTopicEconomics,
    answer: TopicEconomicsView,
    handler: (ctx) => updateTopicEconomics(ctx, ctx.params.topic_id, ctx.body),
  }),
];
