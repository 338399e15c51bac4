import { AcceptSuggestion, DismissSuggestion } from '../../../commands/entity-quality/suggestions';
import { Answers } from '../../../queries/catalog/views';
import { ConflictAnswer, ConflictsAnswer, DismissAnswer, SuggestionsAnswer } from '../../../queries/entity-quality/views';
import * as eq from '../../app/entity-quality';
import { route } from '../route';

/** Competitor suggestions and fact conflicts: thin adapters over src/app/entity-quality.ts. */
export const entityQualityRoutes = [
  route({
    method: 'GET',
    url: '/api/v1/competitors/suggestions',
    summary: 'Names answers put forward that are neither the brand nor a tracked competitor, most answers first',
    tag: 'competitors',
    extension: true,
    query: eq.SuggestionsQuery,
    responses: { 200: SuggestionsAnswer },
    handler: (ctx) => eq.competitorSuggestions(ctx, ctx.query),
  }),
  route({
    method: 'POST',
    url: '/api/v1/competitors/suggestions/accept',
    summary: 'Track a suggested name as a competitor (409 when the website already tracks that name)',
    tag: 'competitors',
    extension: true,
    body: AcceptSuggestion,
    status: 201,
    responses: { 201: Answers.competitor },
    handler: (ctx) => eq.acceptSuggestion(ctx, ctx.body),
  }),
  route({
    method: 'POST',
    url: '/api/v1/competitors/suggestions/dismiss',
    summary: 'Never suggest this name again',
    tag: 'competitors',
    extension: true,
    body: DismissSuggestion,
    responses: { 200: DismissAnswer },
    handler: (ctx) => eq.dismissCompetitorSuggestion(ctx, ctx.body),
  }),
  route({
    method: 'GET',
    url: '/api/v1/knowledge-base/conflicts',
    summary: "Answers' sentences about the brand that contradict its approved facts, newest first",
    tag: 'knowledge base',
    extension: true,
    query: eq.ConflictsQuery,
    responses: { 200: ConflictsAnswer },
    handler: (ctx) => eq.factConflicts(ctx, ctx.query),
  }),
  route({
    method: 'POST',
    url: '/api/v1/knowledge-base/conflicts/:id/resolve',
    summary: 'Mark an open conflict resolved',
    tag: 'knowledge base',
    extension: true,
    params: eq.ConflictParams,
    responses: { 200: ConflictAnswer },
    handler: (ctx) => eq.closeConflict(ctx, ctx.params.id, 'resolved'),
  }),
  route({
    method: 'POST',
    url: '/api/v1/knowledge-base/conflicts/:id/dismiss',
    summary: 'Dismiss an open conflict',
    tag: 'knowledge base',
    extension: true,
    params: eq.ConflictParams,
    responses: { 200: ConflictAnswer },
    handler: (ctx) => eq.closeConflict(ctx, ctx.params.id, 'dismissed'),
  }),
];
