import { describe, expect, it } from 'vitest';
import * as events from '../../src/domain/events';
import { probeEvents } from '../support/erasure-probe';

// The catalogue is the spread of its groups, one per kind of stream: a type written in two groups would silently
// keep the later group's schema, so each type must stand in exactly one. The erasure probe's test-only events join the
// catalogue in every worker that imports it (imported here too, so the catalogue's types are the same whatever ran first).
const groups = Object.entries(events).filter(([name]) => name.endsWith('Events')) as [string, Record<string, unknown>][];

describe('event catalogue groups', () => {
  it('given the groups of the catalogue, then every event type stands in exactly one, with the schema the catalogue holds', () => {
    const seen = new Map<string, string>();
    for (const [name, group] of groups) {
      for (const [type, schema] of Object.entries(group)) {
        expect(seen.get(type), `${type} in ${name} and ${seen.get(type)}`).toBeUndefined();
        seen.set(type, name);
        expect(events.catalogue[type as events.EventType]).toBe(schema);
      }
    }
    expect([...seen.keys(), ...Object.keys(probeEvents)].sort()).toEqual(events.knownEventTypes().sort());
  });
});
