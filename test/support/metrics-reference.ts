/**
 * An independent reference for the metric endpoints (CONTRACT.md, "Analysis" and "Metrics"), written from the
 * definitions and sharing no code with the fast path (src/analysis, queries/metrics, src/domain/urls): plain
 * TypeScript over the answers a test imported and the catalogue it built.
 *
 * It is deliberately naive: a mention is a case-insensitive whole-word occurrence of a name or identifier, or an
 * occurrence of the entity's domain with host boundaries; position = 1 + the mentioned entities whose first
 * occurrence is earlier; a citation is a cited URL (engine citations or http(s)/www URLs in the text) on the entity's
 * domain or under it. It agrees with the product on texts made of whole words, punctuation and space-separated URLs
 * (what the differential test writes); it does not try to reproduce the matcher's Unicode folding, scripts without
 * spaces, or leftmost-longest overlaps between different entities' terms (the test's vocabulary has none).
 * One exception: the content hub's citation join is defined by the shared URL normalization, which its figures use
 * (tryNormalizeUrl) on the URLs found here.
 */

import { tryNormalizeUrl } from '../../src/domain/urls';

export interface RefEntity {
  id: string;
  name: string;
  identifiers: string[];
  /** host of the entity's URL, lower-case, without `www.` */
  domain: string | null;
  is_self: boolean;
}

export interface RefAnswer {
  /** the id the import answered with */
  id?: string;
  prompt_id: string;
  model: string;
  /** ISO 8601, UTC */
  run_at: string;
  text: string;
  citations: string[];
  /** pages the engine reported it read besides what it cited (import items' `retrieved`) */
  retrieved?: string[];
  location_id: string | null;
  schedule_id: string | null;
  /** the observations the import carried (undefined: found by the product in the text, not compared) */
  /** the product cards it showed (imported as sent; a run's as the engine gave them) */
  products?: RefCard[];
  observations?: { entity_id: string; attribute_id: string; positive: boolean; score: number | null; text_span: string }[];
}

export interface RefPrompt {
  id: string;
  text: string;
  status: 'active' | 'paused';
  type: 'branded' | 'non_branded';
  deleted: boolean;
}

export interface RefFilters {
  /** null = default */
  schedule_id?: string | null;
  /** epoch ms, inclusive */
  start?: number;
  end?: number;
  models?: string[];
  prompt_ids?: string[];
  location_ids?: string[];
  prompt_status?: 'active' | 'paused';
  prompt_type?: 'branded' | 'non_branded';
  competitor_ids?: string[];
  /** the shopping endpoint's target_identifiers (the other endpoints have none) */
  target_identifiers?: string[];
}

const WORD = /[\p{L}\p{M}\p{N}\p{Pc}]/u;
const isWord = (ch: string | undefined) => ch !== undefined && ch !== '' && WORD.test(ch);

/** Index of the first whole-word, case-insensitive occurrence of term in text, or -1. */
export function firstWord(text: string, term: string): number {
  const t = text.toLowerCase();
  const w = term.toLowerCase().trim();
  if (w === '') return -1;
  for (let i = t.indexOf(w); i !== -1; i = t.indexOf(w, i + 1)) {
    const before = i === 0 ? undefined : text[i - 1];
    const after = text[i + w.length];
    if ((!isWord(w[0]) || !isWord(before)) && (!isWord(w[w.length - 1]) || !isWord(after))) return i;
  }
  return -1;
}

/** Index of the first occurrence of a domain as a host (itself or under a subdomain), or -1. */
export function firstDomain(text: string, domain: string): number {
  const t = text.toLowerCase();
  for (let i = t.indexOf(domain); i !== -1; i = t.indexOf(domain, i + 1)) {
    const before = i === 0 ? undefined : t[i - 1];
    const j = i + domain.length;
    const after = t[j];
    const leftOk = before === undefined || (!isWord(before) && before !== '-');
    const rightOk = after === undefined || (!isWord(after) && after !== '-' && !(after === '.' && isWord(t[j + 1])));
    if (leftOk && rightOk) return i;
  }
  return -1;
}

/** The host of an http(s) URL, lower-case, without a trailing dot and `www.`; null for anything else. */
export function hostOfUrl(raw: string): string | null {
  let u: URL;
  try {
    u = new URL(raw.trim());
  } catch {
    return null;
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return null;
  let h = u.hostname.toLowerCase();
  if (h.endsWith('.')) h = h.slice(0, -1);
  if (h.startsWith('www.')) h = h.slice(4);
  return h || null;
}

/** URLs an answer cites: its citations, then the http(s) and www. URLs written in its text (up to a space, a bracket or a quote; trailing punctuation dropped). */
export function citedUrls(a: { text: string; citations: string[] }): string[] {
  const urls = [...a.citations];
  for (const m of a.text.matchAll(/(?:^|[^\w.@/-])(https?:\/\/[^\s()<>"'[\]]+|www\.[^\s()<>"'[\]]+)/gi)) {
    const u = m[1].replace(/[.,;:!?*_~]+$/, '');
    urls.push(u.toLowerCase().startsWith('www.') ? `http://${u}` : u);
  }
  return urls;
}

/** Hosts an answer cites (citedUrls). */
export function citedHosts(a: { text: string; citations: string[] }): string[] {
  return citedUrls(a)
    .map(hostOfUrl)
    .filter((h): h is string => h !== null);
}

export interface Analysis {
  /** entity id -> position (1-based), for the mentioned ones */
  position: Map<string, number>;
  cited: Set<string>;
}

/** Mentions, positions (among all the entities given) and citations of one answer. */
export function analyze(entities: RefEntity[], a: RefAnswer): Analysis {
  const first = new Map<string, number>();
  for (const e of entities) {
    const hits = [e.name, ...e.identifiers].map((term) => firstWord(a.text, term));
    if (e.domain) hits.push(firstDomain(a.text, e.domain));
    const found = hits.filter((i) => i >= 0);
    if (found.length) first.set(e.id, Math.min(...found));
  }
  const position = new Map<string, number>();
  for (const [id, i] of first) position.set(id, 1 + [...first.values()].filter((j) => j < i).length);
  const hosts = citedHosts(a);
  const cited = new Set(entities.filter((e) => e.domain && hosts.some((h) => h === e.domain || h.endsWith(`.${e.domain}`))).map((e) => e.id));
  return { position, cited };
}

/** The answers a selection holds (CONTRACT.md: soft-deleted prompts never count; default schedule = none). */
export function select(answers: RefAnswer[], prompts: RefPrompt[], f: RefFilters): RefAnswer[] {
  const byId = new Map(prompts.map((p) => [p.id, p]));
  return answers.filter((a) => {
    const p = byId.get(a.prompt_id);
    if (!p || p.deleted) return false;
    if ((a.schedule_id ?? null) !== (f.schedule_id ?? null)) return false;
    const t = Date.parse(a.run_at);
    if (f.start !== undefined && t < f.start) return false;
    if (f.end !== undefined && t > f.end) return false;
    if (f.models && !f.models.includes(a.model)) return false;
    if (f.prompt_ids && !f.prompt_ids.includes(p.id)) return false;
    if (f.location_ids && (a.location_id === null || !f.location_ids.includes(a.location_id))) return false;
    if (f.prompt_status && p.status !== f.prompt_status) return false;
    if (f.prompt_type && p.type !== f.prompt_type) return false;
    return true;
  });
}

interface Tally {
  responses: number;
  any: number;
  mentioned: number[];
  cited: number[];
  positions: number[][];
}

function tally(entities: RefEntity[], included: RefEntity[], answers: RefAnswer[]): Tally {
  const t: Tally = { responses: 0, any: 0, mentioned: included.map(() => 0), cited: included.map(() => 0), positions: included.map(() => []) };
  for (const a of answers) {
    const r = analyze(entities, a);
    t.responses++;
    if (included.some((e) => r.position.has(e.id))) t.any++;
    included.forEach((e, j) => {
      const p = r.position.get(e.id);
      if (p !== undefined) {
        t.mentioned[j]++;
        t.positions[j].push(p);
      }
      if (r.cited.has(e.id)) t.cited[j]++;
    });
  }
  return t;
}

const Z = 1.959964;
const pct = (x: number, n: number) => (n === 0 ? 0 : (100 * x) / n);

/** 95% Wilson score interval in percent (textbook formula); null for n = 0. */
export function wilsonRef(x: number, n: number): [number, number] | null {
  if (n === 0) return null;
  const p = x / n;
  const z2 = Z * Z;
  const centre = (p + z2 / (2 * n)) / (1 + z2 / n);
  const half = (Z / (1 + z2 / n)) * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n));
  return [100 * Math.max(0, centre - half), 100 * Math.min(1, centre + half)];
}

function meanInterval(xs: number[]): [number, number] | null {
  if (xs.length < 2) return null;
  const m = xs.reduce((a, b) => a + b, 0) / xs.length;
  const sd = Math.sqrt(xs.reduce((a, b) => a + (b - m) ** 2, 0) / (xs.length - 1));
  const half = (Z * sd) / Math.sqrt(xs.length);
  return [m - half, m + half];
}

export type Family = 'mention-rate' | 'share-of-voice' | 'citation-rate' | 'position';
export const FAMILIES: Family[] = ['mention-rate', 'share-of-voice', 'citation-rate', 'position'];

const sample = (x: number, n: number) => ({ numerator: x, denominator: n, ci95: wilsonRef(x, n) });

function familyValues(family: Family, t: Tally, included: RefEntity[]): Record<string, unknown> {
  const total = t.mentioned.reduce((a, b) => a + b, 0);
  const out: Record<string, unknown> = {};
  included.forEach((e, j) => {
    const m = t.mentioned[j];
    let v: Record<string, unknown>;
    switch (family) {
      case 'mention-rate':
        v = {
          mention_rate: pct(m, t.responses),
          relative_mention_rate: pct(m, t.any),
          is_self: e.is_self,
          sample: { mention_rate: sample(m, t.responses), relative_mention_rate: sample(m, t.any) },
        };
        break;
      case 'share-of-voice':
        v = { share_of_voice: pct(m, total), is_self: e.is_self, sample: { share_of_voice: sample(m, total) } };
        break;
      case 'citation-rate':
        v = { citation_rate: pct(t.cited[j], t.responses), is_self: e.is_self, sample: { citation_rate: sample(t.cited[j], t.responses) } };
        break;
      case 'position': {
        const xs = t.positions[j];
        v = {
          avg_position: xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : null,
          is_self: e.is_self,
          sample: { avg_position: { mentions: xs.length, ci95: meanInterval(xs) } },
        };
      }
    }
    out[e.name] = v;
  });
  return out;
}

/** The entities a request includes: the brand plus the competitors asked for (all by default), brand first. */
export function included(entities: RefEntity[], f: RefFilters): RefEntity[] {
  return entities.filter((e) => e.is_self || !f.competitor_ids || f.competitor_ids.includes(e.id));
}

const utcDay = (iso: string) => new Date(iso).toISOString().slice(0, 10);

export function expectedCumulative(family: Family, entities: RefEntity[], answers: RefAnswer[], prompts: RefPrompt[], f: RefFilters) {
  const inc = included(entities, f);
  const sel = select(answers, prompts, f);
  const t = tally(entities, inc, sel);
  return { data: familyValues(family, t, inc), responses: t.responses };
}

export function expectedTimeSeries(family: Family, entities: RefEntity[], answers: RefAnswer[], prompts: RefPrompt[], f: RefFilters) {
  const inc = included(entities, f);
  const byDay = new Map<string, RefAnswer[]>();
  for (const a of select(answers, prompts, f)) byDay.set(utcDay(a.run_at), [...(byDay.get(utcDay(a.run_at)) ?? []), a]);
  return [...byDay.keys()].sort().map((date) => {
    const t = tally(entities, inc, byDay.get(date)!);
    return { date, responses: t.responses, metrics: familyValues(family, t, inc) };
  });
}

/** Reporting rows: per UTC day, model, prompt, location and included entity, answers counted. */
export function expectedConnectorRows(
  entities: RefEntity[],
  answers: RefAnswer[],
  prompts: RefPrompt[],
  locations: Map<string, string>,
  f: RefFilters,
) {
  const inc = included(entities, f);
  const groups = new Map<string, RefAnswer[]>();
  for (const a of select(answers, prompts, f)) {
    const k = JSON.stringify([utcDay(a.run_at), a.model, a.prompt_id, a.location_id]);
    groups.set(k, [...(groups.get(k) ?? []), a]);
  }
  const promptText = new Map(prompts.map((p) => [p.id, p.text]));
  const rows: Record<string, unknown>[] = [];
  for (const [k, as] of groups) {
    const [date, model, prompt_id, location_id] = JSON.parse(k) as [string, string, string, string | null];
    const t = tally(entities, inc, as);
    inc.forEach((e, j) => {
      const xs = t.positions[j];
      rows.push({
        date,
        model,
        prompt_id,
        prompt: promptText.get(prompt_id) ?? null,
        location_id,
        location: location_id === null ? null : (locations.get(location_id) ?? null),
        entity_id: e.id,
        entity: e.name,
        is_self: e.is_self,
        responses: t.responses,
        mentions: t.mentioned[j],
        citations: t.cited[j],
        position: xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : null,
      });
    });
  }
  return rows;
}

/**
 * The answers listing: newest first (then id, descending), each with the brand's mention, citation and position and
 * the competitors it mentions (in order of first occurrence, catalogue order among ties).
 */
export function expectedListing(entities: RefEntity[], answers: RefAnswer[], prompts: RefPrompt[], f: RefFilters) {
  const inc = new Set(included(entities, f).map((e) => e.id));
  const brand = entities.find((e) => e.is_self)!;
  return select(answers, prompts, f)
    .sort((a, b) => Date.parse(b.run_at) - Date.parse(a.run_at) || (b.id! < a.id! ? -1 : b.id! > a.id! ? 1 : 0))
    .map((a) => {
      const r = analyze(entities, a);
      const competitors = entities
        .map((e, slot) => ({ e, slot, position: r.position.get(e.id) }))
        .filter((x) => !x.e.is_self && x.position !== undefined && inc.has(x.e.id))
        .sort((x, y) => x.position! - y.position! || x.slot - y.slot)
        .map((x) => ({ id: x.e.id, name: x.e.name, position: x.position! }));
      return {
        id: a.id,
        prompt_id: a.prompt_id,
        model: a.model,
        response: a.text,
        mentioned: r.position.has(brand.id),
        cited: r.cited.has(brand.id),
        position: r.position.get(brand.id) ?? null,
        created_at: new Date(a.run_at).toISOString(),
        competitors,
      };
    });
}

/**
 * Attribute observations of the selected imported answers: about the brand or a current competitor (the names they
 * have now), with the attribute's name, the answer's model and its time to the second. In no particular order.
 */
export function expectedObservations(
  entities: RefEntity[],
  attributes: Map<string, string>,
  answers: RefAnswer[],
  prompts: RefPrompt[],
  f: RefFilters,
) {
  const byId = new Map(entities.map((e) => [e.id, e]));
  return select(answers, prompts, { ...f, competitor_ids: undefined }).flatMap((a) =>
    (a.observations ?? [])
      .filter((o) => byId.has(o.entity_id))
      .map((o) => ({
        response_id: a.id,
        entity_id: o.entity_id,
        entity_name: byId.get(o.entity_id)!.name,
        is_website: byId.get(o.entity_id)!.is_self,
        attribute_id: o.attribute_id,
        attribute_name: attributes.get(o.attribute_id),
        positive: o.positive,
        score: o.score,
        text_span: o.text_span,
        model: a.model,
        created_at: `${new Date(a.run_at).toISOString().slice(0, 19)}Z`,
      })),
  );
}

/**
 * Differences between an actual answer body and the expected one: numbers within `tolerance` (the API rounds to four
 * decimals), everything else equal, the same keys on both sides (extra actual keys listed in `ignore` are allowed).
 */
export function differences(actual: unknown, expected: unknown, path = '', tolerance = 1e-4, ignore: ReadonlySet<string> = new Set()): string[] {
  if (typeof expected === 'number' && typeof actual === 'number') {
    return Math.abs(actual - expected) <= tolerance ? [] : [`${path}: ${actual} != expected ${expected}`];
  }
  if (expected === null || typeof expected !== 'object' || actual === null || typeof actual !== 'object') {
    return Object.is(actual, expected) ? [] : [`${path}: ${JSON.stringify(actual)} != expected ${JSON.stringify(expected)}`];
  }
  if (Array.isArray(expected) !== Array.isArray(actual)) return [`${path}: ${JSON.stringify(actual)} != expected ${JSON.stringify(expected)}`];
  if (Array.isArray(expected)) {
    const a = actual as unknown[];
    if (a.length !== expected.length) return [`${path}: length ${a.length} != expected ${expected.length}`];
    return expected.flatMap((e, i) => differences(a[i], e, `${path}[${i}]`, tolerance, ignore));
  }
  const a = actual as Record<string, unknown>;
  const e = expected as Record<string, unknown>;
  const out: string[] = [];
  for (const k of Object.keys(e)) {
    if (!(k in a)) out.push(`${path}.${k}: missing (expected ${JSON.stringify(e[k])})`);
    else out.push(...differences(a[k], e[k], `${path}.${k}`, tolerance, ignore));
  }
  for (const k of Object.keys(a)) if (!(k in e) && !ignore.has(k)) out.push(`${path}.${k}: unexpected ${JSON.stringify(a[k])}`);
  return out;
}

// ---- shopping (POST /api/v1/metrics/shopping) ----

/** A product card as imported: `products` of an import item (or, for a run, as the engine gave it). */
export interface RefCard {
  name: string;
  brand?: string | null;
  merchant?: string | null;
  price?: number | null;
  currency?: string | null;
  position: number;
}

export interface RefShoppingFilters {
  /** null = default */
  schedule_id?: string | null;
  /** epoch ms, inclusive (whole UTC days) */
  start?: number;
  end?: number;
  /** shopping models only; undefined: every shopping model */
  models?: string[];
  competitor_ids?: string[];
  target_identifiers?: string[];
}

const blank = (s: string | null | undefined) => s === null || s === undefined || s.trim() === '';
const r2 = (x: number) => Math.round((x + Number.EPSILON) * 100) / 100;
const rate2 = (n: number, d: number) => (d === 0 ? 0 : r2((100 * n) / d));
const mean2 = (xs: number[]) => (xs.length ? r2(xs.reduce((a, b) => a + b, 0) / xs.length) : null);
/** median with linear interpolation between the two middle values */
function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = (s.length - 1) / 2;
  return (s[Math.floor(mid)] + s[Math.ceil(mid)]) / 2;
}

/** The entity a string names (name, identifier as a whole word, or domain), earliest occurrence first; null if none. */
function entityNamedIn(entities: RefEntity[], s: string): RefEntity | null {
  let best: { e: RefEntity; i: number } | null = null;
  for (const e of entities) {
    const hits = [e.name, ...e.identifiers].map((t) => firstWord(s, t));
    if (e.domain) hits.push(firstDomain(s, e.domain));
    const found = hits.filter((i) => i >= 0);
    if (found.length && (best === null || Math.min(...found) < best.i)) best = { e, i: Math.min(...found) };
  }
  return best?.e ?? null;
}

/**
 * Shopping visibility of the selected answers of the shopping models (docs/api/answers-and-metrics.md, "Shopping"; the spec's shopping
 * endpoint): each card belongs to the entity its brand names (its name when it has no brand); own = the brand's cards
 * (with target identifiers: only those whose name or brand holds one as a whole word), competitor = a selected
 * competitor's, other = the rest. Priced = a price and a currency. Merchants are keyed lower-case.
 * Returns summary (without own_products / competitor_products), offer_summary, merchant_breakdown,
 * position_distribution and trend.
 */
export function expectedShopping(
  entities: RefEntity[],
  answers: RefAnswer[],
  prompts: RefPrompt[],
  shoppingModels: readonly string[],
  f: RefShoppingFilters,
) {
  const sel = select(answers, prompts, { schedule_id: f.schedule_id, start: f.start, end: f.end, models: f.models ?? [...shoppingModels] });
  const brand = entities.find((e) => e.is_self)!;
  const competitors = new Set(entities.filter((e) => !e.is_self && (!f.competitor_ids || f.competitor_ids.includes(e.id))).map((e) => e.id));
  const targets = (f.target_identifiers ?? []).filter((t) => t.trim() !== '');
  type Card = {
    answer: string;
    day: string;
    side: 'own' | 'competitor' | 'other';
    position: number;
    merchant: string | null;
    price: number | null;
    currency: string | null;
  };
  const cards: Card[] = [];
  for (const a of sel) {
    for (const p of a.products ?? []) {
      const e = blank(p.brand) ? (blank(p.name) ? null : entityNamedIn(entities, p.name)) : entityNamedIn(entities, p.brand!);
      const targeted = !targets.length || targets.some((t) => firstWord(p.name, t) >= 0 || (!blank(p.brand) && firstWord(p.brand!, t) >= 0));
      const side = e?.id === brand.id && targeted ? 'own' : e && e.id !== brand.id && competitors.has(e.id) ? 'competitor' : 'other';
      const currency = blank(p.currency) ? null : p.currency!.trim().toUpperCase();
      cards.push({
        answer: a.id!,
        day: utcDay(a.run_at),
        side,
        position: p.position,
        merchant: blank(p.merchant) ? null : p.merchant!.trim(),
        price: typeof p.price === 'number' ? p.price : null,
        currency,
      });
    }
  }
  const priced = (c: Card) => c.price !== null && c.currency !== null;
  const count = (xs: Card[], side?: Card['side']) => xs.filter((c) => side === undefined || c.side === side).length;
  const answerFlags = (xs: Card[]) => {
    const by = new Map<string, Card[]>();
    for (const c of xs) by.set(c.answer, [...(by.get(c.answer) ?? []), c]);
    const v = [...by.values()];
    return {
      withProducts: v.length,
      withOwn: v.filter((cs) => cs.some((c) => c.side === 'own')).length,
      withCompetitor: v.filter((cs) => cs.some((c) => c.side === 'competitor')).length,
      ownFirst: v.filter((cs) => cs.some((c) => c.side === 'own' && c.position === 1)).length,
    };
  };
  const own = cards.filter((c) => c.side === 'own');
  const flags = answerFlags(cards);
  const summary = {
    answers: sel.length,
    answers_with_products: flags.withProducts,
    product_answer_rate: rate2(flags.withProducts, sel.length),
    answers_with_own_products: flags.withOwn,
    product_visibility_rate: rate2(flags.withOwn, sel.length),
    own_share_of_product_answers: rate2(flags.withOwn, flags.withProducts),
    answers_with_competitor_products: flags.withCompetitor,
    own_product_appearances: own.length,
    competitor_product_appearances: count(cards, 'competitor'),
    share_of_product_appearances: rate2(own.length, own.length + count(cards, 'competitor')),
    avg_own_position: mean2(own.map((c) => c.position)),
    best_own_position: own.length ? Math.min(...own.map((c) => c.position)) : null,
    own_first_position_answers: flags.ownFirst,
  };
  const pricedCards = cards.filter(priced);
  const currencies = [...new Set(pricedCards.map((c) => c.currency!))];
  const price_ranges = currencies
    .map((currency) => {
      const cs = pricedCards.filter((c) => c.currency === currency);
      const ps = cs.map((c) => c.price!);
      return {
        currency,
        cards: cs.length,
        own_cards: count(cs, 'own'),
        competitor_cards: count(cs, 'competitor'),
        min_price: r2(Math.min(...ps)),
        median_price: r2(median(ps)),
        avg_price: r2(ps.reduce((a, b) => a + b, 0) / ps.length),
        max_price: r2(Math.max(...ps)),
      };
    })
    .sort((a, b) => b.cards - a.cards || (a.currency < b.currency ? -1 : 1));
  // a merchant written as a host (no space, a dot) is keyed by its host; any other by its lower-case words
  const merchantKey = (m: string) =>
    !/\s/.test(m) && m.includes('.') ? (hostOfUrl(`http://${m}`) ?? m.toLowerCase()) : m.toLowerCase().replace(/\s+/g, ' ');
  const keyed = cards.filter((c) => c.merchant !== null);
  const keys = [...new Set(keyed.map((c) => merchantKey(c.merchant!)))];
  const merchant_breakdown = keys
    .map((k) => {
      const cs = keyed.filter((c) => merchantKey(c.merchant!) === k);
      return {
        // the spelling seen most often (ties: the first in code-unit order)
        merchant: [...new Set(cs.map((c) => c.merchant!))]
          .map((m) => ({ m, n: cs.filter((c) => c.merchant === m).length }))
          .sort((a, b) => b.n - a.n || (a.m < b.m ? -1 : 1))[0].m,
        merchant_key: k,
        appearances: cs.length,
        answers: new Set(cs.map((c) => c.answer)).size,
        share_of_appearances: rate2(cs.length, keyed.length),
        own_appearances: count(cs, 'own'),
        competitor_appearances: count(cs, 'competitor'),
        own_share: rate2(count(cs, 'own'), cs.length),
        avg_position: mean2(cs.map((c) => c.position)),
        priced_appearances: cs.filter(priced).length,
      };
    })
    .sort((a, b) => b.appearances - a.appearances || (a.merchant_key < b.merchant_key ? -1 : 1));
  const position_distribution = Array.from({ length: 10 }, (_, i) => {
    const cs = cards.filter((c) => (i === 9 ? c.position >= 10 : c.position === i + 1));
    return {
      position: i === 9 ? '10+' : String(i + 1),
      cards: cs.length,
      own_cards: count(cs, 'own'),
      competitor_cards: count(cs, 'competitor'),
      other_cards: count(cs, 'other'),
      own_rate: rate2(count(cs, 'own'), own.length),
      competitor_rate: rate2(count(cs, 'competitor'), count(cards, 'competitor')),
      own_share: rate2(count(cs, 'own'), cs.length),
    };
  });
  const days = [...new Set(sel.map((a) => utcDay(a.run_at)))].sort();
  const trend = days.map((date) => {
    const cs = cards.filter((c) => c.day === date);
    const n = sel.filter((a) => utcDay(a.run_at) === date).length;
    const fl = answerFlags(cs);
    const o = cs.filter((c) => c.side === 'own');
    return {
      date,
      answers: n,
      answers_with_products: fl.withProducts,
      answers_with_own_products: fl.withOwn,
      own_product_appearances: o.length,
      competitor_product_appearances: count(cs, 'competitor'),
      product_visibility_rate: rate2(fl.withOwn, n),
      avg_own_position: mean2(o.map((c) => c.position)),
    };
  });
  return {
    summary,
    offer_summary: {
      cards: cards.length,
      own_cards: own.length,
      competitor_cards: count(cards, 'competitor'),
      other_cards: count(cards, 'other'),
      priced_cards: pricedCards.length,
      priced_rate: rate2(pricedCards.length, cards.length),
      own_priced_cards: count(pricedCards, 'own'),
      competitor_priced_cards: count(pricedCards, 'competitor'),
      merchants: keys.length,
      cards_without_merchant: cards.length - keyed.length,
      currencies: price_ranges.map((r) => r.currency),
      price_ranges,
    },
    merchant_breakdown,
    position_distribution,
    trend,
  };
}

// ---- content hub figures (CONTRACT.md, "Content hub": listing figures and the per-prompt breakdown) ----

/**
 * The normalized URLs an answer cites: its cited http(s) URLs (citedUrls) normalized with the shared function (the
 * join key is defined by it: src/domain/urls.ts normalizeUrl), each once.
 */
function citedNormalized(a: RefAnswer): Set<string> {
  return new Set(
    citedUrls(a)
      .filter((u) => hostOfUrl(u) !== null)
      .map((u) => tryNormalizeUrl(u))
      .filter((u): u is string => u !== null),
  );
}

/** The selected answers the content figures count: the selection, then the brand mention when asked (`mentioned`). */
function contentSelection(entities: RefEntity[], answers: RefAnswer[], prompts: RefPrompt[], f: RefFilters, mentioned?: boolean) {
  const brand = entities.find((e) => e.is_self)!;
  return select(answers, prompts, f).filter((a) => mentioned === undefined || analyze(entities, a).position.has(brand.id) === mentioned);
}

const rounded = (part: number, whole: number) => (whole === 0 ? 0 : Math.round((10000 * part) / whole) / 100);

/** Per tracked normalized URL: the selected answers citing it, their count, and the share in percent (2 decimals). */
export function expectedContent(
  entities: RefEntity[],
  answers: RefAnswer[],
  prompts: RefPrompt[],
  f: RefFilters,
  urls: string[],
  mentioned?: boolean,
): Record<string, { citations: number; total_responses: number; citation_percent: number }> {
  const selected = contentSelection(entities, answers, prompts, f, mentioned).map(citedNormalized);
  const out: Record<string, { citations: number; total_responses: number; citation_percent: number }> = {};
  for (const url of urls) {
    const citations = selected.filter((c) => c.has(url)).length;
    out[url] = { citations, total_responses: selected.length, citation_percent: rounded(citations, selected.length) };
  }
  return out;
}

/** Per prompt with a selected answer citing `url`: those answers and their share of the prompt's selected answers; by prompt id. */
export function expectedContentPrompts(
  entities: RefEntity[],
  answers: RefAnswer[],
  prompts: RefPrompt[],
  f: RefFilters,
  url: string,
  mentioned?: boolean,
) {
  const selected = contentSelection(entities, answers, prompts, f, mentioned);
  const text = new Map(prompts.map((p) => [p.id, p.text]));
  return [...new Set(selected.map((a) => a.prompt_id))]
    .map((id) => {
      const of = selected.filter((a) => a.prompt_id === id);
      const citations = of.filter((a) => citedNormalized(a).has(url)).length;
      return { prompt_id: id, prompt: text.get(id) ?? '', citations, citation_percent: rounded(citations, of.length) };
    })
    .filter((x) => x.citations > 0)
    .sort((a, b) => (a.prompt_id < b.prompt_id ? -1 : 1));
}

// ---- answer evidence (CONTRACT.md, Answer evidence: GET /api/v1/sources) ----

/**
 * Per domain (the normalized URL's host) or normalized URL over the answers of whole UTC days `startDay`..`endDay` and
 * `models`: the answers retrieving it (its cited URLs and its reported pages), the answers citing it, the rate, and
 * the entity whose domain it equals or lies under (the longest such domain); cited desc, retrieved desc, key.
 */
export function expectedSources(
  entities: RefEntity[],
  answers: RefAnswer[],
  f: { startDay?: string; endDay?: string; models?: string[] },
  groupBy: 'domain' | 'url',
) {
  const counts = new Map<string, { retrieved: number; cited: number }>();
  for (const a of answers) {
    const day = new Date(a.run_at).toISOString().slice(0, 10);
    if ((f.startDay && day < f.startDay) || (f.endDay && day > f.endDay) || (f.models && !f.models.includes(a.model))) continue;
    const cited = citedNormalized(a);
    const reported = (a.retrieved ?? []).filter((u) => hostOfUrl(u) !== null).map((u) => tryNormalizeUrl(u));
    const keys = new Map<string, boolean>();
    for (const n of new Set([...cited, ...reported.filter((u): u is string => u !== null)])) {
      const k = groupBy === 'url' ? n : hostOfUrl(`http://${n}`)!;
      keys.set(k, (keys.get(k) ?? false) || cited.has(n));
    }
    for (const [k, c] of keys) {
      const x = counts.get(k) ?? { retrieved: 0, cited: 0 };
      x.retrieved++;
      if (c) x.cited++;
      counts.set(k, x);
    }
  }
  const entityOf = (host: string) =>
    entities.filter((e) => e.domain && (host === e.domain || host.endsWith(`.${e.domain}`))).sort((a, b) => b.domain!.length - a.domain!.length)[0];
  return [...counts]
    .sort(([ka, a], [kb, b]) => b.cited - a.cited || b.retrieved - a.retrieved || (ka < kb ? -1 : ka > kb ? 1 : 0))
    .map(([k, x]) => {
      const e = entityOf(groupBy === 'url' ? hostOfUrl(`http://${k}`)! : k);
      return {
        [groupBy]: k,
        retrieved: x.retrieved,
        cited: x.cited,
        cited_when_retrieved: (100 * x.cited) / x.retrieved,
        is_self: e?.is_self ?? false,
        entity_id: e?.id ?? null,
      };
    });
}

// ---- signal, not noise (CONTRACT "Signal, not noise"): period comparison and prompt stability ----

/** Two-sided p-value of a standard normal statistic: 1 − 2∫₀^|z| φ, by Simpson's rule (no closed-form approximation). */
export function normalTwoSidedRef(z: number): number {
  const x = Math.abs(z);
  if (x > 12) return 0;
  const steps = 4000;
  const h = x / steps;
  const phi = (t: number) => Math.exp((-t * t) / 2) / Math.sqrt(2 * Math.PI);
  let sum = phi(0) + phi(x);
  for (let i = 1; i < steps; i++) sum += (i % 2 ? 4 : 2) * phi(i * h);
  return Math.max(0, Math.min(1, 1 - 2 * ((h / 3) * sum)));
}

const verdictRef = (lo: number | null, hi: number | null) =>
  lo === null || hi === null ? 'insufficient_data' : lo > 0 ? 'up' : hi < 0 ? 'down' : 'within_noise';

/** A rate's row: values and change in percent points, Newcombe's method 10 from the two Wilson intervals, the pooled z-test. */
function rateChangeRef(k1: number, n1: number, k2: number, n2: number, isSelf: boolean) {
  if (n1 === 0 || n2 === 0) {
    return {
      is_self: isSelf,
      current: n1 === 0 ? null : (100 * k1) / n1,
      previous: n2 === 0 ? null : (100 * k2) / n2,
      change: null,
      change_ci_low: null,
      change_ci_high: null,
      p_value: null,
      verdict: 'insufficient_data',
    };
  }
  const p1 = k1 / n1;
  const p2 = k2 / n2;
  const [l1, u1] = wilsonRef(k1, n1)!.map((x) => x / 100);
  const [l2, u2] = wilsonRef(k2, n2)!.map((x) => x / 100);
  const d = p1 - p2;
  const lo = Math.max(-1, d - Math.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2));
  const hi = Math.min(1, d + Math.sqrt((u1 - p1) ** 2 + (p2 - l2) ** 2));
  const pooled = (k1 + k2) / (n1 + n2);
  const se = Math.sqrt(pooled * (1 - pooled) * (1 / n1 + 1 / n2));
  return {
    is_self: isSelf,
    current: 100 * p1,
    previous: 100 * p2,
    change: 100 * d,
    change_ci_low: 100 * lo,
    change_ci_high: 100 * hi,
    p_value: se === 0 ? 1 : normalTwoSidedRef(d / se),
    verdict: verdictRef(lo, hi),
  };
}

function positionChangeRef(cur: number[], prev: number[], isSelf: boolean) {
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const s2 = (xs: number[]) => xs.reduce((a, b) => a + (b - mean(xs)) ** 2, 0) / (xs.length - 1);
  const base = { is_self: isSelf, current: cur.length ? mean(cur) : null, previous: prev.length ? mean(prev) : null };
  if (cur.length < 2 || prev.length < 2) {
    return { ...base, change: null, change_ci_low: null, change_ci_high: null, p_value: null, verdict: 'insufficient_data' };
  }
  const d = mean(cur) - mean(prev);
  const se = Math.sqrt(s2(cur) / cur.length + s2(prev) / prev.length);
  const lo = d - 1.96 * se;
  const hi = d + 1.96 * se;
  return {
    ...base,
    change: d,
    change_ci_low: lo,
    change_ci_high: hi,
    p_value: se === 0 ? (d === 0 ? 1 : 0) : normalTwoSidedRef(d / se),
    verdict: verdictRef(lo, hi),
  };
}

export type CompareMetricRef = 'mention_rate' | 'share_of_voice' | 'citation_rate' | 'avg_position';

/** GET /metrics/compare: `f` without dates; each period [start, end] in epoch ms, inclusive. */
export function expectedComparison(
  metric: CompareMetricRef,
  entities: RefEntity[],
  answers: RefAnswer[],
  prompts: RefPrompt[],
  f: RefFilters,
  current: [number, number],
  previous: [number, number],
) {
  const inc = included(entities, f);
  const [tc, tp] = [current, previous].map(([start, end]) => tally(entities, inc, select(answers, prompts, { ...f, start, end })));
  const data: Record<string, unknown> = {};
  inc.forEach((e, j) => {
    if (metric === 'avg_position') data[e.name] = positionChangeRef(tc.positions[j], tp.positions[j], e.is_self);
    else {
      const kn = (t: Tally): [number, number] =>
        metric === 'mention_rate'
          ? [t.mentioned[j], t.responses]
          : metric === 'citation_rate'
            ? [t.cited[j], t.responses]
            : [t.mentioned[j], t.mentioned.reduce((a, b) => a + b, 0)];
      data[e.name] = rateChangeRef(...kn(tc), ...kn(tp), e.is_self);
    }
  });
  return { metric, current: { responses: tc.responses }, previous: { responses: tp.responses }, data };
}

/** GET /metrics/stability, its rows in (prompt_id, model) order. */
export function expectedStability(entities: RefEntity[], answers: RefAnswer[], prompts: RefPrompt[], f: RefFilters) {
  const brand = entities.find((e) => e.is_self)!;
  const text = new Map(prompts.map((p) => [p.id, p.text]));
  const groups = new Map<string, Map<string, { answers: number; mentioned: number }>>();
  for (const a of select(answers, prompts, f)) {
    const key = JSON.stringify([a.prompt_id, a.model]);
    const days = groups.get(key) ?? new Map();
    groups.set(key, days);
    const day = days.get(utcDay(a.run_at)) ?? { answers: 0, mentioned: 0 };
    days.set(utcDay(a.run_at), day);
    day.answers++;
    if (analyze(entities, a).position.has(brand.id)) day.mentioned++;
  }
  const rows = [...groups].map(([key, days]) => {
    const [prompt_id, model] = JSON.parse(key) as [string, string];
    const ordered = [...days.keys()].sort().map((d) => days.get(d)!);
    const flags = ordered.map((d) => d.mentioned * 2 >= d.answers);
    const flips = flags.filter((x, i) => i > 0 && x !== flags[i - 1]).length;
    const answers = ordered.reduce((s, d) => s + d.answers, 0);
    const mentioned = ordered.reduce((s, d) => s + d.mentioned, 0);
    const [ci_low, ci_high] = wilsonRef(mentioned, answers)!;
    return {
      prompt_id,
      prompt: text.get(prompt_id),
      model,
      answers,
      mentioned,
      mention_rate: (100 * mentioned) / answers,
      ci_low,
      ci_high,
      days: ordered.length,
      flips,
      volatility: ordered.length < 2 ? 0 : flips / (ordered.length - 1),
      consistency: (100 * Math.max(mentioned, answers - mentioned)) / answers,
    };
  });
  rows.sort((a, b) => (a.prompt_id < b.prompt_id ? -1 : a.prompt_id > b.prompt_id ? 1 : a.model < b.model ? -1 : a.model > b.model ? 1 : 0));
  return { data: rows, summary: { pairs: rows.length, volatile_pairs: rows.filter((r) => r.days >= 3 && r.volatility >= 0.5).length } };
}
