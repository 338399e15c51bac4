import { z } from 'zod';
import { conflict, type DomainError, invalid } from '../../src/domain/errors';
import { newId } from '../../src/domain/ids';
import { isUrlAtOrBelow, normalizeUrl } from '../../src/domain/urls';
import type { CommandContext, Decision } from '../handle';
import { SiteUrl } from '../websites/website-input';
import { type CatalogState, competitorView, handleCatalog, type Written } from './catalog';
import { Identifiers, Name, unique, WebsiteId } from './catalog-input';

export const AddCompetitor = z.strictObject({
  website_id: WebsiteId,
  name: Name.describe("The competitor's name (up to 200 characters); answers mention it by this name as a whole word"),
  url: SiteUrl.describe("The competitor's site, an http(s) URL or a domain; not the website's own URL or a page below it"),
  identifiers: Identifiers.optional().describe(
    'Other names the competitor goes by (at most 50, each up to 200 characters); an answer naming one mentions it',
  ),
});
export type AddCompetitor = z.infer<typeof AddCompetitor>;

/** The website the catalogue belongs to (its URL is immutable, so a decision may rely on it). */
export interface SiteRef {
  id: string;
  url: string;
}

export function decideAddCompetitor(
  s: CatalogState,
  cmd: AddCompetitor & { competitor_id: string; website_url: string },
): Decision<Written> | DomainError {
  if (isUrlAtOrBelow(cmd.url, cmd.website_url)) return invalid("url: a competitor must not be the website's own URL or a page below it");
  const normalized_url = normalizeUrl(cmd.url);
  for (const c of s.competitors.values()) {
    if (!c.removed && c.normalized_url === normalized_url) return conflict('Competitor already exists', { existing: competitorView(c) });
  }
  const data = { competitor_id: cmd.competitor_id, name: cmd.name, url: cmd.url, normalized_url, identifiers: unique(cmd.identifiers ?? []) };
  return { events: [{ type: 'CompetitorAdded', data }], result: { id: data.competitor_id } };
}

export function addCompetitor(ctx: CommandContext, input: AddCompetitor & { website_url: string }) {
  const competitor_id = newId();
  return handleCatalog(ctx, input.website_id, (s) => decideAddCompetitor(s, { ...input, competitor_id }));
}
