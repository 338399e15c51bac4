import { Catalog, type CatalogState, catalogStream } from '../../commands/catalog/catalog';
import { load } from '../../commands/handle';
import { Organization, organizationStream, type WebsiteState } from '../../commands/organizations/organization';
import type { EntityInput } from '../analysis/answer';
import type { CommandContext } from '../../commands/handle';
import { SYSTEM_ACTOR, type EventMetadata } from '../domain/events';
import { domainOf } from '../domain/urls';
import type { EngineWebsite } from '../engines/port';
import type { EventStore } from '../eventstore/port';

/** What a worker knows of a website when it does its work: the website itself and its catalogue, from the streams. */
export interface WebsiteContext {
  website: WebsiteState;
  catalog: CatalogState;
  /** the brand (is_self) and the competitors not removed, in the order analysis tracks them */
  entities: EntityInput[];
  /** the same as answer engines are told of them (names and domains) */
  engineWebsite: EngineWebsite;
}

/** How long a worker reuses what it read of a website: units of a run come in bursts, and a second is fresh enough. */
const TTL_MS = 1000;
const recent = new WeakMap<EventStore, Map<string, { at: number; value: Promise<WebsiteContext | null> }>>();

/**
 * The website and its catalogue as the streams have them, read at most once a second per website (a unit of work
 * depends on it only for what it asks; the first-answer marker still decides on the stream itself).
 */
export function websiteContext(
  store: EventStore,
  organizationId: string,
  websiteId: string,
  options: { fresh?: boolean } = {},
): Promise<WebsiteContext | null> {
  let byStore = recent.get(store);
  if (!byStore) recent.set(store, (byStore = new Map()));
  const now = Date.now();
  const hit = byStore.get(websiteId);
  if (hit && !options.fresh && now - hit.at < TTL_MS) return hit.value;
  const value = loadWebsiteContext(store, organizationId, websiteId);
  byStore.set(websiteId, { at: now, value });
  value.catch(() => byStore.delete(websiteId));
  if (byStore.size > 5000) byStore.delete(byStore.keys().next().value as string);
  return value;
}

/** Loads (cached by revision) the organization's and the catalogue's streams; null when the website is unknown. */
async function loadWebsiteContext(store: EventStore, organizationId: string, websiteId: string): Promise<WebsiteContext | null> {
  const [org, catalog] = await Promise.all([
    load(store, organizationStream(organizationId), Organization),
    load(store, catalogStream(websiteId), Catalog),
  ]);
  const website = org.state.websites.get(websiteId);
  if (!website) return null;
  const entities = trackedEntities(website, catalog.state);
  const engineWebsite: EngineWebsite = {
    brand: { name: website.name, domain: domainOf(website.url) ?? '' },
    competitors: entities
      .filter((e) => !e.is_self)
      .map((e) => ({ name: e.name, domain: domainOf(e.url ?? '') ?? '', identifiers: e.identifiers ?? [] })),
  };
  return { website, catalog: catalog.state, entities, engineWebsite };
}

export function trackedEntities(website: Pick<WebsiteState, 'id' | 'name' | 'url'>, catalog: CatalogState): EntityInput[] {
  const out: EntityInput[] = [{ id: website.id, name: website.name, is_self: true, identifiers: [], url: website.url }];
  for (const c of catalog.competitors.values()) {
    if (!c.removed) out.push({ id: c.id, name: c.name, is_self: false, identifiers: c.identifiers, url: c.url });
  }
  return out;
}

/** The context of the system's own writes on behalf of a message: correlated with the run that asked for it. */
export const systemContext = (store: EventStore, m: { id: string; metadata: EventMetadata }, now?: () => Date): CommandContext => ({
  store,
  organizationId: m.metadata.organization_id,
  websiteId: m.metadata.website_id ?? null,
  actor: SYSTEM_ACTOR,
  correlationId: m.metadata.correlation_id,
  causationId: m.id,
  now,
});
