import { z } from 'zod';
import { type DomainError, notFound } from '../../src/domain/errors';
import type { EventData } from '../../src/domain/events';
import { Uuid } from '../../src/domain/schemas';
import type { CommandContext, Decision } from '../handle';
import { type CatalogState, handleCatalog, isLivePrompt, type Written } from './catalog';
import { PromptStatus, PromptText, PromptType, sameList, somethingToChange, Tags, unique, WebsiteId } from './catalog-input';
import { topicRefError } from './create-prompt';

export const UpdatePrompt = z
  .strictObject({
    website_id: WebsiteId,
    text: PromptText.optional().describe('New text (up to 2000 characters); omitted = unchanged'),
    topic_id: Uuid.nullable().optional().describe('A live topic of the website; null = no topic; omitted = unchanged'),
    type: PromptType.optional().describe("'branded' or 'non_branded'; omitted = unchanged"),
    status: PromptStatus.optional().describe("'active' or 'paused'; omitted = unchanged"),
    tags: Tags.optional().describe('Replaces the tags (at most 50, each up to 100 characters); omitted = unchanged'),
  })
  .refine(...somethingToChange(['text', 'topic_id', 'type', 'status', 'tags']));
export type UpdatePrompt = z.infer<typeof UpdatePrompt>;

export const PROMPT_NOT_FOUND = 'Prompt not found';

/** Changes what was sent; a field sent with its current value appends nothing. */
export function decideUpdatePrompt(s: CatalogState, promptId: string, cmd: UpdatePrompt): Decision<Written> | DomainError {
  const p = s.prompts.get(promptId);
  if (!isLivePrompt(p)) return notFound(PROMPT_NOT_FOUND);
  const changes: Omit<EventData<'PromptUpdated'>, 'prompt_id'> = {};
  if (cmd.text !== undefined && cmd.text !== p.text) changes.text = cmd.text;
  if (cmd.topic_id !== undefined && cmd.topic_id !== p.topic_id) {
    const bad = topicRefError(s, cmd.topic_id);
    if (bad) return bad;
    changes.topic_id = cmd.topic_id;
  }
  if (cmd.type !== undefined && cmd.type !== p.type) changes.type = cmd.type;
  if (cmd.status !== undefined && cmd.status !== p.status) changes.status = cmd.status;
  if (cmd.tags !== undefined && !sameList(unique(cmd.tags), p.tags)) changes.tags = unique(cmd.tags);
  if (Object.keys(changes).length === 0) return { events: [], result: { id: p.id } };
  return { events: [{ type: 'PromptUpdated', data: { prompt_id: p.id, ...changes } }], result: { id: p.id } };
}

export function updatePrompt(ctx: CommandContext, input: UpdatePrompt & { prompt_id: string }) {
  const { prompt_id, ...change } = input;
  return handleCatalog(ctx, input.website_id, (s) => decideUpdatePrompt(s, prompt_id, change));
}
