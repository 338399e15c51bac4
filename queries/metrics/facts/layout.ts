import { decodeFacts, type FactDictionaries } from '../../../src/analysis/facts';
import { addAnswer } from '../scan';

/** A website's metric facts laid out column by column in memory (typed arrays per day part), as FactsCache holds them. */

const DAY_MS = 86_400_000;
export const dayNumber = (day: string) => Math.floor(Date.parse(`${day}T00:00:00Z`) / DAY_MS);
export const dayName = (n: number) => new Date(n * DAY_MS).toISOString().slice(0, 10);

/** The UTC days a read needs, as day numbers (open ends infinite). */
export interface DayRange {
  first: number;
  last: number;
}
export const ALL_DAYS: DayRange = { first: Number.NEGATIVE_INFINITY, last: Number.POSITIVE_INFINITY };

/** The days of a selection's time bounds (every day when a bound is open). */
export const daysOf = (s: { start?: Date; end?: Date }): DayRange => ({
  first: s.start ? Math.floor(s.start.getTime() / DAY_MS) : Number.NEGATIVE_INFINITY,
  last: s.end ? Math.floor(s.end.getTime() / DAY_MS) : Number.POSITIVE_INFINITY,
});

/** Answers of one day with one schedule and one model: rows [start, end) of the day's columns. */
export interface Segment {
  schedule: number;
  model: number;
  start: number;
  end: number;
  /**
   * Its answers summed (every prompt, location and time of the part): answers, answers mentioning any entity, and
   * per entity column mentions, citations, position sum and sum of squares. A selection that takes the segment
   * whole reads these instead of its rows.
   */
  sum: { responses: number; any: number; mentioned: Float64Array; cited: Float64Array; posSum: Float64Array; posSq: Float64Array };
}

/**
 * One UTC day of a website's answers; dictionary indices are the website's (SiteFacts), not the chunk's. Rows are
 * ordered by schedule and model, so a schedule or model filter reads only its segments.
 */
export interface DayFacts {
  day: number;
  /** a day's answers are stored in parts of bounded size */
  part: number;
  n: number;
  segments: Segment[];
  t: Uint32Array;
  prompt: Uint16Array;
  location: Uint16Array;
  /** n x entities */
  pos: Uint8Array;
  cite: Uint8Array;
  /**
   * The segments' sums packed in one array, segment i at i * (2 + 4E): responses, any, then per entity column mentioned,
   * cited, posSum, posSq (E each). The whole-segment path reads these: a year of parts holds tens of thousands of
   * segments, and their sums as separate small typed arrays cost a cache miss each.
   */
  sums: Float64Array;
  /** with at most 32 entities: the entities each answer mentions (bit = entity column), and those it cites */
  mentions: Uint32Array | null;
  cites: Uint32Array | null;
  bytes: number;
}

/** A growing id -> index dictionary of one website (indices stay valid while the website is held). */
export class Dictionary<K> {
  readonly keys: K[] = [];
  private readonly index = new Map<K, number>();
  of(k: K): number {
    let i = this.index.get(k);
    if (i === undefined) {
      i = this.keys.length;
      this.keys.push(k);
      this.index.set(k, i);
    }
    return i;
  }
  get(k: K): number | undefined {
    return this.index.get(k);
  }
  get size(): number {
    return this.keys.length;
  }
}

export interface SiteFacts {
  websiteId: string;
  version: bigint;
  generation: bigint;
  /** the table the head was read from: a rebuild swaps in new tables, whose versions say nothing about these */
  table: string;
  /** tracked entities (brand first), the order of the pos/cite columns */
  entities: string[];
  /** parts by `day:part`, and in (day, part) order */
  days: Map<string, DayFacts>;
  order: DayFacts[];
  prompts: Dictionary<string>;
  locations: Dictionary<string | null>;
  schedules: Dictionary<string | null>;
  models: Dictionary<string>;
  bytes: number;
  /**
   * The days held, as day numbers [from, to] (infinite: open): every stored part of those days is held as of
   * `version` or later. A request loads the days it needs; the website's other days follow in the background.
   */
  from: number;
  to: number;
  /** no longer held by the cache that loaded it (dropped or evicted): its blocks are not built in the background */
  dropped?: boolean;
}

export const emptySite = (websiteId: string, version: bigint, generation: bigint, entities: string[], table = ''): SiteFacts => ({
  websiteId,
  version,
  generation,
  table,
  entities,
  days: new Map(),
  order: [],
  prompts: new Dictionary(),
  locations: new Dictionary(),
  schedules: new Dictionary(),
  models: new Dictionary(),
  bytes: 0,
  from: Number.NEGATIVE_INFINITY,
  to: Number.POSITIVE_INFINITY,
});

/** Where toDay decodes a chunk (it keeps none of the chunk's columns). */
let scratch = new ArrayBuffer(64 * 1024);
/** toDay's working arrays, reused from part to part (grown as needed): a first load puts hundreds of parts */
let rowsScratch = new Uint32Array(1024);
let mapScratch = new Uint16Array(256);
let pairScratch = new Int32Array(64);

/**
 * A segment of a part: its sums are views of the part's packed sums, made when read (the scans read the packed sums;
 * a year of parts holds tens of thousands of segments, four views each would be as many objects to allocate and collect).
 */
class PartSegment implements Segment {
  constructor(
    readonly schedule: number,
    readonly model: number,
    readonly start: number,
    readonly end: number,
    private readonly sums: Float64Array,
    private readonly at: number,
    private readonly E: number,
  ) {}

  get sum(): Segment['sum'] {
    const { sums, at, E } = this;
    const mo = at + 2;
    return {
      responses: sums[at],
      any: sums[at + 1],
      mentioned: sums.subarray(mo, mo + E),
      cited: sums.subarray(mo + E, mo + 2 * E),
      posSum: sums.subarray(mo + 2 * E, mo + 3 * E),
      posSq: sums.subarray(mo + 3 * E, mo + 4 * E),
    };
  }
}

/** The website's index of each of a chunk's dictionary keys (every key registered, in the chunk's order), at `at` of `map`. */
function indexMap<K>(keys: readonly K[], dict: Dictionary<K>, map: Uint16Array, at: number): void {
  for (let j = 0; j < keys.length; j++) map[at + j] = dict.of(keys[j]);
}

/** Rows per (schedule, model) pair of a chunk (pair = schedule * M + model, the chunk's indices). */
function countPairs(counts: Int32Array, schedule: Uint16Array, model: Uint8Array, M: number, n: number): void {
  for (let i = 0; i < n; i++) counts[schedule[i] * M + model[i]]++;
}

/** The counting sort's placing: the chunk's row of each of the part's rows (`next`: where each pair's rows go, from `at`). */
function placeRows(rows: Uint32Array, next: Int32Array, at: number, schedule: Uint16Array, model: Uint8Array, M: number, n: number): void {
  for (let i = 0; i < n; i++) rows[next[at + schedule[i] * M + model[i]]++] = i;
}

/** A chunk's columns (c*) and the part's, as copySegment reads and writes them. */
interface Columns {
  E: number;
  /** the chunk's row of each of the part's rows */
  rows: Uint32Array;
  t: Uint32Array;
  prompt: Uint16Array;
  location: Uint16Array;
  pos: Uint8Array;
  cite: Uint8Array;
  mentions: Uint32Array | null;
  cites: Uint32Array | null;
  sums: Float64Array;
  cT: Uint32Array;
  cPrompt: Uint16Array;
  cLocation: Uint16Array;
  cPos: Uint8Array;
  cCite: Uint8Array;
  /** the website's index of the chunk's prompts (at 0) and locations (at `locationsAt`) */
  map: Uint16Array;
  locationsAt: number;
}

/**
 * Copies the part's rows [start, end) (one segment) from the chunk and adds up the segment's sums at `o` of `sums`.
 * A function of its own, small: it is what runs hot on a first load, and V8 optimizes a small function in a few
 * milliseconds (toDay whole took it 60-230 ms, interpreted meanwhile).
 */
function copySegment(cols: Columns, start: number, end: number, o: number): void {
  const { E, rows, t, prompt, location, pos, cite, mentions, cites, sums, cT, cPrompt, cLocation, cPos, cCite, map, locationsAt } = cols;
  for (let k = start; k < end; k++) {
    const i = rows[k];
    t[k] = cT[i];
    prompt[k] = map[cPrompt[i]];
    location[k] = map[locationsAt + cLocation[i]];
    const src = i * E;
    const dst = k * E;
    // the entities it mentions and cites as bits (where the part keeps them: at most 32 entities)
    let m = 0;
    let x = 0;
    for (let e = 0; e < E; e++) {
      const p = cPos[src + e];
      const ci = cCite[src + e];
      pos[dst + e] = p;
      cite[dst + e] = ci;
      // without branches (which entities an answer mentions is not predictable): 1 when non-zero, else 0
      m |= ((p + 255) >> 8) << e;
      x |= ((ci + 255) >> 8) << e;
    }
    if (mentions !== null && cites !== null) {
      mentions[k] = m;
      cites[k] = x;
    }
    addAnswer(cols, k, E, sums, o);
  }
}

/**
 * A stored chunk in the website's dictionaries, its rows ordered by schedule and model. The first load of a website
 * runs this for every part it reads (a year of the 1.2 M-answer website: 1,460 parts), so it reads each column once:
 * the chunk's dictionaries are mapped to the website's once, the segments are known from the counting sort before the
 * rows are copied, and each segment's sums are added up in place in the packed `sums` (its `sum` arrays are views of
 * it, made when read). Its working arrays are reused from part to part: what it allocates is what the part keeps.
 */
function toDay(site: SiteFacts, day: number, part: number, meta: FactDictionaries & { n: number }, data: Uint8Array): DayFacts {
  if (scratch.byteLength < data.byteLength) scratch = new ArrayBuffer(Math.max(data.byteLength, 2 * scratch.byteLength));
  // its columns are read here and let go: they are views of one scratch buffer, not a copy per part
  const c = decodeFacts(meta, data, scratch);
  const n = c.n;
  const E = c.entities.length;
  const S = c.schedules.length;
  const M = Math.max(1, c.models.length);
  const pairs = Math.max(1, S) * M;
  // the website's index of the chunk's prompts, locations, schedules and models, one after another
  const keys = c.prompts.length + c.locations.length + S + c.models.length;
  if (mapScratch.length < keys) mapScratch = new Uint16Array(Math.max(keys, 2 * mapScratch.length));
  const map = mapScratch;
  const locationsAt = c.prompts.length;
  const schedulesAt = locationsAt + c.locations.length;
  const modelsAt = schedulesAt + S;
  indexMap(c.prompts, site.prompts, map, 0);
  indexMap(c.locations, site.locations, map, locationsAt);
  indexMap(c.schedules, site.schedules, map, schedulesAt);
  indexMap(c.models, site.models, map, modelsAt);
  // order: by (schedule, model), stable - a counting sort over the chunk's own (schedule, model) pairs, no comparator
  // per row: the pairs are few, and sorted once by the website's indices
  if (pairScratch.length < 2 * pairs) pairScratch = new Int32Array(Math.max(2 * pairs, 2 * pairScratch.length));
  const counts = pairScratch;
  counts.fill(0, 0, 2 * pairs);
  countPairs(counts, c.schedule, c.model, M, n);
  const order: number[] = [];
  for (let k = 0; k < pairs; k++) if (counts[k] > 0) order.push(k);
  const scheduleOf = (k: number) => map[schedulesAt + Math.floor(k / M)];
  const modelOf = (k: number) => map[modelsAt + (k % M)];
  order.sort((a, b) => scheduleOf(a) - scheduleOf(b) || modelOf(a) - modelOf(b));
  // the segments: a run of rows of one website (schedule, model); where each pair's rows start (at `pairs` of counts)
  const bounds: number[] = [];
  let at = 0;
  for (const k of order) {
    const g = bounds.length;
    if (g === 0 || bounds[g - 4] !== scheduleOf(k) || bounds[g - 3] !== modelOf(k)) bounds.push(scheduleOf(k), modelOf(k), at, at);
    counts[pairs + k] = at;
    at += counts[k];
    bounds[bounds.length - 1] = at;
  }
  const segs = bounds.length / 4;
  if (rowsScratch.length < n) rowsScratch = new Uint32Array(Math.max(n, 2 * rowsScratch.length));
  const rows = rowsScratch;
  placeRows(rows, counts, pairs, c.schedule, c.model, M, n);
  // the part's columns in one buffer (one allocation for the collector to track, not nine): 8-byte sums first, then
  // the 4-, 2- and 1-byte columns
  const stride = 2 + 4 * E;
  const bits = E <= 32;
  const buffer = new ArrayBuffer(8 * stride * segs + 4 * n * (bits ? 3 : 1) + 4 * n + 2 * n * E);
  let off = 0;
  const take = (bytes: number) => {
    const at = off;
    off += bytes;
    return at;
  };
  const sums = new Float64Array(buffer, take(8 * stride * segs), stride * segs);
  const t = new Uint32Array(buffer, take(4 * n), n);
  const mentions = bits ? new Uint32Array(buffer, take(4 * n), n) : null;
  const cites = bits ? new Uint32Array(buffer, take(4 * n), n) : null;
  const prompt = new Uint16Array(buffer, take(2 * n), n);
  const location = new Uint16Array(buffer, take(2 * n), n);
  const pos = new Uint8Array(buffer, take(n * E), n * E);
  const cite = new Uint8Array(buffer, take(n * E), n * E);
  const cols: Columns = {
    E,
    rows,
    t,
    prompt,
    location,
    pos,
    cite,
    mentions,
    cites,
    sums,
    cT: c.t,
    cPrompt: c.prompt,
    cLocation: c.location,
    cPos: c.pos,
    cCite: c.cite,
    map,
    locationsAt,
  };
  const segments: Segment[] = [];
  for (let g = 0; g < segs; g++) {
    const start = bounds[4 * g + 2];
    const end = bounds[4 * g + 3];
    copySegment(cols, start, end, g * stride);
    segments.push(new PartSegment(bounds[4 * g], bounds[4 * g + 1], start, end, sums, g * stride, E));
  }
  const bytes = n * 16 + pos.length + cite.length + (96 + 32 * E) * segments.length + sums.byteLength + 200;
  return { day, part, n, segments, t, prompt, location, pos, cite, sums, mentions, cites, bytes };
}

/** Puts a stored part into a website's facts (replacing that part). */
export function putDay(site: SiteFacts, day: string, part: number, meta: FactDictionaries & { n: number }, data: Uint8Array): void {
  const key = `${day}:${part}`;
  const before = site.days.get(key);
  const d = toDay(site, dayNumber(day), part, meta, data);
  if (before) site.bytes -= before.bytes;
  site.days.set(key, d);
  site.bytes += d.bytes;
}

/** The parts in (day, part) order, after puts. */
export function sortParts(site: SiteFacts): void {
  site.order = [...site.days.values()].sort((a, b) => a.day - b.day || a.part - b.part);
}
