import { z } from 'zod';
import { type DomainError, invalid } from '../../src/domain/errors';
import { newId } from '../../src/domain/ids';
import { Uuid } from '../../src/domain/schemas';
import type { CommandContext, Decision } from '../handle';
import { type CatalogState, handleCatalog, type Written } from './catalog';
import { PromptStatus, PromptText, PromptType, Tags, unique, WebsiteId } from './catalog-input';

export const CreatePrompt = z.strictObject({
  website_id: WebsiteId,
  text: PromptText.describe('What is asked of the answer engines (up to 2000 characters)'),
  topic_id: Uuid.nullable().optional().describe('A live topic of the website to file it under; null or omitted = no topic'),
  type: PromptType.default('non_branded').describe("'branded' or 'non_branded' (default)"),
  status: PromptStatus.default('active').describe("'active' (default: asked on every run) or 'paused'"),
  tags: Tags.default([]).describe('Tags (at most 50, each up to 100 characters); repeats are dropped'),
});
export type CreatePrompt = z.input<typeof CreatePrompt>;

/** A prompt may only be filed under a live topic of the same website. */
export function topicRefError(s: CatalogState, topicId: string | null | undefined): DomainError | null {
  if (topicId === null || topicId === undefined) return null;
  const t = s.topics.get(topicId);
  return !t || t.deleted ? invalid('topic_id: Topic not found') : null;
}

export function decideCreatePrompt(s: CatalogState, cmd: CreatePrompt & { prompt_id: string }): Decision<Written> | DomainError {
  const bad = topicRefError(s, cmd.topic_id);
  if (bad) return bad;
  const data = {
    prompt_id: cmd.prompt_id,
    text: cmd.text,
    topic_id: cmd.topic_id ?? null,
    type: cmd.type ?? 'non_branded',
    status: cmd.status ?? 'active',
    tags: unique(cmd.tags ?? []),
  };
  return {
    events: [{ type: 'PromptCreated', data }],
    result: { id: cmd.prompt_id },
  };
}

export function createPrompt(ctx: CommandContext, input: CreatePrompt) {
  const prompt_id = newId();
  return handleCatalog(ctx, input.website_id, (s) => decideCreatePrompt(s, { ...input, prompt_id }));
}
