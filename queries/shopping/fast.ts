import { dayName } from '../metrics/facts-cache';
import { type CardDay, EMPTY_LABEL, type ShoppingSite } from './cards-cache';
import { LAST_POSITION_BUCKET } from './sql';
import type { PriceRow, PriceStats, ProductSql, ShoppingBlocks, ShoppingSelection, Side } from './types';

/**
 * The shopping statement's blocks (./sql) computed over a website's cards held in process (./cards-cache): the same
 * rows, the same numbers, from one pass over the selected days' cards (and a second over the top products' cards).
 * What a statement left to Postgres is done as Postgres does it: sides as the statement gives them (target
 * identifiers matched by Postgres's own `~*`, ./cards-cache targetMatches), medians as percentile_cont interpolates,
 * modes' ties to the first in "C" order, sorts by code point where the statement sorts `collate "C"`.
 */

const DAY_MS = 86_400_000;

/** Strings in "C" collation order (UTF-8 bytes, that is code points). */
export function cmpC(a: string, b: string): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    // a surrogate stands for a code point past every other UTF-16 unit
    const xs = x >= 0xd800 && x <= 0xdfff;
    const ys = y >= 0xd800 && y <= 0xdfff;
    if (xs !== ys) return xs ? 1 : -1;
    return x - y;
  }
  return a.length - b.length;
}

/** The k-th smallest of xs[0..n) (k from 0), rearranging xs. */
function select(xs: Float64Array, n: number, k: number): number {
  let lo = 0;
  let hi = n - 1;
  while (hi > lo) {
    const pivot = xs[(lo + hi) >>> 1];
    let i = lo;
    let j = hi;
    while (i <= j) {
      while (xs[i] < pivot) i++;
      while (xs[j] > pivot) j--;
      if (i <= j) {
        const t = xs[i];
        xs[i] = xs[j];
        xs[j] = t;
        i++;
        j--;
      }
    }
    if (k <= j) hi = j;
    else if (k >= i) lo = i;
    else return xs[k];
  }
  return xs[k];
}

/** percentile_cont(0.5) of the values, as Postgres interpolates it (lo + (hi - lo) * 0.5). */
export function medianOf(values: readonly number[]): number {
  const n = values.length;
  const xs = Float64Array.from(values);
  const pos = 0.5 * (n - 1);
  const k = Math.floor(pos);
  const lo = select(xs, n, k);
  if (k === pos) return lo;
  let hi = Number.POSITIVE_INFINITY;
  for (let i = k + 1; i < n; i++) if (xs[i] < hi) hi = xs[i];
  return lo + (pos - k) * (hi - lo);
}

/** The most frequent of the counted values; a tie goes to the first in "C" order (as mode() within group ordered so). */
function modeOf(counts: Map<number, number>, text: (i: number) => string): number | null {
  let best: number | null = null;
  let bestN = 0;
  for (const [v, n] of counts) {
    if (n > bestN || (n === bestN && best !== null && cmpC(text(v), text(best)) < 0)) {
      best = v;
      bestN = n;
    }
  }
  return best;
}

const bump = (m: Map<number, number>, k: number) => m.set(k, (m.get(k) ?? 0) + 1);

interface PriceGroup {
  prices: number[];
  sum: number;
  min: number;
  max: number;
}

const priceGroup = (): PriceGroup => ({ prices: [], sum: 0, min: Number.POSITIVE_INFINITY, max: Number.NEGATIVE_INFINITY });

function addPrice(g: PriceGroup, p: number) {
  g.prices.push(p);
  g.sum += p;
  if (p < g.min) g.min = p;
  if (p > g.max) g.max = p;
}

/** A day's card and answer counts (card_days and answer_flags of the statement). */
interface DayCount {
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

/** A top product's cards: names, brands, answers, prices per currency, merchants. */
interface TopAcc {
  slot: number;
  rank: number;
  names: Map<number, number>;
  brands: Map<number, number>;
  answers: number;
  lastAnswer: number;
  prices: Map<number, PriceGroup>;
  sellers: Map<number, { n: number; names: Map<number, number> }>;
}

/** 0: the day is out of [startMs, endMs], 1: wholly in, 2: partly (its times are compared) */
function rangeOf(day: number, startMs: number, endMs: number): number {
  const first = day * DAY_MS;
  const last = first + DAY_MS - 1;
  if (last < startMs || first > endMs) return 0;
  return first >= startMs && last <= endMs ? 1 : 2;
}

/** The k first of xs in `cmp` order, in that order (one pass: a top list is short, the products many). */
function firstK(xs: readonly number[], k: number, cmp: (a: number, b: number) => number): number[] {
  const top: number[] = [];
  for (const x of xs) {
    if (top.length === k && cmp(x, top[k - 1]) >= 0) continue;
    if (top.length < k) top.push(x);
    else top[k - 1] = x;
    for (let i = top.length - 1; i > 0 && cmp(top[i], top[i - 1]) < 0; i--) {
      const t = top[i];
      top[i] = top[i - 1];
      top[i - 1] = t;
    }
  }
  return top;
}

const OWN = 1;
const COMPETITOR = 2;

/** The selected answers per day (the answers of the selection's schedule, models and prompts in its range). */
function countAnswers(
  site: ShoppingSite,
  schedule: number,
  models: Uint8Array,
  prompts: Uint8Array,
  startMs: number,
  endMs: number,
): Map<number, number> {
  const answersOf = new Map<number, number>();
  for (const a of site.parts.values()) {
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
    if (n) answersOf.set(a.day, (answersOf.get(a.day) ?? 0) + n);
  }
  return answersOf;
}

/** What one pass over the selected cards accumulates (one shape for every call: the pass stays optimized). */
interface Scan {
  schedule: number;
  models: Uint8Array;
  prompts: Uint8Array;
  startMs: number;
  endMs: number;
  perDay: Map<number, DayCount>;
  target: Uint8Array | null;
  competitor: Uint8Array;
  buckets: number[][];
  all: PriceGroup[];
  sidePrices: (PriceGroup[] | null)[];
  entityPrices: Map<number, PriceGroup>;
  E: number;
  mApp: Float64Array;
  mPos: Float64Array;
  mPriced: Float64Array;
  mOwn: Float64Array;
  mComp: Float64Array;
  mStamp: Int32Array;
  mAnswers: Float64Array;
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
  selDay: CardDay[];
  selIdx: number[];
  selAnswer: number[];
  selSlot: number[];
  /** the number of the last answer taken (answers are numbered across days) */
  answerNo: number;
}

/** One day's cards into the scan: the answers the selection takes, each answer's cards together. */
function scanDay(x: Scan, d: CardDay): void {
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
    selDay,
    selIdx,
    selAnswer,
    selSlot,
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
        c = {
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
        };
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
      selDay.push(d);
      selIdx.push(k);
      selAnswer.push(answerNo);
      selSlot.push(slot);
    }
    c.answers++;
    if (hasOwn) c.answersOwn++;
    if (hasCompetitor) c.answersCompetitor++;
    if (ownFirst) c.ownFirst++;
    i = j;
  }
  x.answerNo = answerNo;
}

/**
 * The blocks of one selection over a website's held cards. `competitorIds`: the competitors whose cards are
 * competitor cards; `target`: per label, whether it holds a target identifier (null: no target identifiers).
 */
export function fastBlocks(site: ShoppingSite, s: ShoppingSelection, competitorIds: readonly string[], target: Uint8Array | null): ShoppingBlocks {
  const out: ShoppingBlocks = {
    answer_days: [],
    card_days: [],
    answer_flags: [],
    entities: [],
    entity_answers: [],
    entity_products: [],
    merchants: [],
    positions: [],
    prices: [],
    top: [],
  };
  const schedule = site.schedules.get(s.scheduleId);
  if (schedule === undefined) return out;
  const models = new Uint8Array(site.models.size);
  for (const m of s.models) {
    const i = site.models.get(m);
    if (i !== undefined) models[i] = 1;
  }
  const prompts = new Uint8Array(site.prompts.size);
  for (const p of s.promptIds) {
    const i = site.prompts.get(p);
    if (i !== undefined) prompts[i] = 1;
  }
  const startMs = s.start ? s.start.getTime() : Number.NEGATIVE_INFINITY;
  const endMs = s.end ? s.end.getTime() : Number.POSITIVE_INFINITY;
  // ---- answers per day
  const answersOf = countAnswers(site, schedule, models, prompts, startMs, endMs);
  for (const day of [...answersOf.keys()].sort((a, b) => a - b)) out.answer_days.push({ day: dayName(day), answers: answersOf.get(day)! });

  // ---- the cards
  const E = site.entities.size;
  const competitor = new Uint8Array(E);
  for (const id of competitorIds) {
    const i = site.entities.get(id);
    if (i !== undefined) competitor[i] = 1;
  }
  const entApp = new Float64Array(E);
  const entPos = new Float64Array(E);
  const entBest = new Int32Array(E).fill(0x7fffffff);
  const entAnswers = new Float64Array(E);
  const entFirst = new Float64Array(E);
  const entStamp = new Int32Array(E).fill(-1);
  const entFirstStamp = new Int32Array(E).fill(-1);
  const K = site.merchantKeys.size;
  const mApp = new Float64Array(K);
  const mOwn = new Float64Array(K);
  const mComp = new Float64Array(K);
  const mPos = new Float64Array(K);
  const mPriced = new Float64Array(K);
  const mAnswers = new Float64Array(K);
  const mStamp = new Int32Array(K).fill(-1);
  const mNames = new Map<number, number>(); // merchant pair -> cards
  const buckets = Array.from({ length: LAST_POSITION_BUCKET + 1 }, () => [0, 0, 0]);
  const C = site.currencies.size;
  const all = Array.from({ length: C }, priceGroup);
  const sidePrices = [null, Array.from({ length: C }, priceGroup), Array.from({ length: C }, priceGroup)];
  const entityPrices = new Map<number, PriceGroup>(); // currency * E + entity -> competitor prices
  const P = site.pairs.size;
  const pApp = new Float64Array(2 * P);
  const pPos = new Float64Array(2 * P);
  const pBest = new Int32Array(2 * P).fill(0x7fffffff);
  // the tracked cards of the selection, for the second pass over the top products
  const selDay: CardDay[] = [];
  const selIdx: number[] = [];
  const selAnswer: number[] = [];
  const selSlot: number[] = [];
  const perDay = new Map<number, DayCount>();

  const x: Scan = {
    answerNo: -1,
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
    selDay,
    selIdx,
    selAnswer,
    selSlot,
  };
  for (const d of site.cards.values()) scanDay(x, d);

  // ---- the blocks
  for (const [day, c] of perDay) {
    const date = dayName(day);
    out.card_days.push({
      day: date,
      cards: c.cards,
      own_cards: c.own,
      competitor_cards: c.competitor,
      priced_cards: c.priced,
      own_priced_cards: c.ownPriced,
      competitor_priced_cards: c.competitorPriced,
      cards_without_merchant: c.withoutMerchant,
      own_position_sum: c.ownPositionSum,
      best_own_position: c.own ? c.bestOwn : null,
    });
    out.answer_flags.push({
      day: date,
      answers_with_products: c.answers,
      answers_with_own_products: c.answersOwn,
      answers_with_competitor_products: c.answersCompetitor,
      own_first_position_answers: c.ownFirst,
    });
  }
  const entityId = (e: number) => site.entities.keys[e];
  for (let e = 0; e < E; e++) {
    if (entApp[e] === 0) continue;
    out.entities.push({ entity_id: entityId(e), appearances: entApp[e], position_sum: entPos[e], best_position: entBest[e] });
    out.entity_answers.push({ entity_id: entityId(e), answers: entAnswers[e], first_position_answers: entFirst[e] });
  }
  const productsOf = new Map<number, number>(); // (entity + 1) * 2 + own -> products
  for (let slot = 0; slot < 2 * P; slot++) {
    if (pApp[slot] === 0) continue;
    const key = (site.pairEntity[slot >> 1] + 1) * 2 + (slot & 1);
    productsOf.set(key, (productsOf.get(key) ?? 0) + 1);
  }
  for (const [key, products] of productsOf) {
    const e = (key >> 1) - 1;
    // a tracked card without an entity: a row the answer does not read (as the statement's null entity row)
    if (e < 0) continue;
    out.entity_products.push({ side: key & 1 ? 'own' : 'competitor', entity_id: entityId(e), products });
  }

  const merchantName = new Map<number, number>(); // key -> its most frequent merchant
  {
    const counts = new Map<number, Map<number, number>>();
    for (const [pair, n] of mNames) {
      const [mk, m] = site.merchantPairOf[pair];
      let byName = counts.get(mk);
      if (!byName) counts.set(mk, (byName = new Map()));
      byName.set(m, n);
    }
    for (const [mk, byName] of counts) merchantName.set(mk, modeOf(byName, (m) => site.merchants.keys[m])!);
  }
  for (let mk = 0; mk < K; mk++) {
    if (mApp[mk] === 0) continue;
    const named = merchantName.get(mk);
    out.merchants.push({
      merchant_key: site.merchantKeys.keys[mk],
      merchant: named === undefined ? site.merchantKeys.keys[mk] : site.merchants.keys[named],
      appearances: mApp[mk],
      answers: mAnswers[mk],
      own_appearances: mOwn[mk],
      competitor_appearances: mComp[mk],
      position_sum: mPos[mk],
      priced_appearances: mPriced[mk],
    });
  }
  out.merchants.sort((a, b) => b.appearances - a.appearances || cmpC(a.merchant_key, b.merchant_key));

  for (let b = 1; b <= LAST_POSITION_BUCKET; b++) {
    const [cards, own, comp] = buckets[b];
    if (cards) out.positions.push({ bucket: b, cards, own_cards: own, competitor_cards: comp });
  }

  const priceRow = (
    currency: number,
    side: Side | null,
    entity: string | null,
    allSides: number,
    allEntities: number,
    g: PriceGroup,
    avg: boolean,
  ): PriceRow => ({
    currency: site.currencies.keys[currency],
    side,
    entity_id: entity,
    all_sides: allSides,
    all_entities: allEntities,
    cards: g.prices.length,
    min_price: g.min,
    max_price: g.max,
    median_price: medianOf(g.prices),
    avg_price: avg ? g.sum / g.prices.length : 0,
  });
  for (let cur = 0; cur < C; cur++) {
    if (all[cur].prices.length === 0) continue;
    out.prices.push(priceRow(cur, null, null, 1, 1, all[cur], true));
    for (const side of [OWN, COMPETITOR]) {
      const g = sidePrices[side]![cur];
      if (g.prices.length) out.prices.push(priceRow(cur, side === OWN ? 'own' : 'competitor', null, 0, 1, g, false));
    }
  }
  for (const [key, g] of entityPrices) out.prices.push(priceRow(Math.floor(key / E), 'competitor', entityId(key % E), 0, 0, g, false));

  // ---- top products: ranked per side, then their cards read again
  const productKey = (slot: number) => site.products.keys[site.pairProduct[slot >> 1]];
  const entityOf = (slot: number) => site.pairEntity[slot >> 1];
  const ranked: Record<Side, number[]> = { own: [], competitor: [] };
  for (let slot = 0; slot < 2 * P; slot++) if (pApp[slot] !== 0) ranked[slot & 1 ? 'own' : 'competitor'].push(slot);
  const avgPosition = (slot: number) => pPos[slot] / pApp[slot];
  const byRank = (a: number, b: number) => {
    const d = pApp[b] - pApp[a] || avgPosition(a) - avgPosition(b) || cmpC(productKey(a), productKey(b));
    if (d !== 0) return d;
    const ea = entityOf(a);
    const eb = entityOf(b);
    // uuids order as their text; a card without an entity (null) last
    if (ea < 0 || eb < 0) return (ea < 0 ? 1 : 0) - (eb < 0 ? 1 : 0);
    return cmpC(entityId(ea), entityId(eb));
  };
  const tops = new Map<number, TopAcc>();
  for (const side of ['competitor', 'own'] as const) {
    const slots = firstK(ranked[side], s.topProductsLimit, byRank);
    slots.forEach((slot, i) => {
      tops.set(slot, { slot, rank: i + 1, names: new Map(), brands: new Map(), answers: 0, lastAnswer: -1, prices: new Map(), sellers: new Map() });
    });
  }
  if (tops.size) {
    for (let x = 0; x < selSlot.length; x++) {
      const t = tops.get(selSlot[x]);
      if (!t) continue;
      const d = selDay[x];
      const k = selIdx[x];
      bump(t.names, d.name[k]);
      if (d.brand[k] >= 0) bump(t.brands, d.brand[k]);
      if (t.lastAnswer !== selAnswer[x]) {
        t.lastAnswer = selAnswer[x];
        t.answers++;
      }
      const cur = d.currency[k];
      if (cur >= 0 && !Number.isNaN(d.price[k])) {
        let g = t.prices.get(cur);
        if (!g) t.prices.set(cur, (g = priceGroup()));
        addPrice(g, d.price[k]);
      }
      const mk = d.merchantKey[k];
      if (mk >= 0) {
        let seller = t.sellers.get(mk);
        if (!seller) t.sellers.set(mk, (seller = { n: 0, names: new Map() }));
        seller.n++;
        if (d.merchant[k] >= 0) bump(seller.names, d.merchant[k]);
      }
    }
  }
  const label = (i: number) => site.labels.keys[i];
  for (const t of [...tops.values()].sort((a, b) => (a.slot & 1) - (b.slot & 1) || a.rank - b.rank)) {
    const prices: PriceStats[] = [...t.prices]
      .map(([cur, g]) => ({
        currency: site.currencies.keys[cur],
        cards: g.prices.length,
        min_price: g.min,
        median_price: medianOf(g.prices),
        max_price: g.max,
      }))
      .sort((a, b) => b.cards - a.cards || cmpC(a.currency, b.currency));
    const merchants = [...t.sellers]
      .map(([mk, seller]) => {
        const named = modeOf(seller.names, (m) => site.merchants.keys[m]);
        const key = site.merchantKeys.keys[mk];
        return { merchant: named === null ? key : site.merchants.keys[named], merchant_key: key, appearances: seller.n };
      })
      .sort((a, b) => b.appearances - a.appearances || cmpC(a.merchant_key, b.merchant_key));
    const brand = modeOf(t.brands, label);
    const e = entityOf(t.slot);
    const row: ProductSql & { rank: number } = {
      side: t.slot & 1 ? 'own' : 'competitor',
      rank: t.rank,
      entity_id: e < 0 ? (null as unknown as string) : entityId(e),
      name: label(modeOf(t.names, label)!),
      brand: brand === null ? null : label(brand),
      appearances: pApp[t.slot],
      answers: t.answers,
      avg_position: avgPosition(t.slot),
      best_position: pBest[t.slot],
      prices,
      merchants,
    };
    out.top.push(row);
  }
  return out;
}
