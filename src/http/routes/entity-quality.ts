import { AcceptSuggestion, DismissSuggestion } from '../../../commands/entity-quality/suggestions';
import { Answers } from '../../../queries/catalog/views';
import { ConflictAnswer, ConflictsAnswer, DismissAnswer, SuggestionsAnswer } from '../../../queries/entity-quality/views';
import * as eq from '../../app/entity-quality';
import { routeGroup } from '../route';

const suggestions = routeGroup({ tag: 'competitors', extension: true });
const conflicts = routeGroup({ tag: 'knowledge base', extension: true });

/** Competitor suggestions and fact conflicts: thin adapters over src/app/entity-quality.ts. */
export const entityQualityRoutes = [
  suggestions.get('/api/v1/competitors/suggestions', {
    summary: 'Names answers put forward that are neither the brand nor a tracked competitor, most answers first',
    query: eq.SuggestionsQuery,
    answer: SuggestionsAnswer,
    handler: (ctx) => eq.competitorSuggestions(ctx, ctx.query),
  }),
  suggestions.post('/api/v1/competitors/suggestions/accept', {
    summary: 'Track a suggested name as a competitor (409 when the website already tracks that name)',
    body: AcceptSuggestion,
    status: 201,
    answer: Answers.competitor,
    handler: (ctx) => eq.acceptSuggestion(ctx, ctx.body),
  }),
  suggestions.post('/api/v1/competitors/suggestions/dismiss', {
    summary: 'Never suggest this name again',
    body: DismissSuggestion,
    answer: DismissAnswer,
    handler: (ctx) => eq.dismissCompetitorSuggestion(ctx, ctx.body),
  }),
  conflicts.get('/api/v1/knowledge-base/conflicts', {
    summary: "Answers' sentences about the brand that contradict its approved facts, newest first",
    query: eq.ConflictsQuery,
    answer: ConflictsAnswer,
    handler: (ctx) => eq.factConflicts(ctx, ctx.query),
  }),
  conflicts.post('/api/v1/knowledge-base/conflicts/:id/resolve', {
    summary: 'Mark an open conflict resolved',
    params: eq.ConflictParams,
    answer: ConflictAnswer,
    handler: (ctx) => eq.closeConflict(ctx, ctx.params.id, 'resolved'),
  }),
  conflicts.post('/api/v1/knowledge-base/conflicts/:id/dismiss', {
    summary: 'Dismiss an open conflict',
    params: eq.ConflictParams,
    answer: ConflictAnswer,
    handler: (ctx) => eq.closeConflict(ctx, ctx.params.id, 'dismissed'),
  }),
];
