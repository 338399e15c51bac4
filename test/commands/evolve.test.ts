import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Catalog, type CatalogEvent, type CatalogState } from '../../commands/catalog/catalog';
import { type Aggregate, load, newEventsFor } from '../../commands/handle';
import { Organization } from '../../commands/organizations/organization';
import { RunSlot, type RunSlotEvent } from '../../commands/responses/run-slot';
import { type DomainEvent, type EventOf, exhaustive, SYSTEM_ACTOR } from '../../src/domain/events';
import { newId } from '../../src/domain/ids';
import type { TestStore } from '../support/db';
import { sharedStore } from '../support/per-worker';

/** A state as plain JSON (maps and sets as sorted entries), to compare states and see whether one changed. */
const snapshot = (s: unknown) =>
  JSON.stringify(s, (_k, v) => {
    if (v instanceof Map) return [...v.entries()].sort(([a], [b]) => String(a).localeCompare(String(b)));
    if (v instanceof Set) return [...v].sort();
    return v;
  });

const id = (prefix: string, n = 3) => fc.integer({ min: 1, max: n }).map((i) => `${prefix}${i}`);
const name = fc.constantFrom('Alpha', 'beta', 'Gamma');
const ids = (prefix: string) => fc.uniqueArray(id(prefix, 4), { maxLength: 3 });
const nullable = <T>(a: fc.Arbitrary<T>) => fc.option(a, { nil: null });

/** Catalogue events over a few ids, so that events meet the entities earlier ones made. */
const catalogEvent: fc.Arbitrary<DomainEvent> = fc.oneof(
  fc
    .record({
      competitor_id: id('c'),
      name,
      url: fc.constant('https://c.example'),
      normalized_url: fc.constant('c.example/'),
      identifiers: fc.array(name, { maxLength: 2 }),
    })
    .map((data) => ({ type: 'CompetitorAdded' as const, data })),
  fc.record({ competitor_id: id('c'), name }).map((data) => ({ type: 'CompetitorRenamed' as const, data })),
  fc
    .record({ competitor_id: id('c'), identifiers: fc.array(name, { maxLength: 2 }) })
    .map((data) => ({ type: 'CompetitorIdentifiersChanged' as const, data })),
  fc.record({ competitor_id: id('c') }).map((data) => ({ type: 'CompetitorRemoved' as const, data })),
  fc.record({ topic_id: id('t'), name }).map((data) => ({ type: 'TopicCreated' as const, data })),
  fc.record({ topic_id: id('t'), name, soft_deleted_prompt_ids: ids('p') }).map((data) => ({ type: 'TopicDeleted' as const, data })),
  fc.record({ topic_id: id('t'), name, restored_prompt_ids: ids('p') }).map((data) => ({ type: 'TopicRestored' as const, data })),
  fc
    .record({
      prompt_id: id('p', 4),
      text: name,
      topic_id: nullable(id('t')),
      type: fc.constantFrom('branded' as const, 'non_branded' as const),
      status: fc.constantFrom('active' as const, 'paused' as const),
      tags: fc.array(name, { maxLength: 2 }),
    })
    .map((data) => ({ type: 'PromptCreated' as const, data })),
  fc
    .record(
      { prompt_id: id('p', 4), status: fc.constantFrom('active' as const, 'paused' as const), tags: fc.array(name, { maxLength: 2 }) },
      { requiredKeys: ['prompt_id'] },
    )
    .map((data) => ({ type: 'PromptUpdated' as const, data })),
  fc.record({ prompt_id: id('p', 4), soft_deleted: fc.boolean() }).map((data) => ({ type: 'PromptDeleted' as const, data })),
  fc.record({ prompt_id: id('p', 4) }).map((data) => ({ type: 'PromptAnswered' as const, data })),
  fc.record({ persona_id: id('r'), name, description: nullable(name) }).map((data) => ({ type: 'PersonaCreated' as const, data })),
  fc
    .record({ location_id: id('l'), location: name, country: name, region: nullable(name), city: nullable(name) })
    .map((data) => ({ type: 'LocationCreated' as const, data })),
  fc
    .record({
      schedule_id: id('s'),
      name,
      models: fc.array(name, { minLength: 1, maxLength: 2 }),
      starts_on: fc.constant(null),
      ends_on: fc.constant(null),
      frequency: fc.constantFrom('daily' as const, 'weekly' as const),
      is_active: fc.boolean(),
    })
    .map((data) => ({ type: 'PromptScheduleCreated' as const, data })),
  fc
    .record({ schedule_id: id('s'), name, is_active: fc.boolean() }, { requiredKeys: ['schedule_id'] })
    .map((data) => ({ type: 'PromptScheduleUpdated' as const, data })),
  fc.record({ schedule_id: id('s') }).map((data) => ({ type: 'PromptScheduleArchived' as const, data })),
  fc
    .record({ view_id: id('v'), name, filters: fc.dictionary(name, fc.integer(), { maxKeys: 2 }) })
    .map((data) => ({ type: 'SavedViewCreated' as const, data })),
  fc
    .record({ view_id: id('v'), name, filters: fc.dictionary(name, fc.integer(), { maxKeys: 2 }) }, { requiredKeys: ['view_id'] })
    .map((data) => ({ type: 'SavedViewUpdated' as const, data })),
  fc.record({ attribute_id: id('a'), name, description: nullable(name) }).map((data) => ({ type: 'AttributeCreated' as const, data })),
);

const organizationEvent: fc.Arbitrary<DomainEvent> = fc.oneof(
  fc
    .record({
      organization_id: fc.constant('o1'),
      name,
      plan: fc.constantFrom('free' as const, 'pro' as const),
      features: fc.subarray(['pitch' as const, 'shopping' as const]),
      pitch_allowance: fc.nat(20),
    })
    .map((data) => ({ type: 'OrganizationCreated' as const, data })),
  fc
    .record({ user_id: id('u'), email: name, role: fc.constantFrom('owner' as const, 'admin' as const, 'viewer' as const) })
    .map((data) => ({ type: 'UserAdded' as const, data })),
  fc
    .record({
      api_key_id: id('k'),
      name,
      key_hash: name,
      key_prefix: name,
      user_id: nullable(id('u')),
      website_ids: nullable(ids('w')),
      partner: fc.boolean(),
    })
    .map((data) => ({ type: 'ApiKeyCreated' as const, data })),
  fc.record({ api_key_id: id('k') }).map((data) => ({ type: 'ApiKeyRevoked' as const, data })),
  fc
    .record({
      website_id: id('w'),
      name,
      url: fc.constant('https://w.example'),
      normalized_url: fc.constant('w.example/'),
      external_id: nullable(name),
    })
    .map((data) => ({ type: 'WebsiteCreated' as const, data })),
  fc.record({ website_id: id('w'), external_id: nullable(name) }).map((data) => ({ type: 'WebsiteExternalIdSet' as const, data })),
  fc
    .record({ website_id: id('w'), status: fc.constantFrom('active' as const, 'paused' as const, 'deleted' as const) })
    .map((data) => ({ type: 'WebsiteStatusChanged' as const, data })),
);

const runSlotEvent: fc.Arbitrary<DomainEvent> = fc.oneof(
  fc
    .record({
      run_id: id('r', 4),
      website_id: fc.constant('w1'),
      schedule_id: fc.constant(null),
      expires_at: fc.constant('2026-03-01T12:00:00.000Z'),
    })
    .map((data) => ({ type: 'RunSlotTaken' as const, data })),
  fc
    .record({
      run_id: id('r', 4),
      website_id: fc.constant('w1'),
      schedule_id: fc.constant(null),
      reason: fc.constantFrom('finished' as const, 'expired' as const),
    })
    .map((data) => ({ type: 'RunEnded' as const, data })),
);

const aggregates: [string, Aggregate<unknown, any>, fc.Arbitrary<DomainEvent>][] = [
  ['Catalog', Catalog as Aggregate<unknown, any>, catalogEvent],
  ['Organization', Organization as Aggregate<unknown, any>, organizationEvent],
  ['RunSlot', RunSlot as Aggregate<unknown, any>, runSlotEvent],
];

describe.each(aggregates)('%s.evolve', (_name, agg, event) => {
  const fold = (events: DomainEvent[]) => events.reduce(agg.evolve, agg.initial());

  it('given a state, when two events are evolved from it in the same tick, then each result is its own and the state is untouched', () => {
    fc.assert(
      fc.property(fc.array(event, { maxLength: 40 }), event, event, (history, e1, e2) => {
        const before = fold(history);
        const was = snapshot(before);
        const one = agg.evolve(before, e1);
        const two = agg.evolve(before, e2);
        expect(snapshot(before)).toBe(was);
        expect(snapshot(one)).toBe(snapshot(fold([...history, e1])));
        expect(snapshot(two)).toBe(snapshot(fold([...history, e2])));
      }),
      { numRuns: 300 },
    );
  });

  it("given a state, when load's replay folds events into its own copy, then it ends where evolve does and the state is untouched", () => {
    fc.assert(
      fc.property(fc.array(event, { maxLength: 40 }), fc.array(event, { minLength: 1, maxLength: 20 }), (history, more) => {
        const before = fold(history);
        const was = snapshot(before);
        const replayed = more.reduce(agg.replay!.apply, agg.replay!.own(before));
        expect(snapshot(before)).toBe(was);
        expect(snapshot(replayed)).toBe(snapshot(more.reduce(agg.evolve, before)));
      }),
      { numRuns: 300 },
    );
  });
});

describe('exhaustive', () => {
  it('given a stream’s union, when an evolve leaves one of its types without a case, then tsc refuses it (checked by tsc --noEmit)', () => {
    const takenOnly = (s: number, e: RunSlotEvent) => {
      switch (e.type) {
        case 'RunSlotTaken':
          return s + 1;
        default:
          // @ts-expect-error RunEnded is in the run slot's union and has no case
          return exhaustive(e, s);
      }
    };
    expect(takenOnly(0, { type: 'RunEnded', data: { run_id: 'r1', website_id: 'w1', schedule_id: null, reason: 'finished' } })).toBe(0);
  });
});

describe('load', () => {
  let db: TestStore;
  beforeAll(async () => {
    db = await sharedStore();
  });
  afterAll(async () => db?.close());

  const append = (stream: string, events: DomainEvent[]) =>
    db.store.append(stream, newEventsFor({ store: db.store, organizationId: newId(), actor: SYSTEM_ACTOR }, events), 'any');

  it('given a long stream, then replay copies the state once and applies each event in place, never through evolve', async () => {
    const stream = `catalog-${newId()}`;
    const events: DomainEvent[] = Array.from({ length: 10_000 }, (_, i) => ({
      type: 'TopicCreated',
      data: { topic_id: `t${i}`, name: `Topic ${i}` },
    }));
    for (let i = 0; i < events.length; i += 1000) await append(stream, events.slice(i, i + 1000));
    const calls = { own: 0, apply: 0, evolve: 0 };
    const counted: Aggregate<CatalogState, CatalogEvent> = {
      types: Catalog.types,
      initial: Catalog.initial,
      evolve: (s, e) => (calls.evolve++, Catalog.evolve(s, e)),
      replay: { own: (s) => (calls.own++, Catalog.replay!.own(s)), apply: (s, e) => (calls.apply++, Catalog.replay!.apply(s, e)) },
    };
    const first = await load(db.store, stream, counted);
    expect(first.state.topics.size).toBe(10_000);
    // a fresh load folds into initial(), which nobody else holds: no copy at all
    expect(calls).toEqual({ own: 0, apply: 10_000, evolve: 0 });
    await append(
      stream,
      events.slice(0, 3).map((_e, i) => ({ type: 'TopicCreated', data: { topic_id: `more${i}`, name: `More ${i}` } })),
    );
    const second = await load(db.store, stream, counted);
    expect(calls).toEqual({ own: 1, apply: 10_003, evolve: 0 });
    expect(second.state.topics.size).toBe(10_003);
  });

  it('given a cached state, when the stream grows and is loaded again, then the state the first load returned is unchanged', async () => {
    const stream = `org-${newId()}`;
    await append(stream, [
      {
        type: 'ApiKeyCreated',
        data: { api_key_id: 'k1', name: 'k', key_hash: 'h', key_prefix: 'p', user_id: null, website_ids: null, partner: false },
      },
      { type: 'WebsiteCreated', data: { website_id: 'w1', name: 'W', url: 'https://w.example', normalized_url: 'w.example/', external_id: null } },
    ]);
    const first = await load(db.store, stream, Organization);
    const was = snapshot(first.state);
    await append(stream, [
      { type: 'ApiKeyRevoked', data: { api_key_id: 'k1' } },
      { type: 'WebsiteStatusChanged', data: { website_id: 'w1', status: 'deleted' } },
    ]);
    const second = await load(db.store, stream, Organization);
    expect(snapshot(first.state)).toBe(was);
    expect(second.state.keys.get('k1')?.revoked).toBe(true);
    expect(second.state.websites.get('w1')?.status).toBe('deleted');
  });

  it('given a stream loaded through one aggregate, when another aggregate loads it, then it folds the stream itself, never served the first shape', async () => {
    const stream = `catalog-${newId()}`;
    await append(stream, [{ type: 'TopicCreated', data: { topic_id: 't1', name: 'Pricing' } }]);
    await load(db.store, stream, Catalog);
    const names: Aggregate<string[], EventOf<'TopicCreated'>> = { types: ['TopicCreated'], initial: () => [], evolve: (s, e) => [...s, e.data.name] };
    const other = await load(db.store, stream, names);
    expect(other.state).toEqual(['Pricing']);
    expect((await load(db.store, stream, Catalog)).state.topics.get('t1')?.name).toBe('Pricing');
  });
});
