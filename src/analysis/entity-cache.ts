import { type CompiledEntities, compileEntities, type EntityInput } from './answer';

const MAX = 500;
const cache = new Map<string, CompiledEntities>();

/**
 * The compiled form of a website's tracked entities, shared by everything that analyzes its answers (projection,
 * listing, extractor). Keyed by content, so a changed catalogue compiles anew and a rolled-back change leaves no
 * stale entry behind.
 */
export function compiledEntities(websiteId: string, entities: readonly EntityInput[]): CompiledEntities {
  const key = `${websiteId}\u0000${JSON.stringify(entities.map((e) => [e.id, e.name, e.is_self, e.identifiers ?? [], e.url ?? null]))}`;
  let c = cache.get(key);
  if (c) {
    cache.delete(key);
    cache.set(key, c);
    return c;
  }
  c = compileEntities(entities);
  cache.set(key, c);
  if (cache.size > MAX) cache.delete(cache.keys().next().value as string);
  return c;
}
