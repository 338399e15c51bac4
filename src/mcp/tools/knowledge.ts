import { DeleteFacts, PatchFactFields, ReviewFact, somePatchField } from '../../../commands/knowledge/facts';
import { CreatePillar } from '../../../commands/knowledge/pillars';
import {
  CreatePillarAnswer,
  DeleteFactsAnswer,
  FactAnswer,
  FactsPage,
  PatchFactAnswer,
  PillarsView,
  SearchAnswer,
} from '../../../queries/knowledge/views';
import * as knowledge from '../../app/knowledge';
import { Uuid } from '../../domain/schemas';
import { tool, READS, REPLACES, websiteRead } from '../tool';

const FactId = Uuid.describe('The fact id');
const GATE = 'Needs the knowledge base and website-admin rights (any key reaching the website).';

/** The knowledge base for assistants, with REST's rules and messages (src/app/knowledge.ts). */
export const knowledgeTools = [
  tool({
    name: 'create_pillar',
    title: 'Create a pillar',
    description: `Get or create a knowledge-base pillar (subject area) by name; a new one is researched and its facts await review. ${GATE}`,
    input: CreatePillar,
    output: CreatePillarAnswer,
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: true },
    handler: (ctx, input) => knowledge.createPillar(ctx, input),
  }),
  websiteRead({
    name: 'list_pillars',
    title: 'List pillars',
    description: `The website's knowledge-base pillars (subject areas) with their status and last research time. ${GATE}`,
    output: PillarsView,
    read: knowledge.listPillars,
  }),
  tool({
    name: 'list_brand_facts',
    title: 'List brand facts',
    description: `A page of the website's brand facts, newest first, by pillar or review status. ${GATE}`,
    input: knowledge.ListFactsQuery,
    output: FactsPage,
    annotations: READS,
    handler: (ctx, input) => knowledge.listFacts(ctx, input),
  }),
  tool({
    name: 'search_brand_facts',
    title: 'Search brand facts',
    description: `Full-text search of the website's approved brand facts, best first, each with its rank. ${GATE}`,
    input: knowledge.SearchFactsQuery,
    output: SearchAnswer,
    annotations: READS,
    handler: (ctx, input) => knowledge.searchFacts(ctx, input),
  }),
  tool({
    name: 'update_brand_fact',
    title: 'Update a brand fact',
    description: `Edit a fact's text, source_url or confidence; a new text makes a new fact (new id) and archives this one. ${GATE}`,
    input: PatchFactFields.extend({ fact_id: FactId }).refine(...somePatchField),
    output: PatchFactAnswer,
    // the same call again changes nothing more (a text change archived the fact: 404)
    annotations: REPLACES,
    handler: ({ deps, principal }, { fact_id, ...patch }) => knowledge.patchFact({ deps, principal }, fact_id, patch),
  }),
  tool({
    name: 'delete_brand_facts',
    title: 'Delete brand facts',
    description: `Delete 1 to 50 of the website's facts for good (texts erased); unknown ids come back in not_found_ids. ${GATE}`,
    input: DeleteFacts,
    output: DeleteFactsAnswer,
    annotations: REPLACES,
    handler: (ctx, input) => knowledge.deleteFacts(ctx, input),
  }),
  tool({
    name: 'review_brand_fact',
    title: 'Review a brand fact',
    description: `Approve or reject a fact; only approved facts are searched and used for content. ${GATE}`,
    input: ReviewFact.extend({ fact_id: FactId }),
    output: FactAnswer,
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
    handler: ({ deps, principal }, { fact_id, decision }) => knowledge.reviewFact({ deps, principal }, fact_id, { decision }),
  }),
];
