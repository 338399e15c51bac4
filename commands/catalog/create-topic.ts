import { z } from 'zod';
import { conflict, type DomainError } from '../../src/domain/errors';
import { newId } from '../../src/domain/ids';
import type { CommandContext, Decision } from '../handle';
import { type CatalogState, handleCatalog, nameKey, type TopicState, topicView, type Written } from './catalog';
import { Name, WebsiteId } from './catalog-input';

export const CreateTopic = z.strictObject({
  website_id: WebsiteId,
  name: Name.describe("The topic's name (up to 200 characters); the name of a soft-deleted topic (case-insensitive) restores that topic"),
});
export type CreateTopic = z.infer<typeof CreateTopic>;

export interface CreateTopicResult extends Written {
  /** true when a soft-deleted topic of that name came back (with the prompts deleted together with it) */
  restored: boolean;
}

/**
 * A new topic, or, when a soft-deleted topic has the name (case-insensitive), that topic back under its own id and
 * name together with the prompts that were soft-deleted with it. A live topic of that name is a 409.
 */
export function decideCreateTopic(s: CatalogState, cmd: CreateTopic & { topic_id: string }): Decision<CreateTopicResult> | DomainError {
  const key = nameKey(cmd.name);
  let deleted: TopicState | undefined;
  for (const t of s.topics.values()) {
    if (nameKey(t.name) !== key) continue;
    if (!t.deleted) return conflict('Topic already exists', { existing: topicView(t) });
    deleted = t; // the latest one of that name
  }
  if (deleted) {
    const t = deleted;
    const restored_prompt_ids = t.deleted_prompt_ids.filter((id) => {
      const p = s.prompts.get(id);
      return !!p && p.soft_deleted && !p.hard_deleted && p.topic_id === t.id;
    });
    return {
      events: [{ type: 'TopicRestored', data: { topic_id: t.id, name: t.name, restored_prompt_ids } }],
      result: { id: t.id, restored: true },
    };
  }
  return {
    events: [{ type: 'TopicCreated', data: { topic_id: cmd.topic_id, name: cmd.name } }],
    result: { id: cmd.topic_id, restored: false },
  };
}

export function createTopic(ctx: CommandContext, input: CreateTopic) {
  const topic_id = newId();
  return handleCatalog(ctx, input.website_id, (s) => decideCreateTopic(s, { ...input, topic_id }));
}
