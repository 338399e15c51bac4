import type { Knex } from 'knex';
import { z } from 'zod';
import { type Decision, type Handled, handle, newEventsFor } from '../../commands/handle';
import {
  type CreateFact,
  type DeleteFacts,
  type DeleteFactsResult,
  decideCreateFact,
  decideDeleteFacts,
  decidePatchFact,
  decideReviewFact,
  type PatchFact,
  type ReviewFact,
} from '../../commands/knowledge/facts';
import { KNOWLEDGE_MESSAGES, Knowledge, type KnowledgeState, knowledgeStream } from '../../commands/knowledge/knowledge';
import { type CreatePillar, decideCreatePillar, decideUpdatePillar, type UpdatePillar } from '../../commands/knowledge/pillars';
import * as knowledgeQueries from '../../queries/knowledge/knowledge';
import { approvedFactsByIds, type FactFilters, getFact, getLiveFact, getPillar, locate } from '../../queries/knowledge/knowledge';
import type { ApprovedFacts, FactsPage, FactView, PillarView, SearchAnswer } from '../../queries/knowledge/views';
import { type DomainError, DomainErrorException, forbidden, isDomainError, notFound } from '../domain/errors';
import { deterministicId, newId } from '../domain/ids';
import { jobStream } from '../domain/jobs';
import type { Need } from '../domain/principal';
import { boundedString, PageNum, PageSize, Uuid, WebsiteId } from '../domain/schemas';
import { type Caller, commandContextOf, dbOf, type Reads, settled, websiteFor, writeThenRead } from './context';

/**
 * The knowledge base (spec: Pillar, Brand fact, knowledge-base endpoints, Authentication 5; CONTRACT.md "Knowledge
 * base"): pillars, brand facts, their review, search, edits and deletes. Every endpoint needs the organization's
 * `knowledge_base` feature and a website-admin principal on the website (every API key within its scope; a signed-in
 * user with brand_knowledge at manage). Decisions run on the website's knowledge stream (commands/knowledge).
 */

export const KNOWLEDGE_BASE_NOT_ENABLED = 'Knowledge base is not enabled for this organization';
/** A website admin for the knowledge base. */
const WEBSITE_ADMIN: Need = { category: 'brand_knowledge', level: 'manage' };
const READS: Reads = ['knowledge'];

function gate(c: Caller): void {
  if (!c.principal.features.includes('knowledge_base')) throw new DomainErrorException(forbidden(KNOWLEDGE_BASE_NOT_ENABLED));
}

/** The website an operation addresses, for a website admin of an organization with the knowledge base. */
async function site(c: Caller, websiteId: string) {
  gate(c);
  return websiteFor(c, websiteId, WEBSITE_ADMIN);
}

/** What an id alone addresses: a pillar or a fact, and the 404 an unknown id gets. */
interface Addressed {
  kind: 'pillar' | 'fact';
  missing: string;
}
const PILLAR: Addressed = { kind: 'pillar', missing: KNOWLEDGE_MESSAGES.pillarNotFound };
const FACT: Addressed = { kind: 'fact', missing: KNOWLEDGE_MESSAGES.factNotFound };

/** The website of a pillar or fact addressed by id alone: another organization's id is 404, as an unknown one. */
async function siteOf(c: Caller, what: Addressed, id: string): Promise<string> {
  gate(c);
  const at = await locate(dbOf(c), what.kind, id);
  if (!at || at.organization_id !== c.principal.organizationId) throw new DomainErrorException(notFound(what.missing));
  await websiteFor(c, at.website_id, WEBSITE_ADMIN);
  return at.website_id;
}

function decideOn<R>(c: Caller, websiteId: string, decide: (s: KnowledgeState) => Decision<R> | DomainError) {
  return handle(commandContextOf(c, websiteId), knowledgeStream(websiteId), Knowledge, decide);
}

/**
 * writeThenRead, also when the decision appended nothing (an existing pillar, the same review again): what it read
 * on the stream may be another request's write the read model has not applied yet, so it waits for the log's head.
 */
async function written<R, T>(c: Caller, run: Promise<Handled<R> | DomainError>, read: (r: R) => Promise<T | undefined>): Promise<T> {
  const h = await run;
  if (isDomainError(h) || h.position !== null) return writeThenRead(c, Promise.resolve(h), READS, read);
  const head = await c.deps.rt.store.lastPosition();
  return writeThenRead(c, Promise.resolve({ ...h, position: head }), READS, read);
}

/**
 * A change of the pillar or fact addressed by id (a pillar's PATCH, a fact's review): decided on its website's stream,
 * then the row read back by that id (the decision answers the id it was given).
 */
async function changeAddressed<T>(
  c: Caller,
  what: Addressed,
  id: string,
  decide: (s: KnowledgeState) => Decision<unknown> | DomainError,
  read: (db: Knex, websiteId: string, id: string) => Promise<T | undefined>,
): Promise<T> {
  const websiteId = await siteOf(c, what, id);
  return written(c, decideOn(c, websiteId, decide), () => read(dbOf(c), websiteId, id));
}

const orNotFound = <T>(v: T | undefined, message: string): T => {
  if (v === undefined) throw new DomainErrorException(notFound(message));
  return v;
};

// ---- pillars ------------------------------------------------------------------------------------------------------

/**
 * The research of a new pillar (src/workers/pillar-research.ts): its job stream, opened once per pillar (the event id
 * is derived from the pillar, so asking again, after a crash between the pillar and its job, appends nothing).
 */
async function requestResearch(c: Caller, websiteId: string, pillarId: string): Promise<void> {
  const ctx = { ...commandContextOf(c, websiteId), causationId: pillarId };
  const events = newEventsFor(ctx, [
    {
      id: deterministicId('pillar-research-requested', pillarId),
      type: 'PillarResearchRequested',
      data: { job_id: pillarId, website_id: websiteId, pillar_id: pillarId },
    },
  ]);
  await c.deps.rt.store.append(jobStream('pillar_research', pillarId), events, 'any');
}

/** POST /knowledge-base/pillars: get-or-create by name (case-insensitive); a new pillar is `researching` and researched. */
export async function createPillar(c: Caller, input: CreatePillar): Promise<{ pillar: PillarView; created: boolean }> {
  const w = await site(c, input.website_id);
  const pillar_id = newId();
  let created = false;
  const pillar = await written(
    c,
    decideOn(c, w.id, (s) => decideCreatePillar(s, { ...input, pillar_id })),
    (r) => {
      created = r.created;
      return getPillar(dbOf(c), w.id, r.pillar_id);
    },
  );
  if (pillar.status === 'researching') await requestResearch(c, w.id, pillar.id);
  return { pillar, created };
}

export async function listPillars(c: Caller, websiteId: string): Promise<{ pillars: PillarView[] }> {
  const w = await site(c, websiteId);
  return { pillars: await knowledgeQueries.listPillars(dbOf(c), w.id) };
}

export async function updatePillar(c: Caller, pillarId: string, input: UpdatePillar): Promise<{ pillar: PillarView }> {
  const pillar = await changeAddressed(c, PILLAR, pillarId, (s) => decideUpdatePillar(s, pillarId, input), getPillar);
  return { pillar };
}

// ---- facts ------------------------------------------------------------------------------------------------------

/** POST /knowledge-base/facts: a manual fact, approved. */
export async function createFact(c: Caller, input: CreateFact): Promise<{ fact: FactView }> {
  const w = await site(c, input.website_id);
  const fact_id = newId();
  const fact = await written(
    c,
    decideOn(c, w.id, (s) => decideCreateFact(s, { ...input, fact_id })),
    (r) => getLiveFact(dbOf(c), w.id, r.fact_id),
  );
  return { fact };
}

const flag = z
  .enum(['true', 'false'], { error: 'must be true or false' })
  .transform((v) => v === 'true')
  .or(z.boolean());

export const ListFactsQuery = z
  .strictObject({
    website_id: WebsiteId,
    pillar_id: Uuid.optional().describe("Only this pillar's facts"),
    unfiled: flag.optional().describe('true: only facts without a pillar'),
    review_status: z
      .enum(['pending', 'approved', 'rejected'], { error: 'must be pending, approved or rejected' })
      .optional()
      .describe('Only facts in this review status'),
    include_oracle: flag.default(false).describe('Include facts from automated analysis (source_type oracle); default false'),
    include_duplicates: flag.default(false).describe('Include hidden duplicates (duplicate_of set); default false (extension)'),
    page_num: PageNum(true),
    page_size: PageSize(true),
  })
  .refine((q) => !(q.unfiled && q.pillar_id !== undefined), { message: 'give pillar_id or unfiled=true, not both', path: ['unfiled'] });
export type ListFactsQuery = z.output<typeof ListFactsQuery>;

export async function listFacts(c: Caller, q: ListFactsQuery): Promise<FactsPage> {
  const w = await site(c, q.website_id);
  const filters: FactFilters = { ...q, unfiled: q.unfiled ?? false };
  return knowledgeQueries.listFacts(dbOf(c), w.id, filters);
}

export const SEARCH_LIMIT_MAX = 50;
export const SearchFactsQuery = z.strictObject({
  website_id: WebsiteId,
  query: boundedString(500).describe('Words to find (web-search syntax: "quoted phrase", or, -word); English stemming'),
  limit: z.coerce
    .number({ error: 'must be an integer' })
    .int('must be an integer')
    .min(1, `must be between 1 and ${SEARCH_LIMIT_MAX}`)
    .max(SEARCH_LIMIT_MAX, `must be between 1 and ${SEARCH_LIMIT_MAX}`)
    .default(10)
    .describe(`Facts answered, 1 to ${SEARCH_LIMIT_MAX} (default 10)`),
});
export type SearchFactsQuery = z.output<typeof SearchFactsQuery>;

/** GET /knowledge-base/facts/search: the approved corpus only, best first. */
export async function searchFacts(c: Caller, q: SearchFactsQuery): Promise<SearchAnswer> {
  const w = await site(c, q.website_id);
  return knowledgeQueries.searchFacts(dbOf(c), w.id, q.query, q.limit);
}

export async function reviewFact(c: Caller, factId: string, input: ReviewFact): Promise<{ fact: FactView }> {
  const fact = await changeAddressed(c, FACT, factId, (s) => decideReviewFact(s, factId, input), getLiveFact);
  return { fact };
}

/**
 * PATCH /knowledge-base/facts/{id}: the fact as it is after, plus `before` (the addressed fact as it was). A text
 * change answers the new fact (new id); the addressed one is archived.
 */
export async function patchFact(c: Caller, factId: string, input: PatchFact): Promise<{ fact: FactView; before: FactView }> {
  const websiteId = await siteOf(c, FACT, factId);
  const before = orNotFound(await getLiveFact(dbOf(c), websiteId, factId), KNOWLEDGE_MESSAGES.factNotFound);
  const new_fact_id = newId();
  const fact = await written(
    c,
    decideOn(c, websiteId, (s) => decidePatchFact(s, factId, { ...input, new_fact_id, website_id: websiteId })),
    (r) => getFact(dbOf(c), websiteId, r.fact_id),
  );
  return { fact, before };
}

/** POST /knowledge-base/facts/delete: for good (their texts are erased); unknown or other websites' ids in not_found_ids. */
export async function deleteFacts(c: Caller, input: DeleteFacts): Promise<DeleteFactsResult> {
  const w = await site(c, input.website_id);
  return settled(
    c.deps,
    decideOn(c, w.id, (s) => decideDeleteFacts(s, input.fact_ids)),
    READS,
  );
}

/**
 * For grounded content generation (issue 18, item 7): the website's approved facts among `ids`, in the order asked,
 * and the ids that are not approved facts of the website (unknown, another website's, pending, rejected, archived,
 * deleted, hidden duplicates). Checks the knowledge-base gate and the caller's access to the website (403 otherwise);
 * the content pipeline answers 400 naming `not_approved_ids` when there are any, and gives the writer `facts` only.
 */
export async function approvedFacts(c: Caller, websiteId: string, ids: readonly string[]): Promise<ApprovedFacts> {
  const w = await site(c, websiteId);
  return approvedFactsByIds(dbOf(c), w.id, ids);
}
export { approvedFactsByIds };
