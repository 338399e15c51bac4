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
import { route, Uuid } from '../route';

const TAG = 'knowledge base';
const FactParams = z.object({ fact_id: Uuid });

/** The knowledge base: thin adapters over src/app/knowledge.ts. */
export const knowledgeRoutes = [
  route({
    method: 'POST',
    url: '/api/v1/knowledge-base/pillars',
    summary: 'Get or create a pillar by name (case-insensitive; created false for an existing one); a new pillar is researched',
    tag: TAG,
    body: CreatePillar,
    responses: { 200: CreatePillarAnswer },
    handler: (ctx) => knowledge.createPillar(ctx, ctx.body),
  }),
  route({
    method: 'GET',
    url: '/api/v1/knowledge-base/pillars',
    summary: "The website's pillars, oldest first",
    tag: TAG,
    extension: true,
    query: z.strictObject({ website_id: Uuid }),
    responses: { 200: PillarsView },
    handler: (ctx) => knowledge.listPillars(ctx, ctx.query.website_id),
  }),
  route({
    method: 'PATCH',
    url: '/api/v1/knowledge-base/pillars/:pillar_id',
    summary: "Change a pillar's name, description or status (only the fields given)",
    tag: TAG,
    extension: true,
    params: z.object({ pillar_id: Uuid }),
    body: UpdatePillar,
    responses: { 200: PillarAnswer },
    handler: (ctx) => knowledge.updatePillar(ctx, ctx.params.pillar_id, ctx.body),
  }),
  route({
    method: 'POST',
    url: '/api/v1/knowledge-base/facts',
    summary: 'Add a fact by hand: approved at once',
    tag: TAG,
    extension: true,
    body: CreateFact,
    status: 201,
    responses: { 201: FactAnswer },
    handler: (ctx) => knowledge.createFact(ctx, ctx.body),
  }),
  route({
    method: 'GET',
    url: '/api/v1/knowledge-base/facts',
    summary: "A page of the website's facts, newest first (automated-analysis facts only with include_oracle=true)",
    tag: TAG,
    query: knowledge.ListFactsQuery,
    responses: { 200: FactsPage },
    handler: (ctx) => knowledge.listFacts(ctx, ctx.query),
  }),
  route({
    method: 'GET',
    url: '/api/v1/knowledge-base/facts/search',
    summary: 'Full-text search of the approved facts, best first',
    tag: TAG,
    query: knowledge.SearchFactsQuery,
    responses: { 200: SearchAnswer },
    handler: (ctx) => knowledge.searchFacts(ctx, ctx.query),
  }),
  route({
    method: 'PATCH',
    url: '/api/v1/knowledge-base/facts/:fact_id',
    summary: 'Edit a fact: a new text makes a new fact (new id) and archives this one; source_url ("" clears) and confidence change in place',
    tag: TAG,
    params: FactParams,
    body: PatchFact,
    responses: { 200: PatchFactAnswer },
    handler: (ctx) => knowledge.patchFact(ctx, ctx.params.fact_id, ctx.body),
  }),
  route({
    method: 'POST',
    url: '/api/v1/knowledge-base/facts/:fact_id/review',
    summary: 'Approve or reject a fact',
    tag: TAG,
    extension: true,
    params: FactParams,
    body: ReviewFact,
    responses: { 200: FactAnswer },
    handler: (ctx) => knowledge.reviewFact(ctx, ctx.params.fact_id, ctx.body),
  }),
  route({
    method: 'POST',
    url: '/api/v1/knowledge-base/facts/delete',
    summary: 'Delete 1 to 50 facts for good (their texts are erased); unknown ids are listed in not_found_ids',
    tag: TAG,
    body: DeleteFacts,
    responses: { 200: DeleteFactsAnswer },
    handler: (ctx) => knowledge.deleteFacts(ctx, ctx.body),
  }),
];
