import { type CompiledEntities, compileEntities, type EntityInput } from './answer';

const MAX = 500;
const cache = new Map<string, CompiledEntities>();
/**
 * The same list object asked again (a projection batch passes one website's list for each of its answers): its
 * compiled form without building the content key, a JSON text of every entity, once per answer (4% of the import's
 * profile). Lists are read-only (`readonly EntityInput[]`); one changed in place would be a caller's bug.
 */
const byList = new WeakMap<readonly EntityInput[], { websiteId: string; compiled: CompiledEntities }>();

/**
 * The compiled form of a website's tracked entities, shared by everything that analyzes its answers (projection,
 * listing, extractor). Keyed by content, so a changed catalogue compiles anew and a rolled-back change leaves no
 * stale entry behind.
 */
export function compiledEntities(websiteId: string, entities: readonly EntityInput[]): CompiledEntities {
  const known = byList.get(entities);
  if (known && known.websiteId === websiteId) return known.compiled;
  const compiled = compiledByContent(websiteId, entities);
  byList.set(entities, { websiteId, compiled });
  return compiled;
}

function compiledByContent(websiteId: string, entities: readonly EntityInput[]): CompiledEntities {
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
