import type { DomainError } from '../../src/domain/errors';
import type { Position } from '../../src/eventstore/port';
import type { CommandContext } from '../handle';
import { type TrackResult, trackContent } from './track';

/** As the simulated engine makes a prompt's slug (src/engines/simulated.ts, slugify): the paths its answers cite. */
const slug = (s: string) =>
  s
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 60)
    .replace(/-+$/, '');

/**
 * The demo website's tracked pages (embedded first start): a few of its own and third-party pages that its simulated
 * answers cite (the engine's entity paths and third-party URLs built from the prompts' slugs), so the content listing
 * shows citation figures as soon as the history is in.
 */
export function trackDemoContent(
  ctx: CommandContext,
  website: { website_id: string; url: string; prompts: string[] },
): Promise<{ result: TrackResult; position: Position | null } | DomainError> {
  const host = new URL(website.url).host;
  const [p1, p2, p3] = website.prompts.map(slug);
  const urls = [
    { url: `https://${host}/pricing`, title: 'Pricing' },
    { url: `https://${host}/features`, title: 'Features' },
    { url: `https://${host}/compare`, title: 'Compare us' },
    ...(p1 ? [{ url: `https://www.g2.com/categories/${p1}` }] : []),
    ...(p2 ? [{ url: `https://en.wikipedia.org/wiki/${p2}` }] : []),
    ...(p3 ? [{ url: `https://www.forbes.com/advisor/${p3}/` }] : []),
  ];
  return trackContent(ctx, { website_id: website.website_id, website_url: website.url, urls }, { live: async () => new Set() });
}
