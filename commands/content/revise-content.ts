import { z } from 'zod';
import { creditsCharged } from '../../src/domain/credits';
import { conflict, type DomainError } from '../../src/domain/errors';
import { text } from '../../src/domain/schemas';
import type { Writer } from '../../src/engines/writer';
import { type CommandContext, type Handled, handle, load } from '../handle';
import { draftRefusal, MAX_BODY_CHARS } from './edit-content';
import { contentStream, pipelineAggregate, versionId, wordCount } from './pipeline';

export const MAX_INSTRUCTION_CHARS = 4000;
export const ReviseContent = z.strictObject({
  instruction: text()
    .refine((s) => s.trim().length > 0, 'must not be empty')
    .refine((s) => s.length <= MAX_INSTRUCTION_CHARS, `must be at most ${MAX_INSTRUCTION_CHARS} characters`)
    .describe(
      'What to change, in words (e.g. "make the intro friendlier"); ask to shorten explicitly for a shorter text (a result far shorter is retried once, then refused)',
    ),
});
export type ReviseContent = z.output<typeof ReviseContent>;

export const REVISION_FRAGMENT = 'Revision returned a fragment; the draft is unchanged';
export const DRAFT_CHANGED = 'The draft changed while it was being revised: revise it again';
/** Credits one revision costs (CreditsCharged kind content_revision). */
export const REVISION_CREDITS = 1;

/** The words that make an instruction ask for a shorter text (CONTRACT: the fragment rule), with their usual forms. */
export const SHORTEN_WORDS = ['shorten', 'shorter', 'condense', 'trim', 'cut', 'summarize', 'summarise', 'tighten', 'brief'] as const;
const SHORTEN =
  /\b(shorten|shortens|shortened|shortening|shorter|condense|condenses|condensed|condensing|trim|trims|trimmed|trimming|cut|cuts|cutting|summarize|summarizes|summarized|summarizing|summarise|summarises|summarised|summarising|tighten|tightens|tightened|tightening|brief|briefer|briefly)\b/i;

export const asksToShorten = (instruction: string): boolean => SHORTEN.test(instruction);

/** A result under half the draft's words, when the instruction does not ask to shorten, is a fragment of it. */
export const isFragment = (draft: string, result: string, instruction: string): boolean =>
  !asksToShorten(instruction) && wordCount(result) * 2 < wordCount(draft);

export interface Revision {
  body: string;
  /** the first answer was a fragment and the writer was asked again for the whole document */
  retried: boolean;
  credits: number;
}

/**
 * The fragment rule: the writer's revision, or, when it is a fragment, a second one asked for with the whole-document
 * directive; still a fragment → the rule's error (the caller saves nothing).
 */
export async function reviseWithFragmentRule(writer: Writer, draft: string, instruction: string): Promise<Revision | typeof FRAGMENT> {
  const first = await writer.write({ task: 'revise', draft, instruction, whole_document: false });
  if (!isFragment(draft, first.text, instruction)) return { body: first.text, retried: false, credits: first.credits };
  const second = await writer.write({ task: 'revise', draft, instruction, whole_document: true });
  if (!isFragment(draft, second.text, instruction)) return { body: second.text, retried: true, credits: first.credits + second.credits };
  return FRAGMENT;
}

/** What a revision that stayed a fragment comes to: the caller answers 500 REVISION_FRAGMENT, nothing saved. */
export const FRAGMENT = 'fragment' as const;

export interface ReviseContentResult {
  content_id: string;
  body: string;
  body_word_count: number;
  previous_body_word_count: number;
  version_id: string;
  version_number: number;
}

/**
 * Revises the current draft through the writer (the slow part, outside any lock), then records it as the next version,
 * charged, provided the draft is still the one revised (else 409: nothing saved). A fragment saves nothing.
 */
export async function reviseContent(
  ctx: CommandContext,
  contentId: string,
  input: ReviseContent,
  writer: Writer,
): Promise<Handled<ReviseContentResult> | DomainError | typeof FRAGMENT> {
  const stream = contentStream(contentId);
  const { state } = await load(ctx.store, stream, pipelineAggregate);
  const refused = draftRefusal(state);
  if (refused) return refused;
  const draft = state.body!;
  const based = state.version_number;
  const revision = await reviseWithFragmentRule(writer, draft, input.instruction);
  if (revision === FRAGMENT) return FRAGMENT;
  if (revision.body.length > MAX_BODY_CHARS) return conflict(`The revision is longer than ${MAX_BODY_CHARS} characters; the draft is unchanged`);
  return handle(ctx, stream, pipelineAggregate, (s) => {
    const again = draftRefusal(s);
    if (again) return again;
    if (s.version_number !== based) return conflict(DRAFT_CHANGED, { version_number: s.version_number });
    const content_id = s.content_id!;
    const version_number = based + 1;
    const version_id = versionId(content_id, version_number);
    return {
      events: [
        {
          type: 'ContentRevised',
          data: {
            content_id,
            body: revision.body,
            instruction: input.instruction,
            model: writer.model,
            retried: revision.retried,
            version_id,
            version_number,
          },
        },
        creditsCharged({
          kind: 'content_revision',
          credits: REVISION_CREDITS,
          website_id: ctx.websiteId ?? null,
          ref_id: content_id,
          step: `revision-${version_number}`,
          model: writer.model,
        }),
      ],
      result: {
        content_id,
        body: revision.body,
        body_word_count: wordCount(revision.body),
        previous_body_word_count: wordCount(draft),
        version_id,
        version_number,
      },
    };
  });
}
