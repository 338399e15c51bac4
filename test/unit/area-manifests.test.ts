import { describe, expect, it } from 'vitest';
import { areas, feed, JOB_KINDS, readModels } from '../../src/areas';
import type { AreaManifest } from '../../src/areas/manifest';
import { knownEventTypes } from '../../src/domain/events';
import { probeEvents } from '../support/erasure-probe';

type Area = AreaManifest<string>;

/** What each area claims, by name: its events (mapped into the feed or left out), routes, tools, read models, job kinds. */
const claims = (all: readonly Area[]) => ({
  events: all.map((a) => [...Object.keys(a.feed ?? {}), ...(a.notInFeed ?? []).flatMap((l) => l.types)]),
  routes: all.map((a) => (a.routes ?? []).map((r) => `${r.method} ${r.url}`)),
  tools: all.map((a) => (a.tools ?? []).map((t) => t.name)),
  'read models': all.map((a) => Object.keys(a.readModels ?? {})),
  'job kinds': all.map((a) => Object.keys(a.jobs ?? {})),
});

/** Names claimed more than once, across areas or within one. */
const twice = (lists: string[][]) => {
  const seen = new Set<string>();
  return lists.flat().filter((n) => seen.has(n) || !seen.add(n));
};

/**
 * Event types of the catalogue that no area maps into the feed or leaves out of it on purpose. The erasure probe's
 * test-only events join the catalogue in any test process that imports them (files share a worker), so they are
 * claimed here.
 */
const unclaimed = (all: readonly Area[]) => {
  const claimed = new Set([...claims(all).events.flat(), ...Object.keys(probeEvents)]);
  return knownEventTypes().filter((t) => !claimed.has(t));
};

describe('area manifests: each area declares its part, the registry composes them', () => {
  it('given every event type of the catalogue, then each is mapped into the activity feed or listed as deliberately left out', () => {
    expect(unclaimed(areas)).toEqual([]);
    for (const a of areas) for (const l of a.notInFeed ?? []) expect(l.why.trim(), l.types.join()).not.toBe('');
  });

  it('given the areas, then no event, route, tool, read model or job kind is claimed twice', () => {
    for (const [what, lists] of Object.entries(claims(areas))) expect(twice(lists), what).toEqual([]);
  });

  it('given an event no area claims, or one claimed by two, then the checks name it', () => {
    const withoutTeam = areas.filter((a) => !a.feed?.RoleCreated);
    expect(unclaimed(withoutTeam)).toContain('RoleCreated');
    const websites = areas.find((a) => a.feed?.WebsiteCreated)!;
    const again: Area = {
      feed: { WebsiteCreated: websites.feed!.WebsiteCreated },
      routes: websites.routes?.slice(0, 1),
      readModels: websites.readModels,
    };
    const doubled = claims([...areas, again]);
    expect(twice(doubled.events)).toEqual(['WebsiteCreated']);
    expect(twice(doubled.routes)).toEqual([`${websites.routes![0].method} ${websites.routes![0].url}`]);
    expect(twice(doubled['read models'])).toEqual(['websites']);
  });

  it('given the manifests, then the registry holds each area’s feed entries, job kinds and read models', () => {
    for (const a of areas) {
      for (const [type, map] of Object.entries(a.feed ?? {})) expect(feed[type as keyof typeof feed], type).toBe(map);
      for (const [kind, job] of Object.entries(a.jobs ?? {}))
        expect(JOB_KINDS[kind], kind).toEqual({ requested: job.requested, ...(job.resumeOn && { resumeOn: job.resumeOn }) });
    }
    expect(readModels.map((p) => p.name)).toEqual(areas.flatMap((a) => Object.keys(a.readModels ?? {})));
    expect(Object.keys(JOB_KINDS)).toEqual(['probe', 'aivalue', 'pillar_research', 'seo', 'discovery', 'pitch', 'content']);
  });
});
