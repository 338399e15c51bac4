import { z } from 'zod';
import { handleCatalog } from '../../commands/catalog/catalog';
import { CONFLICT_NOT_FOUND, conflictStream, decideCloseConflict, FactConflict } from '../../commands/entity-quality/conflicts';
import {
  type AcceptSuggestion,
  alreadyTracked,
  decideAcceptSuggestion,
  type DismissSuggestion,
  dismissSuggestion,
} from '../../commands/entity-quality/suggestions';
import { handle } from '../../commands/handle';
import { getCompetitor } from '../../queries/catalog/competitors';
import { getConflict, listConflicts, locateConflict } from '../../queries/entity-quality/conflicts';
import { listSuggestions } from '../../queries/entity-quality/suggestions';
import { CONFLICT_STATUSES, type ConflictView, type SuggestionsAnswer } from '../../queries/entity-quality/views';
import { nameKey } from '../analysis/entity-quality';
import { filterDateSchema, utcDay } from '../domain/dates';
import { endNotBeforeStart } from '../domain/filters';
import { conflict, DomainErrorException, forbidden, notFound } from '../domain/errors';
import { newId } from '../domain/ids';
import type { Need } from '../domain/principal';
import { Uuid, WebsiteId } from '../domain/schemas';
import { type Caller, commandContextOf, dbOf, readWritten, settle, websiteFor, written, writeThenRead } from './context';
import { KNOWLEDGE_BASE_NOT_ENABLED } from './knowledge';

/**
 * Entity quality (CONTRACT "Answer evidence", Competitor suggestions and Fact conflicts): the names answers put forward
 * that nobody tracks, accepted as competitors or dismissed; and answers contradicting the brand's approved facts.
 */

const COMPETITORS_VIEW: Need = { category: 'competitors', level: 'view' };
const COMPETITORS_EDIT: Need = { category: 'competitors', level: 'edit' };
const KNOWLEDGE_VIEW: Need = { category: 'brand_knowledge', level: 'view' };
const KNOWLEDGE_MANAGE: Need = { category: 'brand_knowledge', level: 'manage' };

export const DEFAULT_MIN_ANSWERS = 3;
const MAX_MIN_ANSWERS = 1_000_000;

export const SuggestionsQuery = z
  .strictObject({
    website_id: WebsiteId,
    start_date: filterDateSchema('start').optional().describe('First day counted (ISO date); omitted = all history'),
    end_date: filterDateSchema('end').optional().describe('Last day counted (ISO date); omitted = up to now'),
    min_answers: z.coerce
      .number({ error: 'must be an integer' })
      .int('must be an integer')
      .min(1, `must be between 1 and ${MAX_MIN_ANSWERS}`)
      .max(MAX_MIN_ANSWERS, `must be between 1 and ${MAX_MIN_ANSWERS}`)
      .default(DEFAULT_MIN_ANSWERS)
      .describe(`Answers a name needs to be suggested (default ${DEFAULT_MIN_ANSWERS})`),
  })
  .superRefine(endNotBeforeStart);
export type SuggestionsQuery = z.output<typeof SuggestionsQuery>;

/** GET /competitors/suggestions: from the read model, most answers first. */
export async function competitorSuggestions(c: Caller, q: SuggestionsQuery): Promise<SuggestionsAnswer> {
  const w = await websiteFor(c, q.website_id, COMPETITORS_VIEW);
  return listSuggestions(dbOf(c), w.id, {
    from: q.start_date && utcDay(q.start_date),
    to: q.end_date && utcDay(q.end_date),
    min_answers: q.min_answers,
  });
}

/** POST /competitors/suggestions/accept: the competitor added through the catalogue's own decision, 201 with it. */
export async function acceptSuggestion(c: Caller, input: AcceptSuggestion) {
  const w = await websiteFor(c, input.website_id, COMPETITORS_EDIT);
  if (nameKey(w.name) === nameKey(input.name)) throw new DomainErrorException(conflict(alreadyTracked(w.name)));
  const competitor_id = newId();
  const ctx = commandContextOf(c, w.id);
  const competitor = await writeThenRead(
    c,
    handleCatalog(ctx, w.id, (s) => decideAcceptSuggestion(s, { ...input, website_id: w.id, competitor_id, website_url: w.url })),
    ['catalog'],
    (r) => getCompetitor(dbOf(c), w.id, r.id),
  );
  return { competitor };
}

/** POST /competitors/suggestions/dismiss: the name is never suggested again (dismissing twice changes nothing). */
export async function dismissCompetitorSuggestion(c: Caller, input: DismissSuggestion) {
  const w = await websiteFor(c, input.website_id, COMPETITORS_EDIT);
  await written(c.deps, dismissSuggestion(commandContextOf(c, w.id), { ...input, website_id: w.id }), ['competitor_suggestions']);
  return { name: input.name, dismissed: true as const };
}

function gate(c: Caller): void {
  if (!c.principal.features.includes('knowledge_base')) throw new DomainErrorException(forbidden(KNOWLEDGE_BASE_NOT_ENABLED));
}

export const ConflictsQuery = z.strictObject({
  website_id: WebsiteId,
  status: z
    .enum(CONFLICT_STATUSES, { error: `must be one of ${CONFLICT_STATUSES.join(', ')}` })
    .default('open')
    .describe('open (default), resolved or dismissed'),
});
export type ConflictsQuery = z.output<typeof ConflictsQuery>;

/** GET /knowledge-base/conflicts: one status's conflicts, newest first. */
export async function factConflicts(c: Caller, q: ConflictsQuery): Promise<{ conflicts: ConflictView[] }> {
  gate(c);
  const w = await websiteFor(c, q.website_id, KNOWLEDGE_VIEW);
  return { conflicts: await listConflicts(dbOf(c), w.id, q.status) };
}

export const ConflictParams = z.strictObject({ id: Uuid.describe('The conflict id') });

/** POST /knowledge-base/conflicts/{id}/resolve|dismiss: decided on the conflict's stream; another organization's id is 404. */
export async function closeConflict(c: Caller, id: string, to: 'resolved' | 'dismissed'): Promise<{ conflict: ConflictView }> {
  gate(c);
  const at = await locateConflict(dbOf(c), id);
  if (!at || at.organization_id !== c.principal.organizationId) throw new DomainErrorException(notFound(CONFLICT_NOT_FOUND));
  const w = await websiteFor(c, at.website_id, KNOWLEDGE_MANAGE);
  const h = await written(
    c.deps,
    handle(commandContextOf(c, w.id), conflictStream(id), FactConflict, (s) => decideCloseConflict(s, id, to)),
    ['fact_conflicts'],
  );
  // nothing appended (the same decision again): what the stream held may be another request's, not applied yet
  if (h.position === null) await settle(c.deps, await c.deps.rt.store.lastPosition(), ['fact_conflicts']);
  return { conflict: await readWritten(() => getConflict(dbOf(c), w.id, id)) };
}
