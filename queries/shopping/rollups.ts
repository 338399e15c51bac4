import { ROLLUP_LEVELS, type ShoppingSite } from './cards-cache';
import { COMPETITOR, countDay, type DayCount, newScan, OWN, type PriceGroup, type PriceHist, type Scan, scanDay } from './scan';

/** Day-range rollups of a website's held shopping cards, reused across spans (rules: docs/architecture.md#shopping-rollups) */

/** Bytes of rollups a website may hold; past it, its rollups are dropped (they are built again as asked). */
const ROLLUP_BYTES = 64 * 1024 * 1024;
/**
 * The website's newest days (the newest held day and the one before) are always walked, never rolled up: answers
 * arrive there, and a changed day drops every range holding it (the longest among them would be walked again).
 */
export const RECENT_DAYS = 2;
/** Selection families kept per website (the least recently used goes first). */
const FAMILIES = 8;

interface RangePrice {
  /** 0: all sides, OWN, COMPETITOR, or 3: one competitor entity (competitor side) */
  kind: number;
  currency: number;
  entity: number;
  n: number;
  sum: number;
  min: number;
  max: number;
  hist: PriceHist;
}

/** What one range of days adds to a pass. */
export interface Range {
  /** days with answers or cards, their selected answers and card counts (null: no selected answer shows cards) */
  days: number[];
  dayAnswers: number[];
  dayCounts: (DayCount | null)[];
  buckets: Float64Array;
  entities: Int32Array;
  /** per entity of `entities`: appearances, position sum, best position, answers, first-position answers */
  ent: Float64Array;
  merchants: Int32Array;
  /** per merchant key of `merchants`: appearances, position sum, priced, own, competitor, answers */
  merch: Float64Array;
  merchantPairs: Int32Array;
  merchantPairCards: Float64Array;
  slots: Int32Array;
  /** per slot of `slots`: appearances, position sum, best position */
  slot: Float64Array;
  prices: RangePrice[];
  bytes: number;
}

/** The family a selection falls in, or null when its numbers cannot come from rollups. */
export function familyOf(site: ShoppingSite, x: Scan): string | null {
  if (x.target !== null) return null;
  for (let p = 0; p < site.prompts.size; p++) if (x.prompts[p] === 0) return null;
  const models: number[] = [];
  for (let m = 0; m < x.models.length; m++) if (x.models[m]) models.push(m);
  const competitors: number[] = [];
  for (let e = 0; e < x.competitor.length; e++) if (x.competitor[e]) competitors.push(e);
  return `${x.schedule}|${models.join(',')}|${competitors.join(',')}`;
}

/** Ranges added to passes and ranges built, since the process started (what a test reads to know rollups answered). */
export const rollupCounts = { added: 0, built: 0 };

const keyOf = (level: number, i: number) => level * 2 ** 24 + i;

function histOf(raw: number[]): PriceHist {
  const sorted = Float64Array.from(raw).sort();
  let distinct = 0;
  for (let i = 0; i < sorted.length; i++) if (i === 0 || sorted[i] !== sorted[i - 1]) distinct++;
  const values = new Float64Array(distinct);
  const cum = new Float64Array(distinct);
  let j = -1;
  for (let i = 0; i < sorted.length; i++) {
    if (i === 0 || sorted[i] !== sorted[i - 1]) values[++j] = sorted[i];
    cum[j] = i + 1;
  }
  return { values, cum };
}

/** Walks the days of range (level, i) for the family's selection (every prompt, every time of day) and keeps the sums. */
function build(site: ShoppingSite, like: Scan, level: number, i: number): Range {
  const prompts = new Uint8Array(site.prompts.size).fill(1);
  const x = newScan(site, like.schedule, like.models, prompts, Number.NEGATIVE_INFINITY, Number.POSITIVE_INFINITY, like.competitor, null);
  const first = i * 2 ** level;
  const last = first + 2 ** level - 1;
  const days: number[] = [];
  const dayAnswers: number[] = [];
  const dayCounts: (DayCount | null)[] = [];
  for (let day = first; day <= last; day++) {
    const parts = site.partsByDay.get(day);
    if (parts) countDay(x, parts);
    const cards = site.cards.get(day);
    if (cards) scanDay(x, cards);
    const answers = x.answersOf.get(day) ?? 0;
    const counts = x.perDay.get(day) ?? null;
    if (answers || counts) {
      days.push(day);
      dayAnswers.push(answers);
      dayCounts.push(counts);
    }
  }
  const entities: number[] = [];
  const ent: number[] = [];
  for (let e = 0; e < x.E; e++) {
    if (x.entApp[e] === 0) continue;
    entities.push(e);
    ent.push(x.entApp[e], x.entPos[e], x.entBest[e], x.entAnswers[e], x.entFirst[e]);
  }
  const merchants: number[] = [];
  const merch: number[] = [];
  for (let k = 0; k < x.K; k++) {
    if (x.mApp[k] === 0) continue;
    merchants.push(k);
    merch.push(x.mApp[k], x.mPos[k], x.mPriced[k], x.mOwn[k], x.mComp[k], x.mAnswers[k]);
  }
  const slots: number[] = [];
  const slot: number[] = [];
  for (let s = 0; s < 2 * x.P; s++) {
    if (x.pApp[s] === 0) continue;
    slots.push(s);
    slot.push(x.pApp[s], x.pPos[s], x.pBest[s]);
  }
  const prices: RangePrice[] = [];
  const keep = (g: PriceGroup, kind: number, currency: number, entity: number) => {
    if (g.n) prices.push({ kind, currency, entity, n: g.n, sum: g.sum, min: g.min, max: g.max, hist: histOf(g.raw) });
  };
  for (let cur = 0; cur < x.C; cur++) {
    keep(x.all[cur], 0, cur, -1);
    keep(x.sidePrices[OWN]![cur], OWN, cur, -1);
    keep(x.sidePrices[COMPETITOR]![cur], COMPETITOR, cur, -1);
  }
  for (const [key, g] of x.entityPrices) keep(g, 3, Math.floor(key / x.E), key % x.E);
  let bytes =
    400 + days.length * 120 + (entities.length + merchants.length + x.mNames.size + slots.length) * 8 + (ent.length + merch.length + slot.length) * 8;
  for (const p of prices) bytes += 100 + p.hist.values.length * 16;
  return {
    days,
    dayAnswers,
    dayCounts,
    buckets: Float64Array.from(x.buckets.flat()),
    entities: Int32Array.from(entities),
    ent: Float64Array.from(ent),
    merchants: Int32Array.from(merchants),
    merch: Float64Array.from(merch),
    merchantPairs: Int32Array.from(x.mNames.keys()),
    merchantPairCards: Float64Array.from(x.mNames.values()),
    slots: Int32Array.from(slots),
    slot: Float64Array.from(slot),
    prices,
    bytes,
  };
}

/** A range's sums into a pass (its days are none of the days the pass walks). */
function add(x: Scan, r: Range): void {
  for (let i = 0; i < r.days.length; i++) {
    if (r.dayAnswers[i]) x.answersOf.set(r.days[i], r.dayAnswers[i]);
    const c = r.dayCounts[i];
    if (c) x.perDay.set(r.days[i], { ...c });
  }
  for (let b = 0; b < x.buckets.length; b++) for (let j = 0; j < 3; j++) x.buckets[b][j] += r.buckets[b * 3 + j];
  for (let i = 0; i < r.entities.length; i++) {
    const e = r.entities[i];
    x.entApp[e] += r.ent[i * 5];
    x.entPos[e] += r.ent[i * 5 + 1];
    if (r.ent[i * 5 + 2] < x.entBest[e]) x.entBest[e] = r.ent[i * 5 + 2];
    x.entAnswers[e] += r.ent[i * 5 + 3];
    x.entFirst[e] += r.ent[i * 5 + 4];
  }
  for (let i = 0; i < r.merchants.length; i++) {
    const k = r.merchants[i];
    x.mApp[k] += r.merch[i * 6];
    x.mPos[k] += r.merch[i * 6 + 1];
    x.mPriced[k] += r.merch[i * 6 + 2];
    x.mOwn[k] += r.merch[i * 6 + 3];
    x.mComp[k] += r.merch[i * 6 + 4];
    x.mAnswers[k] += r.merch[i * 6 + 5];
  }
  for (let i = 0; i < r.merchantPairs.length; i++) {
    const p = r.merchantPairs[i];
    x.mNames.set(p, (x.mNames.get(p) ?? 0) + r.merchantPairCards[i]);
  }
  for (let i = 0; i < r.slots.length; i++) {
    const s = r.slots[i];
    x.pApp[s] += r.slot[i * 3];
    x.pPos[s] += r.slot[i * 3 + 1];
    if (r.slot[i * 3 + 2] < x.pBest[s]) x.pBest[s] = r.slot[i * 3 + 2];
  }
  for (const p of r.prices) {
    let g: PriceGroup;
    if (p.kind === 0) g = x.all[p.currency];
    else if (p.kind !== 3) g = x.sidePrices[p.kind]![p.currency];
    else {
      const key = p.currency * x.E + p.entity;
      let h = x.entityPrices.get(key);
      if (!h) {
        h = { raw: [], hists: [], n: 0, sum: 0, min: Number.POSITIVE_INFINITY, max: Number.NEGATIVE_INFINITY };
        x.entityPrices.set(key, h);
      }
      g = h;
    }
    g.n += p.n;
    g.sum += p.sum;
    if (p.min < g.min) g.min = p.min;
    if (p.max > g.max) g.max = p.max;
    g.hists.push(p.hist);
  }
}

/**
 * Adds the rollups of whole days [first, last] of the selection's family into the pass (building the ranges not held
 * yet). The pass must walk none of these days.
 */
export function addRollups(site: ShoppingSite, x: Scan, family: string, first: number, last: number): void {
  let ranges = site.rollups.get(family) as Map<number, Range> | undefined;
  if (ranges) site.rollups.delete(family);
  else ranges = new Map();
  site.rollups.set(family, ranges);
  while (site.rollups.size > FAMILIES) {
    const [oldest, held] = site.rollups.entries().next().value as [string, Map<number, Range>];
    for (const r of held.values()) site.rollupBytes -= r.bytes;
    site.rollups.delete(oldest);
  }
  let day = first;
  while (day <= last) {
    let level = 0;
    while (level < ROLLUP_LEVELS && day % 2 ** (level + 1) === 0 && day + 2 ** (level + 1) - 1 <= last) level++;
    const i = day / 2 ** level;
    const key = keyOf(level, i);
    let r = ranges.get(key);
    if (!r) {
      r = build(site, x, level, i);
      rollupCounts.built++;
      ranges.set(key, r);
      site.rollupBytes += r.bytes;
    }
    add(x, r);
    rollupCounts.added++;
    day += 2 ** level;
  }
  if (site.rollupBytes > ROLLUP_BYTES) {
    site.rollups.clear();
    site.rollupBytes = 0;
  }
}

/** Every price the website's cards hold, ascending. */
function pricesOf(site: ShoppingSite): Float64Array {
  if (!site.priceSorted) site.priceSorted = Float64Array.from(site.priceSet).sort();
  return site.priceSorted;
}

/** How many of a hist's prices are at most v. */
function atMost(h: PriceHist, v: number): number {
  let lo = 0;
  let hi = h.values.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (h.values[mid] <= v) lo = mid + 1;
    else hi = mid;
  }
  return lo === 0 ? 0 : h.cum[lo - 1];
}

/** The k-th smallest (from 0) of the prices of several hists. */
function kth(all: Float64Array, hists: readonly PriceHist[], k: number): number {
  let lo = 0;
  let hi = all.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    let n = 0;
    for (const h of hists) n += atMost(h, all[mid]);
    if (n >= k + 1) hi = mid;
    else lo = mid + 1;
  }
  return all[lo];
}

/** percentile_cont(0.5) of a group holding rollups' prices (and maybe walked cards'), as Postgres interpolates it. */
export function medianOfHists(site: ShoppingSite, g: PriceGroup): number {
  const hists = g.raw.length ? [...g.hists, histOf(g.raw)] : g.hists;
  const all = pricesOf(site);
  const pos = 0.5 * (g.n - 1);
  const k = Math.floor(pos);
  const lo = kth(all, hists, k);
  if (k === pos) return lo;
  const hi = kth(all, hists, k + 1);
  return lo + (pos - k) * (hi - lo);
}
