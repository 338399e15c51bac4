import { z } from 'zod';
import { CreateFact, DeleteFacts, PatchFact, ReviewFact } from '../../../commands/knowledge/facts';
import { CreatePillar, UpdatePillar } from '../../../commands/knowledge/pillars';
import {
  CreatePillarAnswer,
  DeleteFactsAnswer,
  FactAnswer,
  FactsPage,
  PatchFactAnswer,
  PillarAnswer,
  PillarsView,
  SearchAnswer,
} from '../../../queries/knowledge/views';
import * as knowledge from '../../app/knowledge';
import { routeGroup, Uuid, WebsiteQuery } from '../route';

const api = routeGroup({ tag: 'knowledge base' });
const FactParams = z.object({ fact_id: Uuid });

/** The knowledge base: thin adapters over src/app/knowledge.ts. */
export const knowledgeRoutes = [
  api.post('/api/v1/knowledge-base/pillars', {
    summary: 'Get or create a pillar by name (case-insensitive; created false for an existing one); a new pillar is researched',
    body: CreatePillar,
    answer: CreatePillarAnswer,
    handler: (ctx) => knowledge.createPillar(ctx, ctx.body),
  }),
  api.get('/api/v1/knowledge-base/pillars', {
    summary: "The website's pillars, oldest first",
    extension: true,
    query: WebsiteQuery,
    answer: PillarsView,
    handler: (ctx) => knowledge.listPillars(ctx, ctx.query.website_id),
  }),
  api.patch('/api/v1/knowledge-base/pillars/:pillar_id', {
    summary: "Change a pillar's name, description or status (only the fields given)",
    extension: true,
    params: z.object({ pillar_id: Uuid }),
    body: UpdatePillar,
    answer: PillarAnswer,
    handler: (ctx) => knowledge.updatePillar(ctx, ctx.params.pillar_id, ctx.body),
  }),
  api.post('/api/v1/knowledge-base/facts', {
    summary: 'Add a fact by hand: approved at once',
    extension: true,
    body: CreateFact,
    status: 201,
    answer: FactAnswer,
    handler: (ctx) => knowledge.createFact(ctx, ctx.body),
  }),
  api.get('/api/v1/knowledge-base/facts', {
    summary: "A page of the website's facts, newest first (automated-analysis facts only with include_oracle=true)",
    query: knowledge.ListFactsQuery,
    answer: FactsPage,
    handler: (ctx) => knowledge.listFacts(ctx, ctx.query),
  }),
  api.get('/api/v1/knowledge-base/facts/search', {
    summary: 'Full-text search of the approved facts, best first',
    query: knowledge.SearchFactsQuery,
    answer: SearchAnswer,
    handler: (ctx) => knowledge.searchFacts(ctx, ctx.query),
  }),
  api.patch('/api/v1/knowledge-base/facts/:fact_id', {
    summary: 'Edit a fact: a new text makes a new fact (new id) and archives this one; source_url ("" clears) and confidence change in place',
    params: FactParams,
    body: PatchFact,
    answer: PatchFactAnswer,
    handler: (ctx) => knowledge.patchFact(ctx, ctx.params.fact_id, ctx.body),
  }),
  api.post('/api/v1/knowledge-base/facts/:fact_id/review', {
    summary: 'Approve or reject a fact',
    extension: true,
    params: FactParams,
    body: ReviewFact,
    answer: FactAnswer,
    handler: (ctx) => knowledge.reviewFact(ctx, ctx.params.fact_id, ctx.body),
  }),
  api.post('/api/v1/knowledge-base/facts/delete', {
    summary: 'Delete 1 to 50 facts for good (their texts are erased); unknown ids are listed in not_found_ids',
    body: DeleteFacts,
    answer: DeleteFactsAnswer,
    handler: (ctx) => knowledge.deleteFacts(ctx, ctx.body),
  }),
];
