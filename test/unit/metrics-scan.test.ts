import { describe, expect, it } from 'vitest';
import { seededRandom } from '../../src/domain/random';
import type { Selection } from '../../queries/filters';
import { emptySite, sortParts } from '../../queries/metrics/facts/layout';
import { type FactRow, putDayParts, randomFactRow } from '../support/fact-parts';
import { compileSelection, scanDaily, scanTotal } from '../../queries/metrics/scan';

const DAY_MS = 86_400_000;

/** An answer of a UTC day (a day number) */
type Row = FactRow & { day: number };

function world(seed: number, E: number) {
  const r = seededRandom(seed);
  const entities = Array.from({ length: E }, (_, i) => `e${i}`);
  const prompts = ['p0', 'p1', 'p2', 'p3', 'p4', 'p5'];
  const locations = [null, 'l0', 'l1', 'l2'];
  const schedules = [null, 's0', 's1'];
  const models = ['m0', 'm1', 'm2', 'm3'];
  const rows: Row[] = [];
  const day = () => 20_000 + Math.floor(r() * 5);
  for (let k = 0; k < 1500; k++) rows.push(randomFactRow(r, { entities, prompts, locations, schedules, models }, { mention: 0.25, cite: 0.15 }, day));
  const site = emptySite('w', 1n, 0n, entities);
  for (let day = 20_000; day < 20_005; day++) {
    // each day in parts of at most 200 answers, as the projection stores them (in PART_ROWS)
    putDayParts(
      site,
      entities,
      day,
      rows.filter((y) => y.day === day),
      200,
    );
  }
  sortParts(site);
  return { r, rows, site, entities, prompts, locations, schedules, models };
}

/** The same counts, the slow and obvious way. */
function reference(rows: Row[], s: Selection, wanted: number[]) {
  const at = (x: Row) => x.day * DAY_MS + x.t;
  const sel = rows.filter(
    (x) =>
      x.schedule === s.scheduleId &&
      s.promptIds.includes(x.prompt) &&
      (!s.models || s.models.includes(x.model)) &&
      (!s.locationIds || (x.location !== null && s.locationIds.includes(x.location))) &&
      (!s.start || at(x) >= s.start.getTime()) &&
      (!s.end || at(x) <= s.end.getTime()),
  );
  return {
    responses: sel.length,
    anyMentioned: sel.filter((x) => wanted.some((e) => x.pos[e] > 0)).length,
    mentioned: wanted.map((e) => sel.filter((x) => x.pos[e] > 0).length),
    cited: wanted.map((e) => sel.filter((x) => x.cite[e]).length),
    posSum: wanted.map((e) => sel.reduce((n, x) => n + x.pos[e], 0)),
  };
}

describe('metric scans', () => {
  for (const E of [5, 40]) {
    it(`given random answers over ${E} entities, when any selection is scanned, then its counts equal a row-by-row count`, () => {
      const w = world(E, E);
      const subset = <T>(xs: T[]) => xs.filter(() => w.r() < 0.6);
      for (let k = 0; k < 90; k++) {
        // every third selection takes every prompt, location and entity (segments whole, from their sums), with day
        // bounds or times inside days; every sixth, every prompt and entity but some locations (from the sums by location)
        const everything = k % 3 === 0;
        const someLocations = k % 6 === 3;
        const dayOnly = everything && w.r() < 0.5;
        const start =
          w.r() < 0.7 ? new Date(20_000 * DAY_MS + (dayOnly ? Math.floor(w.r() * 3) * DAY_MS : Math.floor(w.r() * 3 * DAY_MS))) : undefined;
        const end =
          w.r() < 0.7
            ? new Date((start?.getTime() ?? 20_000 * DAY_MS) + (dayOnly ? (1 + Math.floor(w.r() * 3)) * DAY_MS - 1 : Math.floor(w.r() * 4 * DAY_MS)))
            : undefined;
        const s: Selection = {
          websiteId: 'w',
          scheduleId: w.schedules[Math.floor(w.r() * 3)],
          start,
          end,
          models: w.r() < 0.5 ? subset(w.models) : undefined,
          promptIds: everything ? [...w.prompts] : subset(w.prompts),
          locationIds: someLocations || (!everything && w.r() < 0.5) ? (subset(w.locations).filter((l) => l !== null) as string[]) : undefined,
        };
        const wanted = w.entities.map((_, i) => i).filter((i) => i === 0 || everything || w.r() < 0.7);
        const q = compileSelection(
          w.site,
          s,
          wanted.map((i) => w.entities[i]),
        );
        const got = scanTotal(w.site, q);
        const want = reference(w.rows, s, wanted);
        expect({
          responses: got.responses,
          anyMentioned: got.anyMentioned,
          mentioned: [...got.mentioned],
          cited: [...got.cited],
          posSum: [...got.posSum],
        }).toEqual(want);
        // compiled without the count of answers mentioning any of them (every family but mention-rate), a subset of the
        // entities is read from the per-entity sums: the same counts, anyMentioned not counted (also with every prompt,
        // where a segment is then taken whole from its sums)
        for (const t of [s, { ...s, promptIds: [...w.prompts] }]) {
          const ids = wanted.map((i) => w.entities[i]);
          const noAny = scanTotal(w.site, compileSelection(w.site, t, ids, { any: false }));
          const exact = reference(w.rows, t, wanted);
          expect(noAny.anyMentioned).toBeNaN();
          expect({ responses: noAny.responses, mentioned: [...noAny.mentioned], cited: [...noAny.cited], posSum: [...noAny.posSum] }).toEqual({
            responses: exact.responses,
            mentioned: exact.mentioned,
            cited: exact.cited,
            posSum: exact.posSum,
          });
        }
        // the daily buckets add up to the total
        const daily = scanDaily(w.site, q);
        expect(daily.reduce((n, d) => n + d.counts.responses, 0)).toBe(got.responses);
        expect(daily.every((d) => d.counts.responses > 0)).toBe(true);
      }
    });
  }
});
