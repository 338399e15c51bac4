import type { DayFacts, SiteFacts } from './facts/layout';
import { addAnswer, addSums, type ColumnCounts, type CompiledSelection, firstPartFrom } from './scan';

/** Blocks: a website's answers of whole days summed per (schedule, model, location, prompt), so a long span adds a few sums (rules: docs/architecture.md#metric-blocks) */

/** The block sizes as powers of two of days, largest first: 64 and 16 days. */
export const DEFAULT_BLOCK_LEVELS: readonly number[] = [6, 4];
let BLOCK_LEVELS = [...DEFAULT_BLOCK_LEVELS];
/** Bytes of blocks a website may hold; past it, its blocks are dropped (they are built again as asked). */
const BLOCK_BYTES = 64 * 1024 * 1024;
/** The newest held days never summed in a block. */
export const RECENT_DAYS = 2;

/** A day's parts are summed in a day block when it has at least this many (one part's segments are summed already). */
export const DEFAULT_DAY_PARTS = 2;
let DAY_PARTS = DEFAULT_DAY_PARTS;

/** A block keeps its sums by prompt when it has at least this many answers per (schedule, model, location, prompt). */
export const DEFAULT_ANSWERS_PER_CELL = 4;
let ANSWERS_PER_CELL = DEFAULT_ANSWERS_PER_CELL;

/**
 * Block sizes (powers of two of days), the least parts of a day summed in a day block (Infinity: none) and the answers
 * per cell a block's sums by prompt need: the tests use small ones so their few days and answers span blocks, and no
 * blocks to compare with a walk of every part.
 */
export function setBlockLevels(levels: number[], dayParts = DEFAULT_DAY_PARTS, answersPerCell = DEFAULT_ANSWERS_PER_CELL): void {
  BLOCK_LEVELS = [...levels].sort((a, b) => b - a);
  DAY_PARTS = dayParts;
  ANSWERS_PER_CELL = answersPerCell;
}

export interface Block {
  level: number;
  index: number;
  /** whether it holds its sums by prompt (cells): only when they are at most a quarter of its answers (ANSWERS_PER_CELL) */
  byPrompt: boolean;
  /** the parts summed, in the website's (day, part) order */
  parts: DayFacts[];
  /** per (schedule, model): its runs [runStart, runEnd) */
  segSchedule: Int32Array;
  segModel: Int32Array;
  segRuns: Int32Array;
  /** per (schedule, model, location): its location and cells [cellStart, cellEnd) */
  runLocation: Int32Array;
  runCells: Int32Array;
  /** per (schedule, model, location, prompt): its prompt (none without byPrompt) */
  cellPrompt: Uint16Array;
  /** sums packed as DayFacts.sums (2 + 4E each): per segment, per run, per cell */
  segSums: Float64Array;
  runSums: Float64Array;
  /** in 32-bit integers when every sum fits (half the bytes), else in doubles */
  cellSums: Float64Array | Uint32Array;
  bytes: number;
}

interface Held {
  blocks: Map<number, Block>;
  /** one day's parts summed by (schedule, model, location), by day */
  days: Map<number, Block>;
  bytes: number;
  /** the keys queued for the background */
  queued: { blocks: Set<number>; days: Set<number> };
}

const held = new WeakMap<SiteFacts, Held>();

/** Blocks added to scans and built since the process started (what a test reads to know blocks answered). */
/** blocks added and built; `failed`: background builds that threw (dropped: the scans walk those days instead) */
export const blockCounts = { added: 0, built: 0, failed: 0, lastError: null as string | null };

/**
 * Where the blocks a scan does not hold are built. By default (null) after the scan, in the background: the scan walks
 * their days (the same numbers) and queues them, and they are built a few milliseconds at a time between other work
 * (BUILD_SLICE_MS), so later scans find them. A cold year-long request building its blocks itself held the event loop
 * 150 ms (every block) or 10-40 ms (a 10 ms budget, one block at least), stalling other websites' requests.
 * A number: the scan builds them itself for that many ms at most, one block at least (tests: 0, one block a scan;
 * infinite, every block the scan meets).
 */
export const DEFAULT_BUILD_MS_PER_SCAN: number | null = null;
let buildMsPerScan: number | null = DEFAULT_BUILD_MS_PER_SCAN;
let buildUntil = Number.POSITIVE_INFINITY;
let builtInScan = 0;

/** A scan starts: blocks not held may be built for the building time from now, one at least (unless built in the background). */
export function startScanBuilds(): void {
  buildUntil = performance.now() + (buildMsPerScan ?? 0);
  builtInScan = 0;
}

/** The building time of one scan; null: none, blocks are built in the background (the default). */
export function setBuildMsPerScan(ms: number | null): void {
  buildMsPerScan = ms;
}

/** How long a background building slice runs before it gives the event loop back (ms). */
const BUILD_SLICE_MS = 4;

const keyOf = (level: number, i: number) => level * 2 ** 26 + i;
const EMPTY_SUMS = new Float64Array(0);

/**
 * Sums the answers of `parts` (whole days) by (schedule, model, location, prompt); `byPrompt` false: by (schedule, model,
 * location) only (its cells are its runs, each with prompt 0: for selections of every prompt).
 */
export function buildBlock(E: number, level: number, index: number, parts: DayFacts[], byPrompt = true): Block {
  const b = new BlockBuilder(E, level, index, parts, byPrompt);
  b.step(Number.POSITIVE_INFINITY);
  return b.finish();
}

/**
 * A block built a part at a time (buildBlock whole, or the background builds a few milliseconds at a time): step reads
 * parts until a deadline, finish sums the cells up once every part is read. The same sums either way.
 */
export class BlockBuilder {
  private readonly stride: number;
  /** the dictionaries' sizes the cell table needs (first pass), then the parts summed (second pass) */
  private scanned = 0;
  private summed = 0;
  private P = 1;
  private L = 1;
  private dense = true;
  private readonly groups = new Map<number, Int32Array | Map<number, number>>();
  private sums: Float64Array;
  private cells = 0;
  private readonly cellKey: number[] = [];

  constructor(
    readonly E: number,
    readonly level: number,
    readonly index: number,
    readonly parts: DayFacts[],
    readonly byPrompt = true,
  ) {
    this.stride = 2 + 4 * E;
    this.sums = new Float64Array(this.stride * 256);
  }

  /** Reads parts until `deadline` (performance.now(); one part at least); true when every part is read. */
  step(deadline: number): boolean {
    const { parts } = this;
    do {
      if (this.scanned < parts.length) this.scan(parts[this.scanned++]);
      else if (this.summed < parts.length) {
        if (this.summed === 0) {
          if (!this.byPrompt) this.P = 1;
          this.dense = this.L * this.P <= 1 << 16;
        }
        this.sum(parts[this.summed++]);
      } else return true;
    } while (performance.now() < deadline);
    return this.summed === parts.length;
  }

  /** first pass: the largest prompt and location index (cells by key: a dense table when the dictionaries are small) */
  private scan(d: DayFacts): void {
    let { P, L } = this;
    for (let i = 0; i < d.n; i++) {
      if (d.prompt[i] >= P) P = d.prompt[i] + 1;
      if (d.location[i] >= L) L = d.location[i] + 1;
    }
    this.P = P;
    this.L = L;
  }

  /**
   * second pass: cells by key, (schedule, model) -> (location, prompt) -> cell number (a dense table when the
   * dictionaries are small, else a map); each cell's sums as it grows
   */
  private sum(d: DayFacts): void {
    const { E, stride, byPrompt, dense, P, L, groups, cellKey } = this;
    const { prompt, location } = d;
    for (const seg of d.segments) {
      const gk = seg.schedule * 65536 + seg.model;
      let g = groups.get(gk);
      if (!g) groups.set(gk, (g = dense ? new Int32Array(L * P).fill(-1) : new Map<number, number>()));
      for (let i = seg.start; i < seg.end; i++) {
        const l = location[i];
        const p = byPrompt ? prompt[i] : 0;
        let k = dense ? (g as Int32Array)[l * P + p] : ((g as Map<number, number>).get(l * 65536 + p) ?? -1);
        if (k < 0) {
          k = this.cells++;
          if (dense) (g as Int32Array)[l * P + p] = k;
          else (g as Map<number, number>).set(l * 65536 + p, k);
          cellKey.push(gk, l * 65536 + p);
          if (this.cells * stride > this.sums.length) {
            const grown = new Float64Array(this.sums.length * 2);
            grown.set(this.sums);
            this.sums = grown;
          }
        }
        addAnswer(d, i, E, this.sums, k * stride);
      }
    }
  }

  /** The block, once step has read every part. */
  finish(): Block {
    const { stride, byPrompt, parts, level, index, cells, cellKey, sums } = this;
    // cells in (schedule, model, location) groups: segments, their runs by location, each run's cells
    const order = Array.from({ length: cells }, (_, k) => k).sort(
      (a, b) => cellKey[2 * a] - cellKey[2 * b] || Math.floor(cellKey[2 * a + 1] / 65536) - Math.floor(cellKey[2 * b + 1] / 65536),
    );
    const cellPrompt = new Uint16Array(byPrompt ? cells : 0);
    const cellSums = new Float64Array(cells * stride);
    const segs: number[] = [];
    const runs: number[] = [];
    for (let j = 0; j < cells; j++) {
      const k = order[j];
      const gk = cellKey[2 * k];
      const loc = Math.floor(cellKey[2 * k + 1] / 65536);
      if (byPrompt) cellPrompt[j] = cellKey[2 * k + 1] % 65536;
      cellSums.set(sums.subarray(k * stride, (k + 1) * stride), j * stride);
      const newSeg = segs.length === 0 || segs[segs.length - 3] !== gk;
      if (newSeg) segs.push(gk, runs.length / 3, runs.length / 3);
      if (newSeg || runs[runs.length - 3] !== loc) {
        runs.push(loc, j, j);
        segs[segs.length - 1]++;
      }
      runs[runs.length - 1]++;
    }
    const S = segs.length / 3;
    const R = runs.length / 3;
    const segSums = new Float64Array(S * stride);
    const runSums = new Float64Array(R * stride);
    const segSchedule = new Int32Array(S);
    const segModel = new Int32Array(S);
    const segRuns = new Int32Array(2 * S);
    const runLocation = new Int32Array(R);
    const runCells = new Int32Array(2 * R);
    for (let r = 0; r < R; r++) {
      runLocation[r] = runs[3 * r];
      runCells[2 * r] = runs[3 * r + 1];
      runCells[2 * r + 1] = runs[3 * r + 2];
      for (let j = runs[3 * r + 1]; j < runs[3 * r + 2]; j++) for (let x = 0; x < stride; x++) runSums[r * stride + x] += cellSums[j * stride + x];
    }
    for (let s = 0; s < S; s++) {
      segSchedule[s] = Math.floor(segs[3 * s] / 65536);
      segModel[s] = segs[3 * s] % 65536;
      segRuns[2 * s] = segs[3 * s + 1];
      segRuns[2 * s + 1] = segs[3 * s + 2];
      for (let r = segs[3 * s + 1]; r < segs[3 * s + 2]; r++) for (let x = 0; x < stride; x++) segSums[s * stride + x] += runSums[r * stride + x];
    }
    // sums by prompt that would not save a walk of most answers are not kept (a sparse website's cells are its answers)
    const answers = parts.reduce((n, d) => n + d.n, 0);
    const withCells = byPrompt && cells * ANSWERS_PER_CELL <= answers;
    return {
      level,
      index,
      byPrompt: withCells,
      parts,
      segSchedule,
      segModel,
      segRuns,
      runLocation,
      runCells,
      cellPrompt: withCells ? cellPrompt : new Uint16Array(0),
      segSums,
      runSums,
      cellSums: withCells ? narrow(cellSums) : EMPTY_SUMS,
      bytes:
        300 + parts.length * 8 + S * 16 + R * 12 + (S + R) * stride * 8 + (withCells ? cells * (2 + stride * (fitsUint32(cellSums) ? 4 : 8)) : 0),
    };
  }
}

/** Whether every sum is a whole number below 2^32. */
function fitsUint32(sums: Float64Array): boolean {
  for (let i = 0; i < sums.length; i++) if (sums[i] > 0xffffffff) return false;
  return true;
}

/** The sums in 32-bit integers when they fit (exactly: they are whole numbers), else as they are. */
const narrow = (sums: Float64Array): Float64Array | Uint32Array => (fitsUint32(sums) ? new Uint32Array(sums) : sums);

/** Adds a block's answers the selection takes (its days all whole days of the selection) to `c`. */
export function addBlock(b: Block, E: number, q: CompiledSelection, c: ColumnCounts): void {
  const stride = 2 + 4 * E;
  const { model, location, prompt } = q;
  for (let s = 0; s < b.segSchedule.length; s++) {
    if (b.segSchedule[s] !== q.schedule || (model !== null && model[b.segModel[s]] === 0)) continue;
    if (location === null && q.everyPrompt) {
      addSums(b.segSums, s * stride, E, q, c);
      continue;
    }
    for (let r = b.segRuns[2 * s]; r < b.segRuns[2 * s + 1]; r++) {
      if (location !== null && location[b.runLocation[r]] !== 1) continue;
      if (q.everyPrompt) {
        addSums(b.runSums, r * stride, E, q, c);
        continue;
      }
      const end = b.runCells[2 * r + 1];
      for (let j = b.runCells[2 * r]; j < end; j++) if (prompt[b.cellPrompt[j]] === 1) addSums(b.cellSums, j * stride, E, q, c);
    }
  }
}

/**
 * The block that starts at part `i` of the website's (day, part) order, when one does and it serves the selection
 * (every part of its days is one of the selection's whole days, none of the website's newest days): the block (built
 * now if not held, or held of other parts) and the index of the first part after it; null otherwise (not held: queued
 * for the background, or this scan's building time spent).
 */
export function blockAt(
  site: SiteFacts,
  i: number,
  fullFirst: number,
  fullLast: number,
  everyPrompt: boolean,
): { block: Block; next: number } | null {
  const order = site.order;
  const day = order[i].day;
  const newest = order[order.length - 1].day - RECENT_DAYS;
  // inside a larger block of the selection's whole days (not held when the scan reached its first day: queued, its days
  // walked) smaller blocks are used when held, not queued: the larger one will serve
  let inLarger = false;
  for (const level of BLOCK_LEVELS) {
    const size = 2 ** level;
    const index = Math.floor(day / size);
    const first = index * size;
    const last = first + size - 1;
    // the block's days: none of them before the selection's first whole day or held before part i (walked already)
    const fits = first >= fullFirst && last <= fullLast && last <= newest;
    if (!fits || (i > 0 && order[i - 1].day >= first)) {
      if (fits) inLarger = true;
      continue;
    }
    let next = i;
    while (next < order.length && order[next].day <= last) next++;
    const b = kept(site, 'blocks', keyOf(level, index), i, next, !inLarger);
    // not held (queued, or this scan's building time spent): its days are walked
    if (!b) return null;
    // a block without its sums by prompt serves selections of every prompt only; the others walk its days
    if (!b.byPrompt && !everyPrompt) return null;
    blockCounts.added++;
    return { block: b, next };
  }
  return null;
}

/**
 * The parts of the day of part `i` (its first) summed by (schedule, model, location), for a selection of every prompt
 * over that whole day, when the day has several parts (DAY_PARTS) and is none of the website's newest days; null otherwise.
 */
export function dayBlockAt(site: SiteFacts, i: number): { block: Block; next: number } | null {
  const order = site.order;
  const day = order[i].day;
  if (day > order[order.length - 1].day - RECENT_DAYS) return null;
  let next = i + 1;
  while (next < order.length && order[next].day === day) next++;
  if (next - i < DAY_PARTS) return null;
  const b = kept(site, 'days', day, i, next, true);
  if (!b) return null;
  blockCounts.added++;
  return { block: b, next };
}

type Kind = 'blocks' | 'days';

const heldOf = (site: SiteFacts): Held => {
  let h = held.get(site);
  if (!h) held.set(site, (h = { blocks: new Map(), days: new Map(), bytes: 0, queued: { blocks: new Set(), days: new Set() } }));
  return h;
};

/** A block's builder of `parts`: a block of days (level and index from its key), or a day's parts (no sums by prompt). */
const builderOf = (site: SiteFacts, kind: Kind, key: number, parts: DayFacts[]) =>
  kind === 'days'
    ? new BlockBuilder(site.entities.length, 0, key, parts, false)
    : new BlockBuilder(site.entities.length, Math.floor(key / 2 ** 26), key % 2 ** 26, parts);

/**
 * The block held under `key` when it was built of parts [from, to) of the website's order, else one built now, or
 * null: queued for the background (with `queue`; by default), or this scan's building time spent (setBuildMsPerScan).
 */
function kept(site: SiteFacts, kind: Kind, key: number, from: number, to: number, queue: boolean): Block | null {
  const h = heldOf(site);
  const b = h[kind].get(key);
  if (b && sameParts(b.parts, site.order, from, to)) return b;
  if (buildMsPerScan === null) {
    if (queue) later(site, kind, key);
    return null;
  }
  if (builtInScan > 0 && performance.now() > buildUntil) return null;
  builtInScan++;
  const builder = builderOf(site, kind, key, site.order.slice(from, to));
  builder.step(Number.POSITIVE_INFINITY);
  return keep(site, h, kind, key, builder.finish());
}

/** Holds a block built (in place of the one held under its key). */
function keep(site: SiteFacts, h: Held, kind: Kind, key: number, b: Block): Block {
  const before = h[kind].get(key);
  if (before) {
    h.bytes -= before.bytes;
    site.bytes -= before.bytes;
  }
  blockCounts.built++;
  if (h.bytes + b.bytes > BLOCK_BYTES) {
    h.blocks.clear();
    h.days.clear();
    site.bytes -= h.bytes;
    h.bytes = 0;
  }
  h[kind].set(key, b);
  h.bytes += b.bytes;
  // the website's bytes count its blocks: the facts budget (FactsCache) covers them from its next count on
  site.bytes += b.bytes;
  return b;
}

function sameParts(parts: DayFacts[], order: DayFacts[], from: number, to: number): boolean {
  if (parts.length !== to - from) return false;
  for (let k = 0; k < parts.length; k++) if (parts[k] !== order[from + k]) return false;
  return true;
}

/** The parts [from, to) of the website's order a block under `key` sums now; null when no block of it serves a scan. */
function partsOf(site: SiteFacts, kind: Kind, key: number): { from: number; to: number } | null {
  const order = site.order;
  if (order.length === 0) return null;
  const newest = order[order.length - 1].day - RECENT_DAYS;
  const size = kind === 'days' ? 1 : 2 ** Math.floor(key / 2 ** 26);
  const first = kind === 'days' ? key : (key % 2 ** 26) * size;
  const last = first + size - 1;
  if (last > newest) return null;
  const lo = firstPartFrom(order, first);
  let to = lo;
  while (to < order.length && order[to].day <= last) to++;
  if (to === lo || (kind === 'days' && to - lo < DAY_PARTS)) return null;
  return { from: lo, to };
}

/** A block queued for the background, and once started its builder (of the parts it started from). */
interface Queued {
  site: SiteFacts;
  kind: Kind;
  key: number;
  builder: BlockBuilder | null;
}

const queued: Queued[] = [];
let draining = false;

/** Queues a block for the background (once while queued). */
function later(site: SiteFacts, kind: Kind, key: number): void {
  if (site.dropped) return;
  const h = heldOf(site);
  if (h.queued[kind].has(key)) return;
  h.queued[kind].add(key);
  queued.push({ site, kind, key, builder: null });
  if (!draining) {
    draining = true;
    setImmediate(drain);
  }
}

/**
 * Builds queued blocks for BUILD_SLICE_MS at most, then gives the event loop back (one part at least a turn). A block
 * whose parts changed meanwhile (a day written or loaded since) is not kept: the next scan queues it again; those of a
 * website its cache dropped are not built.
 */
function drain(): void {
  try {
    drainFor(performance.now() + BUILD_SLICE_MS);
  } catch (err) {
    // a block is an optimisation: one that cannot be built is dropped (its days are walked), never the process
    blockCounts.failed++;
    blockCounts.lastError = err instanceof Error ? err.message : String(err);
    if (queued.length) done(queued[0]);
  }
  if (queued.length) setImmediate(drain);
  else draining = false;
}

function drainFor(until: number): void {
  do {
    const job = queued[0];
    if (!job) break;
    const { site, kind, key } = job;
    // a website dropped meanwhile (evicted, or loaded again whole): nobody reads its blocks
    if (site.dropped) {
      done(job);
      continue;
    }
    if (!job.builder) {
      const at = partsOf(site, kind, key);
      const h = heldOf(site);
      const b = h[kind].get(key);
      if (!at || (b && sameParts(b.parts, site.order, at.from, at.to))) {
        done(job);
        continue;
      }
      job.builder = builderOf(site, kind, key, site.order.slice(at.from, at.to));
    }
    if (!job.builder.step(until)) break;
    const at = partsOf(site, kind, key);
    if (at && sameParts(job.builder.parts, site.order, at.from, at.to)) keep(site, heldOf(site), kind, key, job.builder.finish());
    done(job);
  } while (performance.now() < until);
}

function done(job: Queued): void {
  queued.shift();
  heldOf(job.site).queued[job.kind].delete(job.key);
}

/** Blocks queued for the background (tests, the bench). */
export const blocksQueued = (): number => queued.length;

/** Bytes of blocks held for a website (tests, the bench). */
export const blockBytes = (site: SiteFacts): number => held.get(site)?.bytes ?? 0;
