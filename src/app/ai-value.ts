import { setTopicEconomics, type UpdateTopicEconomics } from '../../commands/ai-value/set-topic-economics';
import type { ReadModelName } from '../areas';
import { readAiSearchValue, topicEconomicsOf } from '../../queries/ai-value/read';
import type { AiSearchValue } from '../../queries/ai-value/views';
import { getTopic } from '../../queries/catalog/topics';
import { DomainErrorException, forbidden } from '../domain/errors';
import type { Need, Principal } from '../domain/principal';
import { type Caller, commandContextOf, dbOf, websiteFor, writeThenRead } from './context';

/**
 * The AI search value (spec, "AI search value response"; docs/VALUATION.md): the latest computed figure of a website,
 * and the topics' own economics it is priced with. Computation is a job (src/workers/ai-value.ts).
 */

export const AI_VALUE_NOT_ENABLED = 'AI search value is not enabled for this organization';

export function requireAiValue(p: Principal): void {
  if (!p.features.includes('ai_search_value')) throw new DomainErrorException(forbidden(AI_VALUE_NOT_ENABLED));
}

const VIEW: Need = { category: 'analytics', level: 'view' };
const EDIT_TOPICS: Need = { category: 'prompts', level: 'edit' };
const READS: readonly ReadModelName[] = ['ai-value'];

export async function getAiSearchValue(c: Caller, websiteId: string): Promise<AiSearchValue> {
  requireAiValue(c.principal);
  const w = await websiteFor(c, websiteId, VIEW);
  return readAiSearchValue(dbOf(c), w.id, new Date());
}

/** PATCH /api/v1/topics/{id} (extension): sets or removes the topic's economics; the value is computed again soon after. */
export async function updateTopicEconomics(c: Caller, topicId: string, input: UpdateTopicEconomics) {
  const w = await websiteFor(c, input.website_id, EDIT_TOPICS);
  return writeThenRead(c, setTopicEconomics(commandContextOf(c, w.id), { ...input, website_id: w.id, topic_id: topicId }), READS, async () => {
    const db = dbOf(c);
    const [topic, economics] = await Promise.all([getTopic(db, w.id, topicId), topicEconomicsOf(db, topicId)]);
    if (!topic) return undefined;
    if ((economics === null) !== (input.economics === null)) return undefined;
    return { topic: { id: topic.id, name: topic.name, economics } };
  });
}
