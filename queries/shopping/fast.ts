import { dayName } from '../metrics/facts/layout';
import type { CardDay, ShoppingSite } from './cards-cache';
import { addRollups, familyOf, medianOfHists, RECENT_DAYS } from './rollups';
import { addPrice, COMPETITOR, countDay, DAY_MS, newScan, OWN, type PriceGroup, priceGroup, rangeOf, type Scan, scanDay, sideOf } from './scan';
import { LAST_POSITION_BUCKET } from './sql';
import type { PriceRow, PriceStats, ProductSql, ShoppingBlocks, ShoppingSelection, Side } from './types';

/**
 * The shopping statement's blocks (./sql) computed over a website's cards held in process (./cards-cache): the same
 * rows, the same numbers, from one pass over the selected days' cards (./scan; whole days from day-range rollups,
 * ./rollups, where the selection allows) and a second over the top products' cards.
 * What a statement left to Postgres is done as Postgres does it: sides as the statement gives them (target
 * identifiers matched by Postgres's own `~*`, ./cards-cache targetMatches), medians as percentile_cont interpolates,
 * modes' ties to the first in "C" order, sorts by code point where the statement sorts `collate "C"`.
 */

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

/** A top product's cards: names, brands, answers, prices per currency, merchants. */
interface TopAcc {
  slot: number;
  rank: number;
  /** each card's name and brand (labels), merchant key, and (merchant key, merchant) pair where it has both */
  names: number[];
  brands: number[];
  answers: number;
  /** per currency */
  prices: (PriceGroup | undefined)[];
  sellers: number[];
  sellerNames: number[];
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

/** The top products' cards: each held day's cards of the product (pairCards) that the pass took. */
function topCards(site: ShoppingSite, tops: Map<number, TopAcc>, x: Scan): void {
  const { schedule, models, prompts, startMs, endMs, target, competitor } = x;
  const list = [...tops.values()];
  for (const d of site.cards.values()) {
    const range = rangeOf(d.day, startMs, endMs);
    if (range === 0) continue;
    const ix = pairIndex(d);
    const base = d.day * DAY_MS;
    for (const t of list) {
      const at = pairAt(ix.pairs, t.slot >> 1);
      if (at < 0) continue;
      const want = t.slot & 1 ? OWN : COMPETITOR;
      // an answer's cards are next to each other: a new answer number (within the day) is a new answer
      let lastAnswer = -1;
      for (let i = ix.start[at], end = ix.start[at + 1]; i < end; i++) {
        const k = ix.idx[i];
        if (d.schedule[k] !== schedule || models[d.model[k]] === 0 || prompts[d.prompt[k]] === 0) continue;
        if (range === 2 && (base + d.t[k] < startMs || base + d.t[k] > endMs)) continue;
        if (sideOf(d, k, target, competitor) !== want) continue;
        t.names.push(d.name[k]);
        if (d.brand[k] >= 0) t.brands.push(d.brand[k]);
        if (lastAnswer !== d.answer[k]) {
          lastAnswer = d.answer[k];
          t.answers++;
        }
        const cur = d.currency[k];
        if (cur >= 0 && !Number.isNaN(d.price[k])) {
          let g = t.prices[cur];
          if (!g) t.prices[cur] = g = priceGroup();
          addPrice(g, d.price[k]);
        }
        const mk = d.merchantKey[k];
        if (mk >= 0) {
          t.sellers.push(mk);
          if (d.merchant[k] >= 0) t.sellerNames.push(d.merchantPair[k]);
        }
      }
    }
  }
}

/** How many times each value occurs (`scratch`: zeros, as long as the values' dictionary; left zeros). */
function counted(values: readonly number[], scratch: Float64Array): Map<number, number> {
  const out = new Map<number, number>();
  for (const v of values) scratch[v]++;
  for (const v of values) {
    if (scratch[v] === 0) continue;
    out.set(v, scratch[v]);
    scratch[v] = 0;
  }
  return out;
}

/** Where `pair` is in a day's sorted pairs (-1: the day has no card of it). */
function pairAt(pairs: Int32Array, pair: number): number {
  let lo = 0;
  let hi = pairs.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (pairs[mid] < pair) lo = mid + 1;
    else hi = mid;
  }
  return lo < pairs.length && pairs[lo] === pair ? lo : -1;
}

/** A day's card indices grouped by (product, entity) pair, each pair's in card order (built once per held day). */
function pairIndex(d: CardDay): NonNullable<CardDay['byPair']> {
  if (d.byPair) return d.byPair;
  // pair * 2^24 + index, sorted: the cards of a pair together, in card order
  const keyed = new Float64Array(d.n);
  for (let k = 0; k < d.n; k++) keyed[k] = d.pair[k] * 2 ** 24 + k;
  keyed.sort();
  const idx = new Int32Array(d.n);
  const pairs: number[] = [];
  const start: number[] = [];
  for (let k = 0; k < d.n; k++) {
    const p = Math.floor(keyed[k] / 2 ** 24);
    idx[k] = keyed[k] - p * 2 ** 24;
    if (!pairs.length || pairs[pairs.length - 1] !== p) {
      pairs.push(p);
      start.push(k);
    }
  }
  start.push(d.n);
  d.byPair = { pairs: Int32Array.from(pairs), start: Int32Array.from(start), idx };
  return d.byPair;
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
  const competitor = new Uint8Array(site.entities.size);
  for (const id of competitorIds) {
    const i = site.entities.get(id);
    if (i !== undefined) competitor[i] = 1;
  }
  const x = newScan(site, schedule, models, prompts, startMs, endMs, competitor, target);

  // ---- the selected answers and their cards: whole days from the family's rollups where it has them, the rest walked
  let [first, last] = [1, 0];
  const family = familyOf(site, x);
  if (family !== null) {
    let lo = Number.POSITIVE_INFINITY;
    let hi = Number.NEGATIVE_INFINITY;
    for (const day of site.partsByDay.keys()) {
      if (day < lo) lo = day;
      if (day > hi) hi = day;
    }
    for (const day of site.cards.keys()) {
      if (day < lo) lo = day;
      if (day > hi) hi = day;
    }
    first = Math.max(lo, Math.ceil(startMs / DAY_MS));
    // the newest days are walked: new answers land there, and each would drop the ranges holding them
    last = Math.min(hi - RECENT_DAYS, Math.floor((endMs + 1) / DAY_MS) - 1);
    if (first <= last) addRollups(site, x, family, first, last);
  }
  for (const [day, parts] of site.partsByDay) if (day < first || day > last) countDay(x, parts);
  for (const d of site.cards.values()) if (d.day < first || d.day > last) scanDay(x, d);
  const { answersOf, perDay, entApp, entPos, entBest, entAnswers, entFirst, mApp, mOwn, mComp, mPos, mPriced, mAnswers, mNames, buckets } = x;
  const { all, sidePrices, entityPrices, pApp, pPos, pBest, E, K, C, P } = x;
  for (const day of [...answersOf.keys()].sort((a, b) => a - b)) out.answer_days.push({ day: dayName(day), answers: answersOf.get(day)! });

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
    cards: g.n,
    min_price: g.min,
    max_price: g.max,
    median_price: g.hists.length ? medianOfHists(site, g) : medianOf(g.raw),
    avg_price: avg ? g.sum / g.n : 0,
  });
  for (let cur = 0; cur < C; cur++) {
    if (all[cur].n === 0) continue;
    out.prices.push(priceRow(cur, null, null, 1, 1, all[cur], true));
    for (const side of [OWN, COMPETITOR]) {
      const g = sidePrices[side]![cur];
      if (g.n) out.prices.push(priceRow(cur, side === OWN ? 'own' : 'competitor', null, 0, 1, g, false));
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
      tops.set(slot, { slot, rank: i + 1, names: [], brands: [], answers: 0, prices: [], sellers: [], sellerNames: [] });
    });
  }
  topCards(site, tops, x);
  const label = (i: number) => site.labels.keys[i];
  const scratch = new Float64Array(Math.max(site.labels.size, site.merchantKeys.size, site.merchantPairs.size));
  for (const t of [...tops.values()].sort((a, b) => (a.slot & 1) - (b.slot & 1) || a.rank - b.rank)) {
    const names = counted(t.names, scratch);
    const brands = counted(t.brands, scratch);
    const sellers = new Map<number, { n: number; names: Map<number, number> }>();
    for (const [mk, n] of counted(t.sellers, scratch)) sellers.set(mk, { n, names: new Map() });
    for (const [pair, n] of counted(t.sellerNames, scratch)) {
      const [mk, m] = site.merchantPairOf[pair];
      sellers.get(mk)!.names.set(m, n);
    }
    const prices: PriceStats[] = [...t.prices.entries()]
      .filter((e): e is [number, PriceGroup] => e[1] !== undefined)
      .map(([cur, g]) => ({
        currency: site.currencies.keys[cur],
        cards: g.n,
        min_price: g.min,
        median_price: medianOf(g.raw),
        max_price: g.max,
      }))
      .sort((a, b) => b.cards - a.cards || cmpC(a.currency, b.currency));
    const merchants = [...sellers]
      .map(([mk, seller]) => {
        const named = modeOf(seller.names, (m) => site.merchants.keys[m]);
        const key = site.merchantKeys.keys[mk];
        return { merchant: named === null ? key : site.merchants.keys[named], merchant_key: key, appearances: seller.n };
      })
      .sort((a, b) => b.appearances - a.appearances || cmpC(a.merchant_key, b.merchant_key));
    const brand = modeOf(brands, label);
    const e = entityOf(t.slot);
    const row: ProductSql & { rank: number } = {
      side: t.slot & 1 ? 'own' : 'competitor',
      rank: t.rank,
      entity_id: e < 0 ? (null as unknown as string) : entityId(e),
      name: label(modeOf(names, label)!),
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
