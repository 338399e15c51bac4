import { z } from 'zod';
import type { DomainEvent } from '../../src/domain/events';
import { isDomainError } from '../../src/domain/errors';
import { newId } from '../../src/domain/ids';
import { isUrlAtOrBelow, normalizeUrl } from '../../src/domain/urls';
import { boundedString, label } from '../../src/domain/schemas';
import { newEventsFor, type CommandContext } from '../handle';
import { createWebsite } from './create-website';
import { CreateWebsite, SiteUrl } from './website-input';

export const catalogStream = (websiteId: string) => `catalog-${websiteId}`;

export const ProvisionWebsite = CreateWebsite.extend({
  competitors: z
    .array(z.strictObject({ name: label(200), url: SiteUrl, identifiers: z.array(label(200)).max(50).optional() }))
    .max(100)
    .default([]),
  topics: z
    .array(
      z.strictObject({
        name: label(200),
        prompts: z
          .array(z.strictObject({ text: boundedString(2000), type: z.enum(['branded', 'non_branded']).optional() }))
          .max(500)
          .default([]),
      }),
    )
    .max(200)
    .default([]),
});
export type ProvisionWebsite = z.infer<typeof ProvisionWebsite>;

/** The catalogue events of a new website; a competitor at or below the site's own URL is ignored. */
export function provisionCatalog(input: ProvisionWebsite, ids: () => string = newId) {
  const events: DomainEvent[] = [];
  const competitors: { id: string; name: string; url: string; normalized_url: string; identifiers: string[] }[] = [];
  const ignored: { name: string; url: string; reason: string }[] = [];
  for (const c of input.competitors) {
    if (isUrlAtOrBelow(c.url, input.url)) {
      ignored.push({ name: c.name, url: c.url, reason: "the website's own URL or below it" });
      continue;
    }
    const data = { competitor_id: ids(), name: c.name, url: c.url, normalized_url: normalizeUrl(c.url), identifiers: c.identifiers ?? [] };
    events.push({ type: 'CompetitorAdded', data });
    competitors.push({ id: data.competitor_id, name: data.name, url: data.url, normalized_url: data.normalized_url, identifiers: data.identifiers });
  }
  const topics = input.topics.map((t) => {
    const topic_id = ids();
    events.push({ type: 'TopicCreated', data: { topic_id, name: t.name } });
    const prompts = t.prompts.map((p) => {
      const prompt_id = ids();
      const type = p.type ?? 'non_branded';
      events.push({ type: 'PromptCreated', data: { prompt_id, text: p.text, topic_id, type, status: 'active', tags: [] } });
      return { id: prompt_id, text: p.text, topic_id, type, status: 'active' as const, tags: [] as string[] };
    });
    return { id: topic_id, name: t.name, prompts };
  });
  return { events, competitors, topics, ignored_competitors: ignored };
}

/**
 * Writes the catalogue stream first, then the website into the organization stream. A crash in between leaves
 * only an unreachable catalogue (its website never appears), so callers see all of it or none.
 */
export async function provisionWebsite(ctx: CommandContext, input: ProvisionWebsite) {
  const websiteId = newId();
  const catalog = provisionCatalog(input);
  if (catalog.events.length) {
    await ctx.store.append(catalogStream(websiteId), newEventsFor({ ...ctx, websiteId }, catalog.events), 'no_stream');
  }
  const r = await createWebsite(ctx, { name: input.name, url: input.url, external_id: input.external_id }, websiteId);
  if (isDomainError(r)) return r;
  return {
    ...r,
    result: { website: r.result, competitors: catalog.competitors, topics: catalog.topics, ignored_competitors: catalog.ignored_competitors },
  };
}
