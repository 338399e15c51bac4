import { type DomainError, notFound } from '../../src/domain/errors';
import type { CommandContext, Decision } from '../handle';
import { type CatalogState, handleCatalog, isLivePrompt } from './catalog';
import { PROMPT_NOT_FOUND } from './update-prompt';

export interface DeletePromptResult {
  success: true;
  soft_deleted: boolean;
}

/**
 * A prompt with answers is soft-deleted (its history stays); one without is hard-deleted. The decision reads the
 * catalogue stream, where the first-answer marker is appended too, and the append expects the revision it read: an
 * answer arriving meanwhile makes this decide again, so a hard-deleted prompt never gets history.
 */
export function decideDeletePrompt(s: CatalogState, promptId: string): Decision<DeletePromptResult> | DomainError {
  const p = s.prompts.get(promptId);
  if (!isLivePrompt(p)) return notFound(PROMPT_NOT_FOUND);
  const soft_deleted = p.has_answers;
  return { events: [{ type: 'PromptDeleted', data: { prompt_id: p.id, soft_deleted } }], result: { success: true, soft_deleted } };
}

export function deletePrompt(ctx: CommandContext, input: { website_id: string; prompt_id: string }) {
  return handleCatalog(ctx, input.website_id, (s) => decideDeletePrompt(s, input.prompt_id));
}
