import { type DomainError, notFound } from '../../src/domain/errors';
import type { CommandContext, Decision } from '../handle';
import { type CatalogState, handleCatalog } from './catalog';
import { PROMPT_NOT_FOUND } from './update-prompt';

/**
 * The first-answer marker. The answers pipeline calls markPromptAnswered before it records a prompt's first answer
 * and records nothing when it fails: a hard-deleted (or unknown) prompt is not_found; an already marked one appends
 * nothing. A soft-deleted prompt keeps its history, so an answer still in flight may be recorded for it.
 */
export function decideMarkPromptAnswered(s: CatalogState, promptId: string): Decision<{ prompt_id: string; first: boolean }> | DomainError {
  const p = s.prompts.get(promptId);
  if (!p || p.hard_deleted) return notFound(PROMPT_NOT_FOUND);
  if (p.has_answers) return { events: [], result: { prompt_id: p.id, first: false } };
  return { events: [{ type: 'PromptAnswered', data: { prompt_id: p.id } }], result: { prompt_id: p.id, first: true } };
}

export function markPromptAnswered(ctx: CommandContext, input: { website_id: string; prompt_id: string }) {
  return handleCatalog(ctx, input.website_id, (s) => decideMarkPromptAnswered(s, input.prompt_id));
}
