import { isIP } from 'node:net';
import { z } from 'zod';
import { nameKey } from '../../src/analysis/entity-quality';
import { conflict, type DomainError } from '../../src/domain/errors';
import { deterministicId } from '../../src/domain/ids';
import { hostOf } from '../../src/domain/urls';
import { isPublicAddress } from '../../src/net/safe-fetch';
import { type AddCompetitor, decideAddCompetitor } from '../catalog/add-competitor';
import { type CatalogState, competitorView, type Written } from '../catalog/catalog';
import { Name, WebsiteId } from '../catalog/catalog-input';
import { SiteUrl } from '../websites/website-input';
import type { CommandContext, Decision } from '../handle';
import { newEventsFor } from '../handle';

export const suggestionsStream = (websiteId: string) => `competitor-suggestions-${websiteId}`;

/** A suggested name's id for the activity feed: derived from the website and the name's key. */
export const suggestionId = (websiteId: string, key: string) => deterministicId('competitor-suggestion', websiteId, key);

/** A host anyone can reach: not an IP literal of a private range, not a bare or local name. */
export function isPublicHost(url: string): boolean {
  const host = hostOf(url)?.replace(/^\[|\]$/g, '');
  if (!host) return false;
  if (isIP(host)) return isPublicAddress(host);
  return host.includes('.') && host !== 'localhost' && !/\.(local|localhost|internal|lan|home\.arpa)$/i.test(host);
}

const SuggestedName = Name.describe('The name as the suggestions list it (compared case-insensitively)');

export const AcceptSuggestion = z.strictObject({
  website_id: WebsiteId,
  name: SuggestedName,
  url: SiteUrl.refine(isPublicHost, 'must be a public http(s) URL or domain').describe("The competitor's public site, an http(s) URL or a domain"),
});
export type AcceptSuggestion = z.infer<typeof AcceptSuggestion>;

export const DismissSuggestion = z.strictObject({ website_id: WebsiteId, name: SuggestedName });
export type DismissSuggestion = z.infer<typeof DismissSuggestion>;

/** The 409 of accepting a name the website already tracks, naming it. */
export const alreadyTracked = (name: string) => `Competitor already tracked: ${name}`;

/**
 * Accepting a suggestion adds the competitor through add-competitor's own decision (same stream, same rules); a name
 * or identifier a live competitor already goes by is 409 naming it.
 */
export function decideAcceptSuggestion(
  s: CatalogState,
  cmd: AcceptSuggestion & { competitor_id: string; website_url: string },
): Decision<Written> | DomainError {
  const key = nameKey(cmd.name);
  for (const c of s.competitors.values()) {
    if (!c.removed && [c.name, ...c.identifiers].some((n) => nameKey(n) === key))
      return conflict(alreadyTracked(c.name), { existing: competitorView(c) });
  }
  const input: AddCompetitor & { competitor_id: string; website_url: string } = { ...cmd, identifiers: [] };
  return decideAddCompetitor(s, input);
}

/** A dismissal: one event per website and name (its id derived from them), so dismissing again appends nothing. */
export async function dismissSuggestion(ctx: CommandContext, input: DismissSuggestion) {
  const key = nameKey(input.name);
  const events = newEventsFor(ctx, [
    {
      id: deterministicId('competitor-suggestion-dismissed', input.website_id, key),
      type: 'CompetitorSuggestionDismissed',
      data: { website_id: input.website_id, name: input.name, key },
    },
  ]);
  return ctx.store.append(suggestionsStream(input.website_id), events, 'any');
}
