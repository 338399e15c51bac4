import { ConflictsAnswer, SuggestionsAnswer } from '../../../queries/entity-quality/views';
import * as eq from '../../app/entity-quality';
import { READS, tool } from '../tool';

/** Competitor suggestions and fact conflicts for assistants, with REST's rules and messages. */
export const entityQualityTools = [
  tool({
    name: 'get_competitor_suggestions',
    title: 'Get competitor suggestions',
    description:
      'Names AI answers put forward (bold, list leads) that are neither the brand nor a tracked competitor, with counts, examples and domains.',
    input: eq.SuggestionsQuery,
    output: SuggestionsAnswer,
    annotations: READS,
    handler: (ctx, input) => eq.competitorSuggestions(ctx, input),
  }),
  tool({
    name: 'get_fact_conflicts',
    title: 'Get fact conflicts',
    description: "Answers' sentences about the brand that contradict its approved knowledge-base facts, by status (open default).",
    input: eq.ConflictsQuery,
    output: ConflictsAnswer,
    annotations: READS,
    handler: (ctx, input) => eq.factConflicts(ctx, input),
  }),
];
