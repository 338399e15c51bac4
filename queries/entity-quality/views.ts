import { z } from 'zod';

/** A name answers put forward that nobody tracks (CONTRACT "Answer evidence", Competitor suggestions). */
export const SuggestionView = z.object({
  name: z.string(),
  answers: z.number().int(),
  first_seen: z.string(),
  last_seen: z.string(),
  /** at most 3, the latest days' first */
  example_response_ids: z.array(z.string()),
  domains: z.array(z.string()),
});
export type SuggestionView = z.infer<typeof SuggestionView>;
export const SuggestionsAnswer = z.object({ suggestions: z.array(SuggestionView) });
export type SuggestionsAnswer = z.infer<typeof SuggestionsAnswer>;
export const DismissAnswer = z.object({ name: z.string(), dismissed: z.literal(true) });

export const CONFLICT_STATUSES = ['open', 'resolved', 'dismissed'] as const;
/** An answer's sentence contradicting an approved fact (CONTRACT "Answer evidence", Fact conflicts). */
export const ConflictView = z.object({
  id: z.string(),
  response_id: z.string(),
  fact_id: z.string(),
  fact_text: z.string(),
  answer_excerpt: z.string(),
  model: z.string(),
  detected_at: z.string(),
  status: z.enum(CONFLICT_STATUSES),
});
export type ConflictView = z.infer<typeof ConflictView>;
export const ConflictsAnswer = z.object({ conflicts: z.array(ConflictView) });
export type ConflictsAnswer = z.infer<typeof ConflictsAnswer>;
export const ConflictAnswer = z.object({ conflict: ConflictView });
