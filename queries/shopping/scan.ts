import { type CardDay, EMPTY_LABEL, type ShoppingSite } from './cards-cache';
import { LAST_POSITION_BUCKET } from './sql';

/**
 * One pass over held cards (./cards-cache) for a selection: what ./fast makes the blocks of. The same accumulator
 * takes day-range rollups (./rollups: the same sums over many days, kept) beside the cards it walks.
 */

export const DAY_MS = 86_400_000;

export const OWN = 1;
export const COMPETITOR = 2;

/** Prices of one group: the walked cards' (raw) and the rollups' (hists, sorted with cumulative counts). */
export interface PriceGroup {
  raw: number[];
  hists: PriceHist[];
  n: number;
  sum: number;
  min: number;
  max: number;
}

/** Distinct prices, ascending, and how many cards hold each price or a lower one. */
export interface PriceHist {
  values: Float64Array;
  cum: Float64Array;
}

export const priceGroup = (): PriceGroup => ({ raw: [], hists: [], n: 0, sum: 0, min: Number.POSITIVE_INFINITY, max: Number.NEGATIVE_INFINITY });

export function addPrice(g: PriceGroup, p: number) {
  g.raw.push(p);
  g.n++;
  g.sum += p;
  if (p < g.min) g.min = p;
  if (p > g.max) g.max = p;
}

/** A day's card and answer counts (card_days and answer_flags of the statement). */
export interface DayCount {
  cards: number;
  own: number;
  competitor: number;
  priced: number;
  ownPriced: number;
  competitorPriced: number;
  withoutMerchant: number;
  ownPositionSum: number;
  bestOwn: number;
  answers: number;
  answersOwn: number;
  answersCompetitor: number;
  ownFirst: number;
}

export const dayCount = (): DayCount => ({
  cards: 0,
  own: 0,
  competitor: 0,
  priced: 0,
  ownPriced: 0,
  competitorPriced: 0,
  withoutMerchant: 0,
  ownPositionSum: 0,
  bestOwn: 0x7fffffff,
  answers: 0,
  answersOwn: 0,
  answersCompetitor: 0,
  ownFirst: 0,
});

/** 0: the day is out of [startMs, endMs], 1: wholly in, 2: partly (its times are compared) */
export function rangeOf(day: number, startMs: number, endMs: number): number {
  const first = day * DAY_MS;
  const last = first + DAY_MS - 1;
  if (last < startMs || first > endMs) return 0;
  return first >= startMs && last <= endMs ? 1 : 2;
}

/** What one pass over the selected cards accumulates (one shape for every call: the pass stays optimized). */
export interface Scan {
  schedule: number;
  models: Uint8Array;
  prompts: Uint8Array;
  startMs: number;
  endMs: number;
  perDay: Map<number, DayCount>;
  /** selected answers per day */
  answersOf: Map<number, number>;
  target: Uint8Array | null;
  competitor: Uint8Array;
  buckets: number[][];
  C: number;
  all: PriceGroup[];
  sidePrices: (PriceGroup[] | null)[];
  /** currency * E + entity -> competitor prices */
  entityPrices: Map<number, PriceGroup>;
  E: number;
  K: number;
  P: number;
  mApp: Float64Array;
  mPos: Float64Array;
  mPriced: Float64Array;
  mOwn: Float64Array;
  mComp: Float64Array;
  mStamp: Int32Array;
  mAnswers: Float64Array;
  /** merchant pair -> cards */
  mNames: Map<number, number>;
  entApp: Float64Array;
  entPos: Float64Array;
  entBest: Int32Array;
  entStamp: Int32Array;
  entAnswers: Float64Array;
  entFirstStamp: Int32Array;
  entFirst: Float64Array;
  pApp: Float64Array;
  pPos: Float64Array;
  pBest: Int32Array;
  /** the number of the last answer taken (answers are numbered across days) */
  answerNo: number;
}

/** An empty pass for a selection over the site's dictionaries as they are now. */
export function newScan(
  site: ShoppingSite,
  schedule: number,
  models: Uint8Array,
  prompts: Uint8Array,
  startMs: number,
  endMs: number,
  competitor: Uint8Array,
  target: Uint8Array | null,
): Scan {
  const E = site.entities.size;
  const K = site.merchantKeys.size;
  const C = site.currencies.size;
  const P = site.pairs.size;
  return {
    schedule,
    models,
    prompts,
    startMs,
    endMs,
    perDay: new Map(),
    answersOf: new Map(),
    target,
    competitor,
    buckets: Array.from({ length: LAST_POSITION_BUCKET + 1 }, () => [0, 0, 0]),
    C,
    all: Array.from({ length: C }, priceGroup),
    sidePrices: [null, Array.from({ length: C }, priceGroup), Array.from({ length: C }, priceGroup)],
    entityPrices: new Map(),
    E,
    K,
    P,
    mApp: new Float64Array(K),
    mPos: new Float64Array(K),
    mPriced: new Float64Array(K),
    mOwn: new Float64Array(K),
    mComp: new Float64Array(K),
    mStamp: new Int32Array(K).fill(-1),
    mAnswers: new Float64Array(K),
    mNames: new Map(),
    entApp: new Float64Array(E),
    entPos: new Float64Array(E),
    entBest: new Int32Array(E).fill(0x7fffffff),
    entStamp: new Int32Array(E).fill(-1),
    entAnswers: new Float64Array(E),
    entFirstStamp: new Int32Array(E).fill(-1),
    entFirst: new Float64Array(E),
    pApp: new Float64Array(2 * P),
    pPos: new Float64Array(2 * P),
    pBest: new Int32Array(2 * P).fill(0x7fffffff),
    answerNo: -1,
  };
}

/** The side of card k of a day (0: other), as the statement gives it. */
export function sideOf(d: CardDay, k: number, target: Uint8Array | null, competitor: Uint8Array): number {
  if (d.own[k] === 1) {
    if (target === null || target[d.name[k]] === 1 || target[d.brand[k] < 0 ? EMPTY_LABEL : d.brand[k]] === 1) return OWN;
    return 0;
  }
  const e = d.entity[k];
  return e >= 0 && competitor[e] === 1 ? COMPETITOR : 0;
}

/** One day's answers into the scan: those of the selection's schedule, models and prompts in its range. */
export function countDay(
  x: Scan,
  parts: readonly { day: number; n: number; t: Uint32Array; schedule: Uint16Array; prompt: Uint16Array; model: Uint16Array }[],
) {
  const { schedule, models, prompts, startMs, endMs } = x;
  for (const a of parts) {
    const range = rangeOf(a.day, startMs, endMs);
    if (range === 0) continue;
    const base = a.day * DAY_MS;
    let n = 0;
    for (let i = 0; i < a.n; i++) {
      if (a.schedule[i] !== schedule || models[a.model[i]] === 0 || prompts[a.prompt[i]] === 0) continue;
      if (range === 2) {
        const ms = base + a.t[i];
        if (ms < startMs || ms > endMs) continue;
      }
      n++;
    }
    if (n) x.answersOf.set(a.day, (x.answersOf.get(a.day) ?? 0) + n);
  }
}

const bump = (m: Map<number, number>, k: number) => m.set(k, (m.get(k) ?? 0) + 1);

/** One day's cards into the scan: the answers the selection takes, each answer's cards together. */
export function scanDay(x: Scan, d: CardDay): void {
  const {
    schedule,
    models,
    prompts,
    startMs,
    endMs,
    perDay,
    target,
    competitor,
    buckets,
    all,
    sidePrices,
    entityPrices,
    E,
    mApp,
    mPos,
    mPriced,
    mOwn,
    mComp,
    mStamp,
    mAnswers,
    mNames,
    entApp,
    entPos,
    entBest,
    entStamp,
    entAnswers,
    entFirstStamp,
    entFirst,
    pApp,
    pPos,
    pBest,
  } = x;
  let answerNo = x.answerNo;
  const range = rangeOf(d.day, startMs, endMs);
  if (range === 0) return;
  const base = d.day * DAY_MS;
  let c: DayCount | null = null;
  let i = 0;
  while (i < d.n) {
    // one answer's cards: [i, j)
    let j = i + 1;
    while (j < d.n && d.answer[j] === d.answer[i]) j++;
    const taken =
      d.schedule[i] === schedule &&
      models[d.model[i]] !== 0 &&
      prompts[d.prompt[i]] !== 0 &&
      (range === 1 || (base + d.t[i] >= startMs && base + d.t[i] <= endMs));
    if (!taken) {
      i = j;
      continue;
    }
    if (!c) {
      c = perDay.get(d.day) ?? null;
      if (!c) {
        c = dayCount();
        perDay.set(d.day, c);
      }
    }
    answerNo++;
    let hasOwn = false;
    let hasCompetitor = false;
    let ownFirst = false;
    for (let k = i; k < j; k++) {
      const e = d.entity[k];
      const position = d.position[k];
      let side = 0;
      if (d.own[k] === 1) {
        if (target === null || target[d.name[k]] === 1 || target[d.brand[k] < 0 ? EMPTY_LABEL : d.brand[k]] === 1) side = OWN;
      } else if (e >= 0 && competitor[e] === 1) side = COMPETITOR;
      const cur = d.currency[k];
      const price = d.price[k];
      const priced = cur >= 0 && !Number.isNaN(price);
      const mk = d.merchantKey[k];
      c.cards++;
      if (priced) c.priced++;
      if (mk < 0) c.withoutMerchant++;
      if (position >= 1) {
        const b = buckets[Math.min(position, LAST_POSITION_BUCKET)];
        b[0]++;
        if (side === OWN) b[1]++;
        else if (side === COMPETITOR) b[2]++;
      }
      if (priced) {
        addPrice(all[cur], price);
        if (side !== 0) addPrice(sidePrices[side]![cur], price);
        if (side === COMPETITOR) {
          const key = cur * E + e;
          let g = entityPrices.get(key);
          if (!g) entityPrices.set(key, (g = priceGroup()));
          addPrice(g, price);
        }
      }
      if (mk >= 0) {
        mApp[mk]++;
        mPos[mk] += position;
        if (priced) mPriced[mk]++;
        if (side === OWN) mOwn[mk]++;
        else if (side === COMPETITOR) mComp[mk]++;
        if (mStamp[mk] !== answerNo) {
          mStamp[mk] = answerNo;
          mAnswers[mk]++;
        }
        if (d.merchant[k] >= 0) bump(mNames, d.merchantPair[k]);
      }
      if (side === 0) continue;
      if (side === OWN) {
        c.own++;
        if (priced) c.ownPriced++;
        c.ownPositionSum += position;
        if (position < c.bestOwn) c.bestOwn = position;
        hasOwn = true;
        if (position === 1) ownFirst = true;
      } else {
        c.competitor++;
        if (priced) c.competitorPriced++;
        hasCompetitor = true;
      }
      if (e >= 0) {
        entApp[e]++;
        entPos[e] += position;
        if (position < entBest[e]) entBest[e] = position;
        if (entStamp[e] !== answerNo) {
          entStamp[e] = answerNo;
          entAnswers[e]++;
        }
        if (position === 1 && entFirstStamp[e] !== answerNo) {
          entFirstStamp[e] = answerNo;
          entFirst[e]++;
        }
      }
      const slot = 2 * d.pair[k] + (side === OWN ? 1 : 0);
      pApp[slot]++;
      pPos[slot] += position;
      if (position < pBest[slot]) pBest[slot] = position;
    }
    c.answers++;
    if (hasOwn) c.answersOwn++;
    if (hasCompetitor) c.answersCompetitor++;
    if (ownFirst) c.ownFirst++;
    i = j;
  }
  x.answerNo = answerNo;
}
