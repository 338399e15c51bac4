import { z } from 'zod';
import { type DomainError, notFound } from '../../src/domain/errors';
import type { CommandContext, Decision } from '../handle';
import { type CatalogState, handleCatalog, isLivePrompt } from './catalog';
import { Uuid } from '../../src/domain/schemas';
import { Bool, WebsiteId } from './catalog-input';

export const DeleteTopic = z.strictObject({
  website_id: WebsiteId,
  topic_id: Uuid.describe('The topic id'),
  delete_prompts: Bool.default(false).describe(
    'false (default): its prompts stay active and keep their history; true: every active prompt in it is soft-deleted too',
  ),
});
export type DeleteTopic = z.input<typeof DeleteTopic>;

export const TOPIC_NOT_FOUND = 'Topic not found';

export interface DeleteTopicResult {
  success: true;
  name: string;
  deleted_prompt_count: number;
}

/** The ids of the topic's live prompts (active or paused), in creation order. */
export const livePromptsOf = (s: CatalogState, topicId: string) =>
  [...s.prompts.values()].filter((p) => isLivePrompt(p) && p.topic_id === topicId).map((p) => p.id);

/**
 * Soft-deletes the topic. By default its prompts stay live and keep their history; with delete_prompts every live
 * prompt in it is soft-deleted too (whether or not it has answers: re-creating the topic brings them back).
 */
export function decideDeleteTopic(s: CatalogState, cmd: DeleteTopic): Decision<DeleteTopicResult> | DomainError {
  const t = s.topics.get(cmd.topic_id);
  if (!t || t.deleted) return notFound(TOPIC_NOT_FOUND);
  const soft_deleted_prompt_ids = cmd.delete_prompts ? livePromptsOf(s, t.id) : [];
  return {
    events: [{ type: 'TopicDeleted', data: { topic_id: t.id, name: t.name, soft_deleted_prompt_ids } }],
    result: { success: true, name: t.name, deleted_prompt_count: soft_deleted_prompt_ids.length },
  };
}

export function deleteTopic(ctx: CommandContext, input: DeleteTopic) {
  return handleCatalog(ctx, input.website_id, (s) => decideDeleteTopic(s, input));
}
