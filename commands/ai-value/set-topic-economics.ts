import { z } from 'zod';
import { type DomainError, notFound } from '../../src/domain/errors';
import { WebsiteId } from '../../src/domain/schemas';
import type { CommandContext, Decision } from '../handle';
import { type CatalogState, handleCatalog } from '../catalog/catalog';
import { TOPIC_NOT_FOUND } from '../catalog/delete-topic';

export const TopicEconomics = z
  .strictObject({
    monthly_searches: z
      .number({ error: 'must be a number' })
      .int('must be an integer')
      .min(0, 'must be at least 0')
      .max(1_000_000_000, 'must be at most 1000000000')
      .describe('searches per month for the topic'),
    cpc_usd: z
      .number({ error: 'must be a number' })
      .min(0, 'must be at least 0')
      .max(10_000, 'must be at most 10000')
      .describe('cost per click, US dollars'),
  })
  .describe("the topic's own economics (docs/VALUATION.md); null removes them and the category's defaults apply");

/** PATCH /api/v1/topics/{id} (extension): the topic's economics. */
export const UpdateTopicEconomics = z.strictObject({
  website_id: WebsiteId,
  economics: TopicEconomics.nullable(),
});
export type UpdateTopicEconomics = z.infer<typeof UpdateTopicEconomics>;

export function decideTopicEconomics(s: CatalogState, topicId: string, cmd: UpdateTopicEconomics): Decision<{ topic_id: string }> | DomainError {
  const t = s.topics.get(topicId);
  if (!t || t.deleted) return notFound(TOPIC_NOT_FOUND);
  return { events: [{ type: 'TopicEconomicsSet', data: { topic_id: t.id, economics: cmd.economics } }], result: { topic_id: t.id } };
}

/** Decided on the website's catalogue stream: the topic exists (not soft-deleted) when its economics are set. */
export function setTopicEconomics(ctx: CommandContext, input: UpdateTopicEconomics & { topic_id: string }) {
  const { topic_id, ...cmd } = input;
  return handleCatalog(ctx, input.website_id, (s) => decideTopicEconomics(s, topic_id, cmd));
}
