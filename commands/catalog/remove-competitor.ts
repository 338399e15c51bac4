import { type DomainError, notFound } from '../../src/domain/errors';
import type { CommandContext, Decision } from '../handle';
import { type CatalogState, handleCatalog } from './catalog';
import { COMPETITOR_NOT_FOUND } from './update-competitor';

/** The competitor leaves the website's entity set (its past events stay in the log). */
export function decideRemoveCompetitor(s: CatalogState, competitorId: string): Decision<{ success: true }> | DomainError {
  const c = s.competitors.get(competitorId);
  if (!c || c.removed) return notFound(COMPETITOR_NOT_FOUND);
  return { events: [{ type: 'CompetitorRemoved', data: { competitor_id: c.id } }], result: { success: true } };
}

export function removeCompetitor(ctx: CommandContext, input: { website_id: string; competitor_id: string }) {
  return handleCatalog(ctx, input.website_id, (s) => decideRemoveCompetitor(s, input.competitor_id));
}
