import { afterAll, describe, expect, it } from 'vitest';
import { seededRandom } from '../../src/domain/random';
import type { Selection } from '../../queries/filters';
import {
  blockBytes,
  blockCounts,
  BlockBuilder,
  blocksQueued,
  buildBlock,
  DEFAULT_BLOCK_LEVELS,
  DEFAULT_BUILD_MS_PER_SCAN,
  setBlockLevels,
  setBuildMsPerScan,
} from '../../queries/metrics/blocks';
import { emptySite, type SiteFacts, sortParts } from '../../queries/metrics/facts/layout';
import { type FactRow, putDayParts, randomFactRow } from '../support/fact-parts';
import { compileSelection, type Reads, scanDaily, scanTotal } from '../../queries/metrics/scan';

const DAY_MS = 86_400_000;
const DAY0 = 20_000;
const DAYS = 40;

/** An answer of a UTC day (a day number) */
type Row = FactRow & { day: number };

const entities = ['e0', 'e1', 'e2', 'e3', 'e4'];
const prompts = ['p0', 'p1', 'p2', 'p3', 'p4', 'p5'];
const locations = [null, 'l0', 'l1'];
const schedules = [null, 's0'];
const models = ['m0', 'm1', 'm2'];

function rowsOf(seed: number, n: number): Row[] {
  const r = seededRandom(seed);
  // some days without answers
  const day = () => DAY0 + Math.floor(r() * DAYS) * (r() < 0.9 ? 1 : 0);
  return Array.from({ length: n }, () => randomFactRow(r, { entities, prompts, locations, schedules, models }, { mention: 0.3, cite: 0.2 }, day));
}

/** A day's rows stored in parts of at most 40 answers, as the projection stores them. */
function putRows(site: SiteFacts, day: number, rows: Row[]) {
  putDayParts(
    site,
    entities,
    day,
    rows.filter((y) => y.day === day),
    40,
  );
}

function siteOf(rows: Row[]): SiteFacts {
  const site = emptySite('w', 1n, 0n, entities);
  for (let day = DAY0; day < DAY0 + DAYS; day++) putRows(site, day, rows);
  sortParts(site);
  return site;
}

/** The counts of a scan as plain arrays. */
const plain = (c: ReturnType<typeof scanTotal>) => ({
  responses: c.responses,
  anyMentioned: c.anyMentioned,
  mentioned: [...c.mentioned],
  cited: [...c.cited],
  posSum: [...c.posSum],
  posSq: [...c.posSq],
});

/** Without blocks: every part walked. */
function walked(site: SiteFacts, s: Selection, ids: string[], options: { any?: boolean; reads?: Reads }) {
  setBlockLevels([], Number.POSITIVE_INFINITY);
  try {
    return plain(scanTotal(site, compileSelection(site, s, ids, options)));
  } finally {
    setBlockLevels([3, 1]);
  }
}

/** The daily buckets without blocks. */
function walkedDaily(site: SiteFacts, s: Selection, ids: string[], options: { any?: boolean; reads?: Reads }) {
  setBlockLevels([], Number.POSITIVE_INFINITY);
  try {
    return daily(site, s, ids, options);
  } finally {
    setBlockLevels([3, 1]);
  }
}

const daily = (site: SiteFacts, s: Selection, ids: string[], options: { any?: boolean; reads?: Reads }) =>
  scanDaily(site, compileSelection(site, s, ids, options)).map(({ day, counts }) => ({ day, ...plain(counts) }));

function selections(seed: number, n: number): Array<{ s: Selection; ids: string[]; options: { any?: boolean; reads?: Reads } }> {
  const r = seededRandom(seed);
  const subset = <T>(xs: T[]) => xs.filter(() => r() < 0.6);
  return Array.from({ length: n }, () => {
    const a = Math.floor(r() * (DAYS + 4)) - 2;
    const b = a + Math.floor(r() * DAYS);
    // whole days (an end_date's last millisecond) or times inside days
    const wholeDays = r() < 0.7;
    const start = r() < 0.85 ? new Date((DAY0 + a) * DAY_MS + (wholeDays ? 0 : Math.floor(r() * DAY_MS))) : undefined;
    const end = r() < 0.85 ? new Date((DAY0 + b + 1) * DAY_MS - 1 - (wholeDays ? 0 : Math.floor(r() * DAY_MS))) : undefined;
    const reads = (['all', 'mentions', 'cites', 'positions'] as const)[Math.floor(r() * 4)];
    return {
      s: {
        websiteId: 'w',
        scheduleId: schedules[Math.floor(r() * 2)],
        start,
        end,
        models: r() < 0.5 ? subset(models) : undefined,
        promptIds: r() < 0.5 ? [...prompts] : subset(prompts),
        locationIds: r() < 0.4 ? (subset(locations).filter((l) => l !== null) as string[]) : undefined,
      },
      ids: r() < 0.6 ? [...entities] : entities.filter((_, i) => i === 0 || r() < 0.5),
      options: { any: reads === 'mentions' || reads === 'all' ? r() < 0.5 : false, reads },
    };
  });
}

describe('metric blocks (sums of several days)', () => {
  setBlockLevels([3, 1]);
  // every block a scan meets is built in it, however loaded the machine (the last test sets a scan's building time)
  setBuildMsPerScan(Number.POSITIVE_INFINITY);
  afterAll(() => {
    setBlockLevels([...DEFAULT_BLOCK_LEVELS]);
    setBuildMsPerScan(DEFAULT_BUILD_MS_PER_SCAN);
  });

  it('given random answers over 40 days, when selections are totalled through blocks of 8 and 2 days, then the counts equal a walk of every part', () => {
    const rows = rowsOf(1, 3000);
    const site = siteOf(rows);
    const before = { ...blockCounts };
    for (const { s, ids, options } of selections(2, 300)) {
      const got = plain(scanTotal(site, compileSelection(site, s, ids, options)));
      expect(got).toEqual(walked(site, s, ids, options));
    }
    // blocks answered (and were built once each, then reused)
    expect(blockCounts.added - before.added).toBeGreaterThan(300);
    expect(blockCounts.built - before.built).toBeLessThan(40);
    expect(blockBytes(site)).toBeGreaterThan(0);
  });

  it('given days of several parts, when selections are bucketed by day, then the days summed whole (day blocks) give the counts of a walk', () => {
    const rows = rowsOf(5, 4000);
    const site = siteOf(rows);
    const before = { ...blockCounts };
    for (const { s, ids, options } of selections(6, 200)) expect(daily(site, s, ids, options)).toEqual(walkedDaily(site, s, ids, options));
    expect(blockCounts.added - before.added).toBeGreaterThan(200);
  });

  it('given a block with fewer than 4 answers per (schedule, model, location, prompt), then it keeps no sums by prompt, and a selection of some prompts walks its days', () => {
    const rows = rowsOf(7, 300);
    const site = siteOf(rows);
    const sparse = buildBlock(entities.length, 3, Math.floor(DAY0 / 8), site.order.slice(0, 8));
    expect(sparse.byPrompt).toBe(false);
    expect(sparse.cellSums.length).toBe(0);
    const dense = buildBlock(entities.length, 3, 0, siteOf(rowsOf(8, 6000)).order);
    expect(dense.byPrompt).toBe(true);
    expect(dense.cellSums).toBeInstanceOf(Uint32Array);
    for (const { s, ids, options } of selections(9, 100))
      expect(plain(scanTotal(site, compileSelection(site, s, ids, options)))).toEqual(walked(site, s, ids, options));
  });

  it('given blocks held, when a day of a block is written again, then the block is built again from the new parts and the counts follow', () => {
    const rows = rowsOf(3, 2000);
    const site = siteOf(rows);
    const all: Selection = { websiteId: 'w', scheduleId: null, promptIds: [...prompts] };
    const q = () => compileSelection(site, all, entities);
    const first = plain(scanTotal(site, q()));
    const built = blockCounts.built;
    expect(plain(scanTotal(site, q()))).toEqual(first);
    expect(blockCounts.built).toBe(built);
    // a day inside the first 8-day block gets more answers (its parts are replaced, as a load puts them)
    const more = rowsOf(4, 400).map((x) => ({ ...x, day: DAY0 + 3, schedule: null }));
    putRows(site, DAY0 + 3, [...rows, ...more]);
    sortParts(site);
    const after = plain(scanTotal(site, q()));
    expect(blockCounts.built).toBeGreaterThan(built);
    expect(after.responses).toBe(first.responses + more.length);
    expect(after).toEqual(walked(site, all, entities, {}));
  });

  it('given a scan whose building time is spent, then it builds one block, walks the days of the blocks it does not hold (the same counts), and later scans build the rest', () => {
    const site = siteOf(rowsOf(10, 3000));
    const all: Selection = { websiteId: 'w', scheduleId: null, promptIds: [...prompts] };
    const reference = walked(site, all, entities, {});
    setBuildMsPerScan(0);
    try {
      const builds: number[] = [];
      for (let k = 0; k < 8; k++) {
        const before = blockCounts.built;
        expect(plain(scanTotal(site, compileSelection(site, all, entities)))).toEqual(reference);
        builds.push(blockCounts.built - before);
      }
      // one block a scan until every block of the range is held, then none
      expect(builds[0]).toBe(1);
      expect(builds.every((n) => n <= 1)).toBe(true);
      expect(builds.at(-1)).toBe(0);
    } finally {
      setBuildMsPerScan(Number.POSITIVE_INFINITY);
    }
  });

  it('given a block built a part at a time (as the background builds it), then it is the block built at once', () => {
    const site = siteOf(rowsOf(16, 3000));
    for (const byPrompt of [true, false]) {
      const parts = site.order.slice(3, 40);
      const b = new BlockBuilder(entities.length, 3, 7, parts, byPrompt);
      let steps = 1;
      // a deadline already past: one part a step (each part read twice: its dictionaries' sizes, then its sums)
      while (!b.step(0)) steps++;
      expect(steps).toBe(2 * parts.length);
      expect(b.finish()).toEqual(buildBlock(entities.length, 3, 7, parts, byPrompt));
    }
  });

  /** Turns of the event loop until the background has built every block queued. */
  async function built(): Promise<number> {
    let turns = 0;
    while (blocksQueued() > 0) {
      await new Promise<void>((resolve) => setImmediate(resolve));
      turns++;
    }
    return turns;
  }

  /**
   * Background building on (the default), a scan of everything that counts as a walk does and queues blocks, then
   * `body` with that selection and its counts; scans build in place again after.
   */
  async function withBlocksQueued(site: ReturnType<typeof siteOf>, body: (all: Selection, reference: ReturnType<typeof walked>) => Promise<void>) {
    const all: Selection = { websiteId: 'w', scheduleId: null, promptIds: [...prompts] };
    setBuildMsPerScan(null);
    try {
      const reference = walked(site, all, entities, {});
      expect(plain(scanTotal(site, compileSelection(site, all, entities)))).toEqual(reference);
      expect(blocksQueued()).toBeGreaterThan(0);
      await body(all, reference);
    } finally {
      setBuildMsPerScan(Number.POSITIVE_INFINITY);
    }
  }

  it('given blocks built in the background (the default), when a scan meets blocks it does not hold, then it builds none, counts as a walk does, and once the event loop has turned a later scan adds the blocks and builds none', async () => {
    const site = siteOf(rowsOf(11, 3000));
    const all: Selection = { websiteId: 'w', scheduleId: null, promptIds: [...prompts] };
    const reference = walked(site, all, entities, {});
    setBuildMsPerScan(null);
    try {
      const before = { ...blockCounts };
      expect(plain(scanTotal(site, compileSelection(site, all, entities)))).toEqual(reference);
      expect(blockCounts.built).toBe(before.built);
      expect(blockCounts.added).toBe(before.added);
      expect(blocksQueued()).toBeGreaterThan(0);
      expect(await built()).toBeGreaterThan(0);
      expect(blockCounts.built).toBeGreaterThan(before.built);
      const held = { ...blockCounts };
      expect(plain(scanTotal(site, compileSelection(site, all, entities)))).toEqual(reference);
      expect(blockCounts.built).toBe(held.built);
      expect(blockCounts.added).toBeGreaterThan(held.added);
      expect(blocksQueued()).toBe(0);
      // random selections: the same counts whatever blocks are held or queued meanwhile
      for (const { s, ids, options } of selections(12, 150)) {
        expect(plain(scanTotal(site, compileSelection(site, s, ids, options)))).toEqual(walked(site, s, ids, options));
        if (blocksQueued() > 0 && s.promptIds.length % 2 === 0) await built();
      }
      await built();
      // daily buckets: the days of several parts are summed in the background too
      const days = { ...blockCounts };
      const q = compileSelection(site, all, entities);
      const first = scanDaily(site, q);
      expect(blockCounts.built).toBe(days.built);
      await built();
      expect(blockCounts.built).toBeGreaterThan(days.built);
      expect(scanDaily(site, q)).toEqual(first);
      expect(daily(site, all, entities, {})).toEqual(walkedDaily(site, all, entities, {}));
    } finally {
      setBuildMsPerScan(Number.POSITIVE_INFINITY);
    }
  });

  it('given blocks queued for the background, when building one throws, then it is dropped and counted, the queue drains, and scans still count as a walk does', async () => {
    const site = siteOf(rowsOf(23, 2000));
    await withBlocksQueued(site, async (all, reference) => {
      const order = site.order;
      Object.defineProperty(site, 'order', {
        configurable: true,
        get() {
          throw new Error('a part that cannot be read');
        },
      });
      const before = { ...blockCounts };
      await built();
      expect(blockCounts.failed).toBeGreaterThan(before.failed);
      expect(blockCounts.lastError).toBe('a part that cannot be read');
      expect(blockCounts.built).toBe(before.built);
      Object.defineProperty(site, 'order', { configurable: true, writable: true, value: order });
      expect(plain(scanTotal(site, compileSelection(site, all, entities)))).toEqual(reference);
      await built();
    });
  });

  it('given blocks queued for the background, when the website is dropped (evicted) before they are built, then none is built, and a scan of a dropped website queues none', async () => {
    const site = siteOf(rowsOf(17, 2000));
    await withBlocksQueued(site, async (all, reference) => {
      site.dropped = true;
      const before = blockCounts.built;
      await built();
      expect(blockCounts.built).toBe(before);
      expect(plain(scanTotal(site, compileSelection(site, all, entities)))).toEqual(reference);
      expect(blocksQueued()).toBe(0);
    });
  });

  it('given blocks built in the background, when a day of a block is written again (queued or held), then scans count the new parts, the block is queued again and built of them', async () => {
    const rows = rowsOf(13, 2000);
    const site = siteOf(rows);
    const all: Selection = { websiteId: 'w', scheduleId: null, promptIds: [...prompts] };
    const count = () => plain(scanTotal(site, compileSelection(site, all, entities)));
    setBuildMsPerScan(null);
    try {
      const first = count();
      expect(blocksQueued()).toBeGreaterThan(0);
      // written while queued: built of the parts held when its turn comes
      const more = rowsOf(14, 400).map((x) => ({ ...x, day: DAY0 + 3, schedule: null }));
      putRows(site, DAY0 + 3, [...rows, ...more]);
      sortParts(site);
      await built();
      let before = { ...blockCounts };
      const second = count();
      expect(second.responses).toBe(first.responses + more.length);
      expect(second).toEqual(walked(site, all, entities, {}));
      expect(blockCounts.built).toBe(before.built);
      expect(blocksQueued()).toBe(0);
      // written while held: the scan walks its days and queues it again
      const again = rowsOf(15, 300).map((x) => ({ ...x, day: DAY0 + 4, schedule: null }));
      putRows(site, DAY0 + 4, [...rows, ...again]);
      sortParts(site);
      const third = count();
      expect(third.responses).toBe(second.responses + again.length);
      expect(third).toEqual(walked(site, all, entities, {}));
      expect(blockCounts.built).toBe(before.built);
      expect(blocksQueued()).toBeGreaterThan(0);
      await built();
      expect(blockCounts.built).toBeGreaterThan(before.built);
      before = { ...blockCounts };
      expect(count()).toEqual(third);
      expect(blockCounts.built).toBe(before.built);
    } finally {
      setBuildMsPerScan(Number.POSITIVE_INFINITY);
    }
  });
});
