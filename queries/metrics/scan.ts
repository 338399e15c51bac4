import type { Selection } from '../filters';
import { addBlock, blockAt, dayBlockAt, startScanBuilds } from './blocks';
import type { DayFacts, SiteFacts } from './facts/layout';

const DAY_MS = 86_400_000;

/** Counts of one bucket (the whole range, or one day) for the entities asked for, in their order. */
export interface Counts {
  /** answers selected */
  responses: number;
  /** answers mentioning at least one of the entities (NaN when the selection was compiled without it: `any: false`) */
  anyMentioned: number;
  mentioned: Float64Array;
  cited: Float64Array;
  posSum: Float64Array;
  posSq: Float64Array;
}

/**
 * What a reader needs counted besides the answers selected: `mentions` (answers mentioning each entity, and any of them),
 * `cites` (answers citing each entity), `positions` (mentions with their position sums), `all` (everything). A count
 * not needed is left at zero (anyMentioned NaN without `any`).
 */
export type Reads = 'all' | 'mentions' | 'cites' | 'positions';

/** A selection compiled against one website's facts: masks over its dictionaries and the entity columns to read. */
export interface CompiledSelection {
  /** -1: the schedule never ran (nothing selected) */
  schedule: number;
  prompt: Uint8Array;
  model: Uint8Array | null;
  location: Uint8Array | null;
  /** per requested entity, its column (-1: no facts for it yet) */
  slots: Int32Array;
  /** the requested columns as bits (websites with at most 32 entities) */
  columns: number;
  /**
   * every prompt and location, and every entity or no count of answers mentioning any of them (`any`): a segment inside
   * the time range is taken whole, from its sum
   */
  whole: boolean;
  /** the same with some locations: a segment inside the time range is taken from its sums by location */
  wholeByLocation: boolean;
  /** whether anyMentioned is counted: a subset of the entities can be read from per-entity sums only without it */
  any: boolean;
  /** the counts the reader needs (the others stay zero) */
  reads: Reads;
  /** every prompt of the website is selected */
  everyPrompt: boolean;
  /** the sums of a group of answers give the requested counts (every column, or no count of answers mentioning any) */
  everyColumn: boolean;
  /** the requested columns (no facts yet: none), each once */
  cols: Int32Array;
  /** the selected locations' dictionary indices */
  locationList: Int32Array;
  firstDay: number;
  lastDay: number;
  /** the start's day and time in it (ms since midnight); the end's day and time: bounds inside those two days */
  startDay: number;
  tMin: number;
  endDay: number;
  tMax: number;
}

const mask = <K>(size: number, keys: Iterable<K>, index: (k: K) => number | undefined): Uint8Array => {
  const m = new Uint8Array(Math.max(1, size));
  for (const k of keys) {
    const i = index(k);
    if (i !== undefined) m[i] = 1;
  }
  return m;
};

/**
 * `options.any` false: the caller reads no count of answers mentioning any of the entities (only mention-rate's relative
 * rate does), so a subset of the entities is read from the per-entity sums like all of them (anyMentioned is NaN).
 */
export function compileSelection(
  site: SiteFacts,
  s: Selection,
  entities: readonly string[],
  options: { any?: boolean; reads?: Reads } = {},
): CompiledSelection {
  const any = options.any ?? true;
  const reads = options.reads ?? 'all';
  const columnOf = new Map(site.entities.map((id, i) => [id, i]));
  const slots = Int32Array.from(entities, (id) => columnOf.get(id) ?? -1);
  let columns = 0;
  for (const c of slots) if (c >= 0 && c < 32) columns |= 1 << c;
  const start = s.start?.getTime();
  const end = s.end?.getTime();
  const first = site.order[0]?.day ?? 0;
  const last = site.order[site.order.length - 1]?.day ?? -1;
  const prompt = mask(site.prompts.size, s.promptIds, (p) => site.prompts.get(p));
  const allColumns = site.entities.length >= 32 ? -1 : (1 << site.entities.length) - 1;
  const everyPrompt = prompt.every((x, i) => x === 1 || i >= site.prompts.size);
  // without `any`, each entity's counts are its own column's: every column's sums serve any subset of them
  const everyColumn = site.entities.length <= 32 && (!any || (columns | 0) === (allColumns | 0));
  const location = s.locationIds ? mask(site.locations.size, s.locationIds, (l) => site.locations.get(l)) : null;
  const locationList: number[] = [];
  if (location) for (let l = 0; l < site.locations.size; l++) if (location[l] === 1) locationList.push(l);
  return {
    schedule: site.schedules.get(s.scheduleId) ?? -1,
    prompt,
    model: s.models ? mask(site.models.size, s.models, (m) => site.models.get(m)) : null,
    location,
    locationList: Int32Array.from(locationList),
    wholeByLocation: location !== null && everyPrompt && everyColumn,
    slots,
    columns,
    whole: !s.locationIds && everyPrompt && everyColumn,
    any,
    reads,
    everyPrompt,
    everyColumn,
    cols: Int32Array.from(new Set([...slots].filter((c) => c >= 0))),
    firstDay: start === undefined ? first : Math.max(first, Math.floor(start / DAY_MS)),
    lastDay: end === undefined ? last : Math.min(last, Math.floor(end / DAY_MS)),
    startDay: start === undefined ? -Infinity : Math.floor(start / DAY_MS),
    tMin: start === undefined ? 0 : start - Math.floor(start / DAY_MS) * DAY_MS,
    endDay: end === undefined ? Infinity : Math.floor(end / DAY_MS),
    tMax: end === undefined ? DAY_MS : end - Math.floor(end / DAY_MS) * DAY_MS,
  };
}

/**
 * Per part, its segments' answers summed by location, packed as DayFacts.sums is: segment si and location l (the
 * website's location index, L of them when computed) at (si * L + l) * (2 + 4E); a location without answers sums zeros.
 */
const locationSums = new WeakMap<DayFacts, { L: number; sums: Float64Array }>();

function sumsByLocation(E: number, L: number, d: DayFacts): { L: number; sums: Float64Array } {
  const held = locationSums.get(d);
  // a location added to the website since covers no answers of this part: the sums computed before still serve
  if (held) return held;
  const stride = 2 + 4 * E;
  const sums = new Float64Array(d.segments.length * L * stride);
  d.segments.forEach((seg, si) => {
    for (let i = seg.start; i < seg.end; i++) addAnswer(d, i, E, sums, (si * L + d.location[i]) * stride);
  });
  const x = { L, sums };
  locationSums.set(d, x);
  return x;
}

/**
 * Adds answer `i` of a part to the packed sums at `o` (responses, any, then per entity column mentioned, cited, posSum,
 * posSq: E each, as DayFacts.sums): through its mention and citation bits where the part has them (at most 32 entities).
 * The decoding (./facts/layout copySegment) adds a part's answers with it as it writes their columns.
 */
export function addAnswer(d: Pick<DayFacts, 'pos' | 'cite' | 'mentions' | 'cites'>, i: number, E: number, sums: Float64Array, o: number): void {
  sums[o]++;
  const base = i * E;
  const pos = d.pos;
  if (d.mentions !== null && d.cites !== null) {
    let m = d.mentions[i];
    if (m !== 0) sums[o + 1]++;
    while (m !== 0) {
      const e = 31 - Math.clz32(m & -m);
      const v = pos[base + e];
      sums[o + 2 + e]++;
      sums[o + 2 + 2 * E + e] += v;
      sums[o + 2 + 3 * E + e] += v * v;
      m &= m - 1;
    }
    let x = d.cites[i];
    while (x !== 0) {
      sums[o + 2 + E + 31 - Math.clz32(x & -x)]++;
      x &= x - 1;
    }
    return;
  }
  const cite = d.cite;
  let hit = false;
  for (let e = 0; e < E; e++) {
    const v = pos[base + e];
    if (v !== 0) {
      hit = true;
      sums[o + 2 + e]++;
      sums[o + 2 + 2 * E + e] += v;
      sums[o + 2 + 3 * E + e] += v * v;
    }
    if (cite[base + e] !== 0) sums[o + 2 + E + e]++;
  }
  if (hit) sums[o + 1]++;
}

/** Counts by entity column (the website's order), filled by the scan and then put in the requested order. */
export interface ColumnCounts {
  responses: number;
  any: number;
  mentioned: Float64Array;
  cited: Float64Array;
  posSum: Float64Array;
  posSq: Float64Array;
}

const columnCounts = (E: number): ColumnCounts => ({
  responses: 0,
  any: 0,
  mentioned: new Float64Array(E),
  cited: new Float64Array(E),
  posSum: new Float64Array(E),
  posSq: new Float64Array(E),
});

function requested(q: CompiledSelection, c: ColumnCounts): Counts {
  const k = q.slots.length;
  const out: Counts = {
    responses: c.responses,
    anyMentioned: q.any ? c.any : Number.NaN,
    mentioned: new Float64Array(k),
    cited: new Float64Array(k),
    posSum: new Float64Array(k),
    posSq: new Float64Array(k),
  };
  for (let j = 0; j < k; j++) {
    const col = q.slots[j];
    if (col < 0) continue;
    out.mentioned[j] = c.mentioned[col];
    out.cited[j] = c.cited[col];
    out.posSum[j] = c.posSum[col];
    out.posSq[j] = c.posSq[col];
  }
  return out;
}

/**
 * Calls `row` for every answer of the day the selection takes: only the segments of its schedule and models are
 * read, then prompts, locations and the time bounds of the first and last day are checked per answer.
 */
function eachSelected(d: DayFacts, q: CompiledSelection, row: (i: number, model: number) => void): void {
  const lo = d.day === q.startDay ? q.tMin : 0;
  const hi = d.day === q.endDay ? q.tMax : DAY_MS;
  const { prompt, location } = q;
  for (const seg of d.segments) {
    if (seg.schedule !== q.schedule || (q.model !== null && q.model[seg.model] === 0)) continue;
    for (let i = seg.start; i < seg.end; i++) {
      if (prompt[d.prompt[i]] === 0) continue;
      if (location !== null && location[d.location[i]] === 0) continue;
      const t = d.t[i];
      if (t < lo || t > hi) continue;
      row(i, seg.model);
    }
  }
}

/**
 * Adds the packed sums at `o` of `sums` (responses, any, then per entity column mentioned, cited, posSum, posSq: E each,
 * as DayFacts.sums) to `c`: the counts the selection's reader needs, of its requested columns.
 */
export function addSums(sums: Float64Array | Uint32Array, o: number, E: number, q: CompiledSelection, c: ColumnCounts): void {
  c.responses += sums[o];
  const reads = q.reads;
  const cols = q.cols;
  if (reads !== 'cites') {
    c.any += sums[o + 1];
    const m0 = o + 2;
    const mentioned = c.mentioned;
    for (let j = 0; j < cols.length; j++) mentioned[cols[j]] += sums[m0 + cols[j]];
  }
  if (reads === 'cites' || reads === 'all') {
    const c0 = o + 2 + E;
    const cited = c.cited;
    for (let j = 0; j < cols.length; j++) cited[cols[j]] += sums[c0 + cols[j]];
  }
  if (reads === 'positions' || reads === 'all') {
    const s0 = o + 2 + 2 * E;
    const q0 = s0 + E;
    const posSum = c.posSum;
    const posSq = c.posSq;
    for (let j = 0; j < cols.length; j++) {
      const e = cols[j];
      posSum[e] += sums[s0 + e];
      posSq[e] += sums[q0 + e];
    }
  }
}

/**
 * Whether a day's answers are all inside the selection's time bounds: answers' times are ms since the day's midnight,
 * below DAY_MS, so an end at the day's last millisecond (an end_date) bounds nothing.
 */
export const wholeDay = (q: CompiledSelection, day: number): boolean =>
  (day !== q.startDay || q.tMin === 0) && (day !== q.endDay || q.tMax >= DAY_MS - 1);

/**
 * Adds one part's selected answers to `c`: only the segments of the selection's schedule and models are read, then
 * prompts, locations and the time bounds of the first and last day are checked per answer, and each mentioned or
 * cited entity of an answer is counted through its bit mask, only the counts the reader needs. (Loops written out,
 * not through a callback, with the counters in locals and the time check only on the range's first and last day: this
 * is the hot path of every metric request.)
 */
function scanDay(site: SiteFacts, d: DayFacts, q: CompiledSelection, c: ColumnCounts): void {
  const E = site.entities.length;
  const lo = d.day === q.startDay ? q.tMin : 0;
  const hi = d.day === q.endDay ? q.tMax : DAY_MS;
  const bounded = !wholeDay(q, d.day);
  const { prompt, model } = q;
  const location = q.location ?? ALL;
  const anyLocation = q.location === null;
  const { pos, t, mentions, cites } = d;
  const dPrompt = d.prompt;
  const dLocation = d.location;
  const sel = q.columns;
  const slots = q.slots;
  const whole = q.whole && !bounded;
  const stride = 2 + 4 * E;
  if (q.wholeByLocation && !bounded) {
    // every prompt and entity, some locations: each segment from its sums by location
    const { L, sums } = sumsByLocation(E, site.locations.size, d);
    const segments = d.segments;
    for (let si = 0; si < segments.length; si++) {
      const seg = segments[si];
      if (seg.schedule !== q.schedule || (model !== null && model[seg.model] === 0)) continue;
      for (const l of q.locationList) if (l < L) addSums(sums, (si * L + l) * stride, E, q, c);
    }
    return;
  }
  const mentioned = c.mentioned;
  const cited = c.cited;
  const posSum = c.posSum;
  const posSq = c.posSq;
  const wantMentions = q.reads !== 'cites';
  const wantPositions = q.reads === 'positions' || q.reads === 'all';
  const wantCites = q.reads === 'cites' || q.reads === 'all';
  let responses = 0;
  let any = 0;
  const segments = d.segments;
  for (let si = 0; si < segments.length; si++) {
    const seg = segments[si];
    if (seg.schedule !== q.schedule || (model !== null && model[seg.model] === 0)) continue;
    if (whole) {
      // the segment's sums, packed (DayFacts.sums)
      addSums(d.sums, si * stride, E, q, c);
      continue;
    }
    const end = seg.end;
    if (mentions !== null && cites !== null) {
      for (let i = seg.start; i < end; i++) {
        if (prompt[dPrompt[i]] === 0) continue;
        if (!anyLocation && location[dLocation[i]] === 0) continue;
        if (bounded) {
          const ti = t[i];
          if (ti < lo || ti > hi) continue;
        }
        responses++;
        if (wantMentions) {
          let m = mentions[i] & sel;
          if (m !== 0) {
            any++;
            if (wantPositions) {
              const base = i * E;
              do {
                const b = 31 - Math.clz32(m & -m);
                const p = pos[base + b];
                mentioned[b]++;
                posSum[b] += p;
                posSq[b] += p * p;
                m &= m - 1;
              } while (m !== 0);
            } else {
              do {
                mentioned[31 - Math.clz32(m & -m)]++;
                m &= m - 1;
              } while (m !== 0);
            }
          }
        }
        if (wantCites) {
          let x = cites[i] & sel;
          while (x !== 0) {
            cited[31 - Math.clz32(x & -x)]++;
            x &= x - 1;
          }
        }
      }
      continue;
    }
    // more than 32 entities: the requested columns one by one
    for (let i = seg.start; i < end; i++) {
      if (prompt[dPrompt[i]] === 0) continue;
      if (!anyLocation && location[dLocation[i]] === 0) continue;
      const ti = t[i];
      if (ti < lo || ti > hi) continue;
      responses++;
      const base = i * E;
      let hit = false;
      for (let j = 0; j < slots.length; j++) {
        const col = slots[j];
        if (col < 0) continue;
        const p = pos[base + col];
        if (p !== 0) {
          hit = true;
          mentioned[col]++;
          posSum[col] += p;
          posSq[col] += p * p;
        }
        if (d.cite[base + col] !== 0) cited[col]++;
      }
      if (hit) any++;
    }
  }
  c.responses += responses;
  c.any += any;
}

/** A location mask that takes every location (no location filter). */
const ALL = new Uint8Array(1);

const inRange = (q: CompiledSelection, day: number) => day >= q.firstDay && day <= q.lastDay;

/**
 * Every selected answer of the range, part by part: the selection rule of the metric scans (schedule, models,
 * prompts, locations, the first and last day's time bounds) for a reader that counts something else per answer.
 */
export function eachSelectedAnswer(site: SiteFacts, q: CompiledSelection, row: (d: DayFacts, i: number, model: number) => void): void {
  if (q.schedule < 0) return;
  for (const d of site.order) if (inRange(q, d.day)) eachSelected(d, q, (i, model) => row(d, i, model));
}

/** The first part of `order` (in day order) of `day` or later. */
export function firstPartFrom(order: DayFacts[], day: number): number {
  let lo = 0;
  let hi = order.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (order[mid].day < day) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * One bucket over the whole range: the parts in range one by one, or where a selection's counts come from sums, whole
 * days from blocks of several days (./blocks) and the other days one by one.
 */
export function scanTotal(site: SiteFacts, q: CompiledSelection): Counts {
  const E = site.entities.length;
  const c = columnCounts(E);
  if (q.schedule < 0) return requested(q, c);
  const order = site.order;
  const blocks = q.everyColumn;
  startScanBuilds();
  const fullFirst = wholeDay(q, q.startDay) ? q.startDay : q.startDay + 1;
  const fullLast = wholeDay(q, q.endDay) ? q.endDay : q.endDay - 1;
  for (let i = firstPartFrom(order, q.firstDay); i < order.length && order[i].day <= q.lastDay; ) {
    if (blocks && (i === 0 || order[i - 1].day !== order[i].day)) {
      const b = blockAt(site, i, fullFirst, fullLast, q.everyPrompt);
      if (b) {
        addBlock(b.block, E, q, c);
        i = b.next;
        continue;
      }
    }
    scanDay(site, order[i], q, c);
    i++;
  }
  return requested(q, c);
}

/** The parts in range grouped by day (they are in day order). */
function* daysInRange(site: SiteFacts, q: CompiledSelection): Generator<DayFacts[]> {
  let group: DayFacts[] = [];
  for (const d of site.order) {
    if (!inRange(q, d.day)) continue;
    if (group.length && group[0].day !== d.day) {
      yield group;
      group = [];
    }
    group.push(d);
  }
  if (group.length) yield group;
}

/** One bucket per UTC day that has selected answers, oldest first. */
export function scanDaily(site: SiteFacts, q: CompiledSelection): Array<{ day: number; counts: Counts }> {
  const out: Array<{ day: number; counts: Counts }> = [];
  if (q.schedule < 0) return out;
  const E = site.entities.length;
  const order = site.order;
  // a whole day of every prompt, of several parts: its parts' sums by (schedule, model, location) at once (./blocks)
  const dayBlocks = q.everyColumn && q.everyPrompt;
  startScanBuilds();
  const c = columnCounts(E);
  for (let i = firstPartFrom(order, q.firstDay); i < order.length && order[i].day <= q.lastDay; ) {
    const day = order[i].day;
    const b = dayBlocks && wholeDay(q, day) ? dayBlockAt(site, i) : null;
    if (b) {
      addBlock(b.block, E, q, c);
      i = b.next;
    } else for (; i < order.length && order[i].day === day; i++) scanDay(site, order[i], q, c);
    if (c.responses > 0) out.push({ day, counts: requested(q, c) });
    c.responses = 0;
    c.any = 0;
    c.mentioned.fill(0);
    c.cited.fill(0);
    c.posSum.fill(0);
    c.posSq.fill(0);
  }
  return out;
}

/** Ids compared by their code units (no locale), null (no location) first. */
const byId = (a: string | null, b: string | null) => (a === b ? 0 : a === null ? -1 : b === null ? 1 : a < b ? -1 : 1);

/**
 * Per (day, model, prompt, location) group, the counts of each requested entity: the reporting connector's rows, by day,
 * then model, prompt id and location id (null first) - a total order of the groups, the same wherever it is computed.
 */
export function scanGroups(
  site: SiteFacts,
  q: CompiledSelection,
  visit: (day: number, model: number, prompt: number, location: number, c: Counts) => void,
): void {
  if (q.schedule < 0) return;
  const E = site.entities.length;
  const k = q.slots.length;
  for (const parts of daysInRange(site, q)) {
    const groups = new Map<number, Counts>();
    for (const d of parts) {
      eachSelected(d, q, (i, model) => {
        const key = (model * 65536 + d.prompt[i]) * 65536 + d.location[i];
        let c = groups.get(key);
        if (!c) {
          c = {
            responses: 0,
            anyMentioned: 0,
            mentioned: new Float64Array(k),
            cited: new Float64Array(k),
            posSum: new Float64Array(k),
            posSq: new Float64Array(k),
          };
          groups.set(key, c);
        }
        c.responses++;
        const base = i * E;
        for (let j = 0; j < k; j++) {
          const col = q.slots[j];
          if (col < 0) continue;
          const p = d.pos[base + col];
          if (p !== 0) {
            c.mentioned[j]++;
            c.posSum[j] += p;
          }
          if (d.cite[base + col] !== 0) c.cited[j]++;
        }
      });
    }
    // in the order of the ids, not of the dictionary indices: those follow the order the parts were loaded in, which
    // differs between processes and rebuilds, and pages must be the same on every instance and after a rebuild
    const keyed = [...groups.keys()].map((key) => ({
      key,
      model: Math.floor(key / 65536 / 65536),
      prompt: Math.floor(key / 65536) % 65536,
      location: key % 65536,
    }));
    keyed.sort(
      (a, b) =>
        byId(site.models.keys[a.model], site.models.keys[b.model]) ||
        byId(site.prompts.keys[a.prompt], site.prompts.keys[b.prompt]) ||
        byId(site.locations.keys[a.location], site.locations.keys[b.location]),
    );
    for (const g of keyed) visit(parts[0].day, g.model, g.prompt, g.location, groups.get(g.key)!);
  }
}
