import { describe, expect, it } from 'vitest';
import { webhookEventTypes } from '../../commands/webhooks/event-types';
import { entryOf, type FeedMapping } from '../../projections/activity';
import { feed } from '../../src/areas';
import type { EventType } from '../../src/domain/events';
import type { TypedEvent } from '../../src/eventstore/port';

const event = (type: EventType, data: Record<string, unknown>) =>
  ({ id: 'e1', type, data, metadata: { organization_id: 'o1', website_id: 'w1' }, streamId: 's', position: 0n }) as unknown as TypedEvent;

/** Every variant of the event types whose entry's words depend on the event. */
const VARIANTS: [EventType, Record<string, unknown>][] = [
  ...['active', 'paused', 'deleted'].map((status): [EventType, Record<string, unknown>] => ['WebsiteStatusChanged', { website_id: 'w1', status }]),
  ...['finished', 'expired'].map((reason): [EventType, Record<string, unknown>] => ['RunEnded', { run_id: 'r1', reason }]),
  ['FactRecorded', { fact_id: 'f2', replaces: 'f1' }],
  ['FactRecorded', { fact_id: 'f1', replaces: null }],
  ...['approved', 'rejected'].map((review_status): [EventType, Record<string, unknown>] => ['FactReviewed', { fact_id: 'f1', review_status }]),
  ...['pitch', 'seo', 'discovery', 'content'].map((kind): [EventType, Record<string, unknown>] => ['JobFailed', { job_id: 'j1', kind }]),
];

describe('webhook event types', () => {
  it('given an area mapping an event into the feed, then a webhook can subscribe to its word with no other edit', () => {
    const mine: FeedMapping = { ...feed, TopicCreated: entryOf('widget', 'created', (e) => [e.data.topic_id]) };
    expect(webhookEventTypes(mine).has('widget.created')).toBe(true);
    expect(webhookEventTypes(feed).has('widget.created')).toBe(false);
  });

  it('given the feed of every area, then the types hold its words, alert.fired and webhook.test', () => {
    const types = webhookEventTypes(feed);
    expect(types.size).toBeGreaterThan(90);
    for (const t of ['topic.created', 'website.paused', 'run.expired', 'fact.approved', 'pitch.failed', 'alert.fired', 'webhook.test'])
      expect(types.has(t), t).toBe(true);
  });

  it('given every variant of an event whose words depend on it, then each entry is a word its mapping declares, and each declared word is given', () => {
    const given = new Map<EventType, Set<string>>();
    for (const [type, data] of VARIANTS) {
      const map = feed[type] as NonNullable<FeedMapping[EventType]>;
      const out = (map as (e: TypedEvent) => { entity_type: string; change_type: string } | null)(event(type, data));
      if (!out) continue;
      const word = `${out.entity_type}.${out.change_type}`;
      expect(map.words, `${type} ${JSON.stringify(data)}`).toContain(word);
      given.set(type, (given.get(type) ?? new Set()).add(word));
    }
    for (const [type, words] of given) expect([...words].sort(), type).toEqual([...(feed[type]?.words ?? [])].sort());
  });
});
