import { z } from 'zod';
import { conflict, type DomainError, invalid, notFound } from '../../src/domain/errors';
import { text } from '../../src/domain/schemas';
import { type CommandContext, type Decision, type Handled, handle } from '../handle';
import { CONTENT_NOT_FOUND, type ContentPipeline, contentStream, pipelineAggregate, versionId, wordCount } from './pipeline';
import { NOT_FINISHED, REVIEW_RUNNING } from './publish-content';

export const MAX_EDITS = 20;
/** A body the edits make past this is refused (a draft is an article, not a book). */
export const MAX_BODY_CHARS = 200_000;

export const ContentEditOp = z.strictObject({
  find: text()
    .min(1, 'must not be empty')
    .max(MAX_BODY_CHARS, `must be at most ${MAX_BODY_CHARS} characters`)
    .describe('Exact text of the current body; must occur exactly once'),
  replace: text().max(MAX_BODY_CHARS, `must be at most ${MAX_BODY_CHARS} characters`).describe('What replaces it'),
});
export const EditContent = z.strictObject({
  edits: z
    .array(ContentEditOp)
    .min(1, 'must have at least 1 edit')
    .max(MAX_EDITS, `must have at most ${MAX_EDITS} edits`)
    .describe(`1 to ${MAX_EDITS} replacements, applied in order`),
  expected_version_number: z
    .number({ error: 'must be an integer' })
    .int('must be an integer')
    .nonnegative('must be at least 0')
    .optional()
    .describe('The version the edits were written against: a newer one answers 409'),
});
export type EditContent = z.output<typeof EditContent>;

export interface EditContentResult {
  content_id: string;
  version_id: string;
  version_number: number;
  body_word_count: number;
}

export const staleVersion = (expected: number, current: number) =>
  conflict(`expected_version_number ${expected} is stale: the current version is ${current}`, { version_number: current });

/** Occurrences of needle in haystack, counting overlapping ones (a find that matches twice overlapping is ambiguous). */
function occurrences(haystack: string, needle: string, stopAt = 2): number {
  let n = 0;
  for (let i = haystack.indexOf(needle); i !== -1 && n < stopAt; i = haystack.indexOf(needle, i + 1)) n++;
  return n;
}

/**
 * The edits applied in order, each to the body the previous ones left: every `find` must occur exactly once there, or
 * the whole call fails naming the edit (nothing is applied).
 */
export function applyEdits(body: string, edits: readonly { find: string; replace: string }[]): { body: string } | DomainError {
  let current = body;
  for (const [i, e] of edits.entries()) {
    const n = occurrences(current, e.find);
    if (n === 0) return invalid(`edits[${i}].find does not match the current body`);
    if (n > 1) return invalid(`edits[${i}].find matches the current body more than once: make it longer so it is unique`);
    const at = current.indexOf(e.find);
    current = current.slice(0, at) + e.replace + current.slice(at + e.find.length);
  }
  if (current.length > MAX_BODY_CHARS) return invalid(`edits would make the body longer than ${MAX_BODY_CHARS} characters`);
  return { body: current };
}

/** Why the item's draft cannot be changed now (by an edit or a revision); null when it can. */
export function draftRefusal(s: ContentPipeline): DomainError | null {
  if (!s.exists || !s.content_id) return notFound(CONTENT_NOT_FOUND);
  if (s.type === 'optimize' && s.pipeline_status === 'running') return conflict(REVIEW_RUNNING);
  if (s.body === null) return conflict(NOT_FINISHED);
  return null;
}

export function decideEdit(s: ContentPipeline, input: EditContent): Decision<EditContentResult> | DomainError {
  const refused = draftRefusal(s);
  if (refused) return refused;
  if (input.expected_version_number !== undefined && input.expected_version_number !== s.version_number)
    return staleVersion(input.expected_version_number, s.version_number);
  const applied = applyEdits(s.body!, input.edits);
  if ('kind' in applied) return applied;
  const content_id = s.content_id!;
  const version_number = s.version_number + 1;
  const version_id = versionId(content_id, version_number);
  return {
    events: [
      {
        type: 'ContentEdited',
        data: { content_id, body: applied.body, edit_count: input.edits.length, version_id, version_number },
      },
    ],
    result: { content_id, version_id, version_number, body_word_count: wordCount(applied.body) },
  };
}

export function editContent(ctx: CommandContext, contentId: string, input: EditContent): Promise<Handled<EditContentResult> | DomainError> {
  return handle(ctx, contentStream(contentId), pipelineAggregate, (s) => decideEdit(s, input));
}
