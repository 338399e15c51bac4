import { z } from 'zod';
import { type DomainError, notFound } from '../../src/domain/errors';
import type { DomainEvent } from '../../src/domain/events';
import type { CommandContext, Decision } from '../handle';
import { type CatalogState, handleCatalog, type Written } from './catalog';
import { Identifiers, NewName, sameList, unique, WebsiteId } from './catalog-input';

export const UpdateCompetitor = z
  .strictObject({
    website_id: WebsiteId,
    name: NewName,
    identifiers: Identifiers.optional().describe('Replaces the other names the competitor goes by (at most 50); omitted = unchanged'),
  })
  .refine((b) => b.name !== undefined || b.identifiers !== undefined, { message: 'name or identifiers is required', path: [] });
export type UpdateCompetitor = z.infer<typeof UpdateCompetitor>;

export const COMPETITOR_NOT_FOUND = 'Competitor not found';

/** Rename and/or replace the identifiers; what is unchanged appends nothing. */
export function decideUpdateCompetitor(s: CatalogState, competitorId: string, cmd: UpdateCompetitor): Decision<Written> | DomainError {
  const c = s.competitors.get(competitorId);
  if (!c || c.removed) return notFound(COMPETITOR_NOT_FOUND);
  const events: DomainEvent[] = [];
  if (cmd.name !== undefined && cmd.name !== c.name) {
    events.push({ type: 'CompetitorRenamed', data: { competitor_id: c.id, name: cmd.name } });
  }
  if (cmd.identifiers !== undefined) {
    const identifiers = unique(cmd.identifiers);
    if (!sameList(identifiers, c.identifiers)) {
      events.push({ type: 'CompetitorIdentifiersChanged', data: { competitor_id: c.id, identifiers } });
    }
  }
  return { events, result: { id: c.id } };
}

export function updateCompetitor(ctx: CommandContext, input: UpdateCompetitor & { competitor_id: string }) {
  const { competitor_id, ...change } = input;
  return handleCatalog(ctx, input.website_id, (s) => decideUpdateCompetitor(s, competitor_id, change));
}
