import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answersProjection } from '../../projections/answers';
import { decodeFacts, encodeFacts, FactChunkBuilder } from '../../src/analysis/facts';
import { seededRandom } from '../../src/domain/random';
import { copySql, parseCopy, readChunks } from '../../queries/metrics/fact-chunks';
import { type DayFacts, emptySite, putDay, sortParts } from '../../queries/metrics/facts/layout';
import { freshDatabase, onRealPostgres, type TestDatabase } from '../support/db';

const SITE = '00000000-0000-4000-8000-00000000c0c0';
const OTHER = '00000000-0000-4000-8000-00000000c0c1';

/** A chunk of `n` random answers over `E` entities (some dictionaries shared with other chunks, some not). */
function chunk(seed: number, n: number, E: number) {
  const r = seededRandom(seed);
  const entities = Array.from({ length: E }, (_, i) => `e${i}`);
  const b = new FactChunkBuilder(entities);
  const pick = <T>(xs: T[]) => xs[Math.floor(r() * xs.length)];
  for (let i = 0; i < n; i++) {
    const mentions: [number, number][] = [];
    for (let e = 0; e < E; e++) if (r() < 0.3) mentions.push([e, 1 + Math.floor(r() * 300)]);
    b.add({
      t: Math.floor(r() * 86_400_000),
      prompt_id: pick(['p0', 'p1', 'p2', `p${seed}`]),
      location_id: pick([null, 'l0', `l${seed}`]),
      schedule_id: pick([null, 's0', `s${seed % 3}`]),
      model: pick(['m0', 'm1', `m${seed % 5}`, 'm9']),
      mentions,
      cited: entities.flatMap((_, e) => (r() < 0.15 ? [e] : [])),
    });
  }
  return encodeFacts(b.build());
}

/** A part the slow and obvious way: the chunk's rows in the website's dictionaries, stably sorted by (schedule, model). */
function referencePart(site: ReturnType<typeof emptySite>, meta: Parameters<typeof decodeFacts>[0], data: Uint8Array) {
  const c = decodeFacts(meta, data);
  const E = c.entities.length;
  const rows = Array.from({ length: c.n }, (_, i) => ({
    i,
    schedule: site.schedules.of(c.schedules[c.schedule[i]]),
    model: site.models.of(c.models[c.model[i]]),
  }));
  rows.sort((a, b) => a.schedule - b.schedule || a.model - b.model || a.i - b.i);
  const segments: { schedule: number; model: number; start: number; end: number; sums: number[] }[] = [];
  rows.forEach(({ i, schedule, model }, k) => {
    let g = segments[segments.length - 1];
    if (!g || g.schedule !== schedule || g.model !== model) {
      g = { schedule, model, start: k, end: k, sums: new Array(2 + 4 * E).fill(0) };
      segments.push(g);
    }
    g.end = k + 1;
    g.sums[0]++;
    let any = false;
    for (let e = 0; e < E; e++) {
      const p = c.pos[i * E + e];
      if (p) {
        any = true;
        g.sums[2 + e]++;
        g.sums[2 + 2 * E + e] += p;
        g.sums[2 + 3 * E + e] += p * p;
      }
      if (c.cite[i * E + e]) g.sums[2 + E + e]++;
    }
    if (any) g.sums[1]++;
  });
  const col = (f: (i: number) => number) => rows.map(({ i }) => f(i));
  return {
    segments,
    t: col((i) => c.t[i]),
    prompt: col((i) => site.prompts.of(c.prompts[c.prompt[i]])),
    location: col((i) => site.locations.of(c.locations[c.location[i]])),
    pos: rows.flatMap(({ i }) => [...c.pos.subarray(i * E, (i + 1) * E)]),
    cite: rows.flatMap(({ i }) => [...c.cite.subarray(i * E, (i + 1) * E)]),
    mentions: E <= 32 ? col((i) => c.pos.subarray(i * E, (i + 1) * E).reduce((m, p, e) => (p ? m | (1 << e) : m), 0) >>> 0) : null,
    cites: E <= 32 ? col((i) => c.cite.subarray(i * E, (i + 1) * E).reduce((m, x, e) => (x ? m | (1 << e) : m), 0) >>> 0) : null,
  };
}

function expectPart(d: DayFacts, want: ReturnType<typeof referencePart>, E: number) {
  expect(d.segments.map(({ schedule, model, start, end }) => ({ schedule, model, start, end }))).toEqual(
    want.segments.map(({ schedule, model, start, end }) => ({ schedule, model, start, end })),
  );
  expect([...d.sums]).toEqual(want.segments.flatMap((g) => g.sums));
  d.segments.forEach((g, i) => {
    const s = want.segments[i].sums;
    expect([g.sum.responses, g.sum.any]).toEqual([s[0], s[1]]);
    expect([...g.sum.mentioned, ...g.sum.cited, ...g.sum.posSum, ...g.sum.posSq]).toEqual(s.slice(2));
  });
  expect([...d.t]).toEqual(want.t);
  expect([...d.prompt]).toEqual(want.prompt);
  expect([...d.location]).toEqual(want.location);
  expect([...d.pos]).toEqual(want.pos);
  expect([...d.cite]).toEqual(want.cite);
  expect(d.mentions && [...d.mentions]).toEqual(want.mentions);
  expect(d.cites && [...d.cites]).toEqual(want.cites);
  expect(d.n).toBe(want.t.length);
  expect(d.pos.length).toBe(d.n * E);
}

describe('metric facts: a stored chunk as a part of the website', () => {
  for (const E of [3, 11, 32, 40]) {
    it(`given chunks over ${E} entities, when they are put one after another, then each part is the chunk's rows in the website's dictionaries sorted by schedule and model, with its segments' sums`, () => {
      const site = emptySite(
        'w',
        1n,
        0n,
        Array.from({ length: E }, (_, i) => `e${i}`),
      );
      for (let k = 0; k < 6; k++) {
        const { meta, data } = chunk(100 * E + k, k === 5 ? 0 : 1 + ((k * 97) % 300), E);
        // a chunk at an odd offset of a larger buffer, as a COPY answer holds them
        const shifted = Buffer.alloc(data.length + 3);
        data.copy(shifted, 3);
        const want = referencePart(site, JSON.parse(JSON.stringify(meta)), data);
        putDay(site, '2025-03-01', k, meta, shifted.subarray(3));
        expectPart(site.days.get(`2025-03-01:${k}`)!, want, E);
      }
      sortParts(site);
      expect(site.order.map((d) => d.part)).toEqual([0, 1, 2, 3, 4, 5]);
    });
  }
});

describe('metric facts: reading stored chunks', () => {
  let d: TestDatabase;
  const stored: { website_id: string; day: string; part: number; version: number; meta: string; data: Buffer }[] = [];

  beforeAll(async () => {
    d = await freshDatabase();
    await answersProjection.migrate(d.db);
    let k = 0;
    for (const [website_id, day, part, version] of [
      [SITE, '2025-01-30', 0, 1],
      [SITE, '2025-01-31', 0, 2],
      [SITE, '2025-01-31', 1, 3],
      [SITE, '2025-02-01', 0, 4],
      [SITE, '2025-02-03', 0, 5],
      [OTHER, '2025-01-31', 0, 6],
    ] as const) {
      const { meta, data } = chunk(k++, 50 + 40 * k, 4);
      // a prompt id with a quote and non-ASCII text: the dictionary JSON arrives as UTF-8
      meta.prompts[0] = `p"é’${k}`;
      stored.push({ website_id, day, part, version, meta: JSON.stringify(meta), data });
    }
    await d.db('rm_fact_chunks').insert(stored.map((s) => ({ ...s, n: JSON.parse(s.meta).n, schedule_keys: ['default'] })));
  }, 60_000);
  afterAll(async () => d?.close());

  const key = (r: { day: string; part: number }) => `${r.day}:${r.part}`;
  const expected = (f: (s: (typeof stored)[number]) => boolean) =>
    stored
      .filter(f)
      .map((s) => ({ day: s.day, part: s.part, meta: JSON.parse(s.meta), data: [...s.data] }))
      .sort((a, b) => key(a).localeCompare(key(b)));

  it('given chunks of two websites, when a range of days of one is read (by COPY on Postgres), then its rows are exactly those stored: day, part, dictionaries and bytes', async () => {
    for (const [lo, hi, since] of [
      [null, null, null],
      ['2025-01-31', '2025-02-01', null],
      ['2025-01-31', null, null],
      [null, '2025-01-31', null],
      [null, null, 2n],
      ['2025-02-02', '2025-02-02', null],
    ] as const) {
      const rows = await readChunks(d.db, { websiteId: SITE, lo, hi, since });
      const got = rows.map((r) => ({ day: r.day, part: r.part, meta: r.meta, data: [...r.data] })).sort((a, b) => key(a).localeCompare(key(b)));
      expect(got).toEqual(
        expected(
          (s) => s.website_id === SITE && (lo === null || s.day >= lo) && (hi === null || s.day <= hi) && (since === null || s.version > since),
        ),
      );
    }
  });

  it.runIf(onRealPostgres)(
    'given a read by COPY, then it is seen by query listeners as a statement (what counts and watches statements)',
    async () => {
      const seen: string[] = [];
      const onQuery = (q: { sql?: string }) => seen.push(q.sql ?? '');
      d.db.on('query', onQuery);
      try {
        await readChunks(d.db, { websiteId: SITE, lo: '2025-01-31', hi: null, since: null });
      } finally {
        d.db.removeListener('query', onQuery);
      }
      expect(seen).toEqual([copySql({ websiteId: SITE, lo: '2025-01-31', hi: null, since: null })]);
    },
  );

  it('given values that are not a website id, a day or a version, then no COPY statement is written with them', () => {
    expect(() => copySql({ websiteId: `${SITE}' or true --`, lo: null, hi: null, since: null })).toThrow(/website id/);
    expect(() => copySql({ websiteId: SITE, lo: "2025-01-01' or true --", hi: null, since: null })).toThrow(/day/);
    expect(() => copySql({ websiteId: SITE, lo: null, hi: '2025-1-1', since: null })).toThrow(/day/);
    expect(copySql({ websiteId: SITE, lo: '2025-01-01', hi: '2025-01-31', since: 7n })).toContain('version > 7');
  });

  it('given COPY data cut short or of other columns, then it is refused, not read as rows', () => {
    const header = Buffer.concat([Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1'), Buffer.alloc(8)]);
    const trailer = Buffer.from([0xff, 0xff]);
    expect(parseCopy(Buffer.concat([header, trailer]))).toEqual([]);
    expect(() => parseCopy(Buffer.from('not copy data at all'))).toThrow(/signature/);
    const twoFields = Buffer.from([0, 2]);
    expect(() => parseCopy(Buffer.concat([header, twoFields, trailer]))).toThrow(/2 fields/);
    const cut = Buffer.concat([header, Buffer.from([0, 4, 0, 0, 0, 10, 0x32])]);
    expect(() => parseCopy(cut)).toThrow(/past the end/);
  });
});
