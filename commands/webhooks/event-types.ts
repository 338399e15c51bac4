import type { FeedMapping } from '../../projections/activity';

const known = new WeakMap<FeedMapping, ReadonlySet<string>>();

/**
 * Every event type a webhook can subscribe to: each `{entity_type}.{change_type}` the activity feed's entries can be
 * (the mapping the registry composes from the areas' manifests, handed in), then `alert.fired` and `webhook.test`.
 */
export function webhookEventTypes(feed: FeedMapping): ReadonlySet<string> {
  let types = known.get(feed);
  if (!types) known.set(feed, (types = new Set([...Object.values(feed).flatMap((m) => m.words), 'alert.fired', 'webhook.test'])));
  return types;
}
