import type { Knex } from 'knex';
import { decodeFacts, type FactDictionaries, sameEntities } from '../../src/analysis/facts';
import { DomainErrorException, unavailable } from '../../src/domain/errors';
import type { Logger } from '../../src/logger';
import { siteEntityIdsSql } from '../../projections/site-entities';
import { type ChunkRow, readChunks } from './fact-chunks';
import { addAnswer } from './scan';

/**
 * The metric facts of a website (rm_fact_chunks, written by the answers projection) held column by column in this
 * process, so a metric request scans typed arrays instead of rows. It is not a cache of answers to requests: every
 * request first reads the website's version (one indexed row) and loads the days written since, so it always
 * computes over exactly what the read model holds, on every instance. A re-derivation (new generation) or other
 * entities reload the website whole. Websites are evicted least-recently used past a byte budget.
 *
 * It never serves shifted columns: the site row's entity list must be the website's (siteEntities, read in the same
 * statement) and every chunk it loads must be laid out for that list. A website out of line is re-derived (the
 * `realign` the runtime gives, logged) and loaded again; if that is not possible the read is refused with 503, and
 * the website is listed by `outOfLine` (/readyz) until it is in line.
 */

const DAY_MS = 86_400_000;
export const dayNumber = (day: string) => Math.floor(Date.parse(`${day}T00:00:00Z`) / DAY_MS);
export const dayName = (n: number) => new Date(n * DAY_MS).toISOString().slice(0, 10);

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

/** What a read found out of line: the read is not served from it. */
class OutOfLine extends Error {
  constructor(readonly detail: string) {
    super(detail);
  }
}

/** A website found out of line and not re-derived yet (realign unavailable or failed). */
export interface FoundOutOfLine {
  website_id: string;
  detail: string;
  since: string;
}

export const OUT_OF_LINE_MESSAGE =
  "this website's metrics are being derived again (its stored facts did not match its brand and competitors); try again shortly";

/** The website's facts head, as read (with its entity list) in one statement; a caller may read it in its own (get). */
export interface Head {
  version: string | null;
  generation: string | null;
  entities: string[] | null;
  table: string | null;
  derived: string[];
}

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

/**
 * Parts read per query when a range is loaded (on the 1.2 M-answer website about 4 MB): the first query takes
 * FIRST_SLICE_DAYS days (little to wait for before decoding starts: the next slice is read meanwhile), the next ones
 * up to four times the days of the one before, as many as hold about SLICE_PARTS parts at the rate seen so far. The
 * background load reads SLICE_DAYS a query.
 */
const SLICE_PARTS = 128;
const SLICE_DAYS = 32;
const FIRST_SLICE_DAYS = 4;
/**
 * Loading decodes for at most this long before giving the event loop back, so other websites' requests go on: a request
 * of another website waits up to one slice at each of its turns on the loop (the socket, its statement's answer), so
 * the slice is short (6 ms made a small website's p95 about 70 ms during a cold year load).
 */
const SLICE_MS = 2;

const yieldToLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/** What /readyz reports about the facts held. */
export interface FactsCacheStats {
  budget_bytes: number;
  held_bytes: number;
  websites_held: number;
  /** loads of a website's days for a request (whole or extending what is held) since the start */
  loads: number;
  /** websites dropped to stay within the budget since the start */
  evictions: number;
}

export class FactsCache {
  private readonly sites = new Map<string, SiteFacts>();
  /** the bytes of each held website as counted in `bytes` */
  private readonly counted = new Map<string, number>();
  /** one load per website at a time (a request's or a background slice); others wait for it, then check again */
  private readonly loading = new Map<string, Promise<unknown>>();
  /** websites whose other days are being loaded in the background */
  private readonly filling = new Map<string, SiteFacts>();
  private readonly realigning = new Map<string, Promise<unknown>>();
  private readonly unresolved = new Map<string, FoundOutOfLine>();
  private bytes = 0;
  private loads = 0;
  private evictions = 0;
  /** re-derives a website found out of line (set by the runtime: a write, which queries do not do themselves) */
  realign: ((websiteId: string) => Promise<unknown>) | null = null;
  log: Logger | null = null;

  /** `maxBytes`: the budget (FACTS_CACHE_MB); least recently used websites are dropped past it */
  constructor(public maxBytes = 512 * 1024 * 1024) {}

  /**
   * The website's facts as the read model holds them now, at least for `days` (the website's other days follow in the
   * background while the budget allows); 503 (DomainErrorException) when they are out of line and cannot be re-derived.
   * `head`: the facts head the caller read already (readForMetrics), else it is read here.
   */
  async get(db: Knex, websiteId: string, days: DayRange = ALL_DAYS, head?: Head): Promise<SiteFacts> {
    try {
      return await this.load(db, websiteId, days, 0, head);
    } catch (e) {
      if (!(e instanceof OutOfLine)) throw e;
      return this.realigned(db, websiteId, days, e.detail);
    }
  }

  /** Websites this process found out of line and could not re-derive (yet). */
  outOfLine(): FoundOutOfLine[] {
    return [...this.unresolved.values()];
  }

  /** A website found out of line is in line again (derived again elsewhere, or rebuilt). */
  inLine(websiteId: string): void {
    this.unresolved.delete(websiteId);
  }

  private async realigned(db: Knex, websiteId: string, days: DayRange, detail: string): Promise<SiteFacts> {
    const refused = () => new DomainErrorException(unavailable(OUT_OF_LINE_MESSAGE, 5));
    if (!this.unresolved.has(websiteId)) this.unresolved.set(websiteId, { website_id: websiteId, detail, since: new Date().toISOString() });
    this.drop(websiteId);
    if (!this.realign) {
      this.log?.error({ website_id: websiteId, detail }, 'metric facts out of line with the website entities; refusing to serve them');
      throw refused();
    }
    this.log?.warn({ website_id: websiteId, detail }, 'metric facts out of line with the website entities; deriving them again');
    let going = this.realigning.get(websiteId);
    if (!going) {
      going = this.realign(websiteId).finally(() => this.realigning.delete(websiteId));
      this.realigning.set(websiteId, going);
    }
    try {
      await going;
      const site = await this.load(db, websiteId, days);
      this.unresolved.delete(websiteId);
      return site;
    } catch (e) {
      this.log?.error(
        { website_id: websiteId, detail, err: e },
        'metric facts out of line with the website entities and not derived again; refusing to serve them',
      );
      throw refused();
    }
  }

  private drop(websiteId: string) {
    const site = this.sites.get(websiteId);
    if (!site) return;
    site.dropped = true;
    this.sites.delete(websiteId);
    this.bytes -= this.counted.get(websiteId) ?? 0;
    this.counted.delete(websiteId);
  }

  /** Counts a held website's bytes again after its days changed (nothing when it is no longer held). */
  private recount(websiteId: string, site: SiteFacts) {
    if (this.sites.get(websiteId) !== site) return;
    this.bytes += site.bytes - (this.counted.get(websiteId) ?? 0);
    this.counted.set(websiteId, site.bytes);
  }

  private readHead(db: Knex, websiteId: string): Promise<Head> {
    return db
      .raw(
        `select s.version::text as version, s.generation::text as generation, s.entities, s.tableoid::text as "table", ${siteEntityIdsSql('w.id')} as derived
           from (select ?::uuid as id) w left join rm_fact_sites s on s.website_id = w.id`,
        [websiteId],
      )
      .then((r: { rows: Head[] }) => r.rows[0]);
  }

  private async load(db: Knex, websiteId: string, days: DayRange, attempt = 0, given?: Head): Promise<SiteFacts> {
    const head = given ?? (await this.readHead(db, websiteId));
    if (head.version === null || head.generation === null || head.entities === null || head.table === null) {
      // a website the answers read model does not know (yet): nothing to serve, nothing to shift
      if (head.derived.length) throw new OutOfLine(`no site row for entities [${head.derived.join(', ')}]`);
      return emptySite(websiteId, 0n, 0n, []);
    }
    if (!sameEntities(head.entities, head.derived))
      throw new OutOfLine(`the site row lists [${head.entities.join(', ')}], the website has [${head.derived.join(', ')}]`);
    const version = BigInt(head.version);
    const generation = BigInt(head.generation);
    const held = this.sites.get(websiteId);
    if (
      held &&
      held.version >= version &&
      held.generation === generation &&
      held.table === head.table &&
      held.from <= days.first &&
      held.to >= days.last
    ) {
      this.touch(websiteId, held);
      return held;
    }
    // one load per website at a time; a request that arrives meanwhile waits for it, then checks again
    const going = this.loading.get(websiteId);
    if (going) {
      await going.catch(() => undefined);
      return this.load(db, websiteId, days, attempt);
    }
    const p: Promise<SiteFacts | null> = this.refresh(db, websiteId, version, generation, head.entities, head.table, held, days).catch(async (e) => {
      if (!(e instanceof OutOfLine) || attempt >= 3) throw e;
      // a chunk of another layout may have been written after the head was read (a re-derivation, a rebuild's swap):
      // only a head that has not moved makes it a website out of line
      const now = await this.readHead(db, websiteId);
      if (now.version === head.version && now.generation === head.generation && now.table === head.table) throw e;
      return null;
    });
    this.loading.set(websiteId, p);
    let site: SiteFacts | null;
    try {
      site = await p;
    } finally {
      this.loading.delete(websiteId);
    }
    if (!site) return this.load(db, websiteId, days, attempt + 1);
    this.fillLater(db, websiteId, site);
    return site;
  }

  private async refresh(
    db: Knex,
    websiteId: string,
    version: bigint,
    generation: bigint,
    entities: string[],
    table: string,
    held: SiteFacts | undefined,
    days: DayRange,
  ): Promise<SiteFacts> {
    this.loads++;
    const whole = !held || held.generation !== generation || held.table !== table || held.entities.join() !== entities.join();
    const site = whole ? emptySite(websiteId, version, generation, entities, table) : held;
    try {
      if (whole) {
        site.from = days.first;
        site.to = days.last;
        await this.readDays(db, site, days.first, days.last, null);
      } else {
        // what was written since, among the days held (a chunk written after the head was read is taken too, and
        // read again next time: versions only grow); then the days the request needs besides
        if (version > site.version) await this.readDays(db, site, site.from, site.to, site.version);
        if (days.first < site.from) {
          await this.readDays(db, site, days.first, site.from - 1, null);
          site.from = days.first;
        }
        if (days.last > site.to) {
          await this.readDays(db, site, site.to + 1, days.last, null);
          site.to = days.last;
        }
      }
    } catch (e) {
      // a held website read in part is not served: the next request loads it whole
      if (!whole) this.drop(websiteId);
      throw e;
    }
    if (version > site.version) site.version = version;
    if (whole) {
      this.drop(websiteId);
      site.dropped = false;
      this.sites.set(websiteId, site);
    } else this.touch(websiteId, site);
    this.recount(websiteId, site);
    this.evict(websiteId);
    return site;
  }

  /**
   * Reads the stored parts of days [first, last] into `site` (with `since`, only those written after that version),
   * newest days first, in slices (`firstSlice` days, then about SLICE_PARTS parts) each asked for while the one before is
   * decoded, giving the event loop back every SLICE_MS of decoding.
   */
  private async readDays(db: Knex, site: SiteFacts, first: number, last: number, since: bigint | null, firstSlice = FIRST_SLICE_DAYS): Promise<void> {
    if (first > last) return;
    const id = site.websiteId;
    const query = (lo: number, hi: number) =>
      readChunks(db, { websiteId: id, lo: Number.isFinite(lo) ? dayName(lo) : null, hi: Number.isFinite(hi) ? dayName(hi) : null, since });
    if (since !== null) {
      await this.put(site, await query(first, last));
      return;
    }
    let lo = first;
    let hi = last;
    if (!Number.isFinite(lo) || !Number.isFinite(hi)) {
      const ext: { lo: string | null; hi: string | null } = await db('rm_fact_chunks')
        .where('website_id', id)
        .first(db.raw('min(day)::text as lo'), db.raw('max(day)::text as hi'));
      if (!ext || ext.lo === null || ext.hi === null) return;
      lo = Math.max(lo, dayNumber(ext.lo));
      hi = Math.min(hi, dayNumber(ext.hi));
    }
    // the next slice is asked for before this one is decoded: Postgres reads it (the other core) meanwhile
    let top = hi;
    let bottom = Math.max(lo, top - firstSlice + 1);
    let pending: Promise<ChunkRow[]> | null = query(bottom, top);
    try {
      while (pending !== null) {
        const rows: ChunkRow[] = await pending;
        pending = null;
        const span = top - bottom + 1;
        const days = Math.max(1, Math.min(4 * span, Math.floor((SLICE_PARTS * span) / Math.max(1, rows.length))));
        top = bottom - 1;
        if (top >= lo) {
          bottom = Math.max(lo, top - days + 1);
          pending = query(bottom, top);
        }
        await this.put(site, rows);
      }
    } finally {
      // a slice asked for and not put (a put refused): its answer is not waited for
      pending?.catch(() => undefined);
    }
  }

  /** Puts parts read into `site` (all or none when one is laid out for other entities), yielding as it goes. */
  private async put(site: SiteFacts, rows: ChunkRow[]): Promise<void> {
    const other = rows.find((r) => !sameEntities(r.meta.entities, site.entities));
    if (other)
      throw new OutOfLine(
        `facts of ${other.day} (part ${other.part}) are laid out for [${other.meta.entities.join(', ')}], the site row lists [${site.entities.join(', ')}]`,
      );
    let since = performance.now();
    for (const r of rows) {
      putDay(site, r.day, r.part, r.meta, r.data);
      if (performance.now() - since >= SLICE_MS) {
        // a held website is read meanwhile (its days held): its parts stay in order; one loaded whole is not served yet
        if (this.sites.get(site.websiteId) === site) sortParts(site);
        await yieldToLoop();
        since = performance.now();
      }
    }
    sortParts(site);
  }

  /**
   * Loads a held website's other days in the background, a slice at a time (newer days first), while the facts held
   * stay within the budget (it never drops another website); a request for the website waits at most one slice.
   */
  private fillLater(db: Knex, websiteId: string, site: SiteFacts) {
    if (this.filling.get(websiteId) === site || (site.from === Number.NEGATIVE_INFINITY && site.to === Number.POSITIVE_INFINITY)) return;
    this.filling.set(websiteId, site);
    this.fill(db, websiteId, site)
      .catch((e) => this.log?.debug({ website_id: websiteId, err: e }, 'metric facts: background load stopped; requests load what they need'))
      .finally(() => {
        if (this.filling.get(websiteId) === site) this.filling.delete(websiteId);
      });
  }

  private async fill(db: Knex, websiteId: string, site: SiteFacts): Promise<void> {
    await yieldToLoop();
    const ext: { lo: string | null; hi: string | null } = await db('rm_fact_chunks')
      .where('website_id', websiteId)
      .first(db.raw('min(day)::text as lo'), db.raw('max(day)::text as hi'));
    if (!ext || ext.lo === null || ext.hi === null) return;
    const min = dayNumber(ext.lo);
    const max = dayNumber(ext.hi);
    for (;;) {
      if (this.sites.get(websiteId) !== site || this.bytes + this.sliceBytes(site) > this.maxBytes) return;
      const going = this.loading.get(websiteId);
      if (going) {
        await going.catch(() => undefined);
        continue;
      }
      let lo: number;
      let hi: number;
      if (site.to < max) [lo, hi] = [site.to + 1, Math.min(max, site.to + SLICE_DAYS)];
      else if (site.from > min) [lo, hi] = [Math.max(min, site.from - SLICE_DAYS), site.from - 1];
      else return;
      // a background slice in one query: no request waits for its first parts
      const p = this.readDays(db, site, lo, hi, null, SLICE_DAYS).then(() => {
        // the held days grow by what was read (a request may have extended them meanwhile: never shrink)
        if (lo < site.from && hi >= site.from - 1) site.from = lo;
        if (hi > site.to && lo <= site.to + 1) site.to = hi;
      });
      this.loading.set(websiteId, p);
      try {
        await p;
      } catch (e) {
        this.drop(websiteId);
        throw e;
      } finally {
        this.loading.delete(websiteId);
      }
      this.recount(websiteId, site);
      // the estimate of the slice was short: the budget holds all the same (the least recently used go, not this one)
      if (this.bytes > this.maxBytes) this.evict(websiteId);
      await yieldToLoop();
    }
  }

  /**
   * What a background slice of SLICE_DAYS days of this website is likely to take: its bytes per day held so far. The
   * background reads a slice only when that fits the budget, so it never pushes other websites out to fill one.
   */
  private sliceBytes(site: SiteFacts): number {
    const days = site.to - site.from + 1;
    return Number.isFinite(days) && days > 0 ? (site.bytes / days) * SLICE_DAYS : 0;
  }

  /** Websites whose other days are being read in the background (tests). */
  get fillingInBackground(): number {
    return this.filling.size;
  }

  private touch(websiteId: string, site: SiteFacts) {
    this.sites.delete(websiteId);
    site.dropped = false;
    this.sites.set(websiteId, site);
  }

  private evict(keep: string) {
    for (const id of this.sites.keys()) {
      if (this.bytes <= this.maxBytes) break;
      if (id === keep) continue;
      this.drop(id);
      this.evictions++;
    }
  }

  /** Drops a website's facts: the next read loads them as after a start (the bench's cold loads). */
  forget(websiteId: string): void {
    this.drop(websiteId);
  }

  /** Bytes of facts held (for /readyz and the bench). */
  get size(): number {
    return this.bytes;
  }

  stats(): FactsCacheStats {
    return { budget_bytes: this.maxBytes, held_bytes: this.bytes, websites_held: this.sites.size, loads: this.loads, evictions: this.evictions };
  }
}
