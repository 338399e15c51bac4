import type { GenerateContent } from '../../commands/content/generate-content';
import { approvedFactIdsOfPillars, MAX_GROUNDING_FACTS, notPillarIds } from '../../queries/knowledge/grounding';
import { DomainErrorException, forbidden, invalid } from '../domain/errors';
import { dbOf, type Caller } from './context';
import { approvedFacts, KNOWLEDGE_BASE_NOT_ENABLED } from './knowledge';

type FactReview = NonNullable<GenerateContent['fact_review']>;

const refused = (field: string, what: string, ids: readonly string[]) =>
  new DomainErrorException(invalid(`fact_review.${field}: ${what}: ${ids.join(', ')}`));

/**
 * A generation's knowledge-base grounding (issue 18, item 7): checks `fact_review` and answers the ids of the facts
 * the writer is given. The organization's knowledge base must be enabled (403); every kept and excluded id must be an
 * approved fact of the website and every topic id one of its pillars (400 naming the field and the ids); an id both
 * kept and excluded is refused. The writer gets the kept facts, then the approved facts of the topics, never an
 * excluded one, at most MAX_GROUNDING_FACTS.
 */
export async function groundingFactIds(c: Caller, websiteId: string, review: FactReview): Promise<string[]> {
  if (!c.principal.features.includes('knowledge_base')) throw new DomainErrorException(forbidden(KNOWLEDGE_BASE_NOT_ENABLED));
  const kept = [...new Set(review.kept_claim_ids)];
  const excluded = [...new Set(review.excluded_claim_ids)];
  const both = kept.filter((id) => excluded.includes(id));
  if (both.length) throw refused('excluded_claim_ids', 'ids also kept', both);
  const keptFacts = await approvedFacts(c, websiteId, kept);
  if (keptFacts.not_approved_ids.length) throw refused('kept_claim_ids', 'not approved facts of this website', keptFacts.not_approved_ids);
  const excludedFacts = await approvedFacts(c, websiteId, excluded);
  if (excludedFacts.not_approved_ids.length)
    throw refused('excluded_claim_ids', 'not approved facts of this website', excludedFacts.not_approved_ids);
  const db = dbOf(c);
  const unknownTopics = await notPillarIds(db, websiteId, review.topic_ids);
  if (unknownTopics.length) throw refused('topic_ids', 'not knowledge-base topics (pillars) of this website', unknownTopics);
  const ids = keptFacts.facts.map((f) => f.id);
  const fromTopics = await approvedFactIdsOfPillars(
    db,
    websiteId,
    [...new Set(review.topic_ids)],
    [...excluded, ...ids],
    MAX_GROUNDING_FACTS - ids.length,
  );
  return [...ids, ...fromTopics];
}
