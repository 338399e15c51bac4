import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Catalog, catalogStream } from '../../commands/catalog/catalog';
import { load, newEventsFor } from '../../commands/handle';
import { MalformedEventError, SYSTEM_ACTOR, UPCASTERS } from '../../src/domain/events';
import { newId } from '../../src/domain/ids';
import type { TestStore } from '../support/db';
import { sharedStore } from '../support/per-worker';

/** TopicCreated as it would have been stored before a breaking change renamed `title` to `name`. */
const olderTopicCreated = (topicId: string, title: string) => ({ type: 'TopicCreated', data: { topic_id: topicId, title } });
/** The upcaster that breaking change would register: version 1 to 2. */
const renameTitle = (d: unknown) => {
  const { title, ...rest } = d as { topic_id: string; title: string };
  return { ...rest, name: title };
};

describe('upcasting stored events', () => {
  let db: TestStore;
  beforeAll(async () => {
    db = await sharedStore();
  });
  afterAll(async () => db?.close());
  afterEach(() => {
    delete UPCASTERS.TopicCreated;
  });

  const ctx = () => ({ store: db.store, organizationId: newId(), actor: SYSTEM_ACTOR });

  it('given an event stored in an older shape, when its upcaster is registered, then load folds it in today’s shape', async () => {
    const websiteId = newId();
    await db.store.append(catalogStream(websiteId), newEventsFor(ctx(), [olderTopicCreated('t1', 'Pricing') as never]), 'no_stream');
    await expect(load(db.store, catalogStream(websiteId), Catalog)).rejects.toBeInstanceOf(MalformedEventError);

    UPCASTERS.TopicCreated = { 1: renameTitle };
    const { state } = await load(db.store, catalogStream(websiteId), Catalog);

    expect(state.topics.get('t1')?.name).toBe('Pricing');
  });

  it('given an older event and a registered upcaster, when an event of that type is appended, then it is stored with today’s version and not upcast again', async () => {
    const websiteId = newId();
    await db.store.append(catalogStream(websiteId), newEventsFor(ctx(), [olderTopicCreated('t1', 'Pricing') as never]), 'no_stream');
    UPCASTERS.TopicCreated = { 1: renameTitle };
    await db.store.append(catalogStream(websiteId), newEventsFor(ctx(), [{ type: 'TopicCreated', data: { topic_id: 't2', name: 'Billing' } }]), 0n);

    const stored = await db.store.readStream(catalogStream(websiteId));
    const { state } = await load(db.store, catalogStream(websiteId), Catalog);

    expect(stored.map((e) => e.metadata.schema_version)).toEqual([undefined, 2]);
    expect([...state.topics.values()].map((t) => t.name)).toEqual(['Pricing', 'Billing']);
  });
});
