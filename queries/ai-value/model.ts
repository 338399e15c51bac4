import { readFileSync } from 'node:fs';
import type { Band, TopicValue, Valuation } from './views';

/**
 * The AI search value model (docs/VALUATION.md), as a pure function: per-topic counts in, the valuation out. Every
 * number here is one line of that page; change both together (and bump assumptions_version).
 */

export interface TopicEconomics {
  monthly_searches: number;
  cpc_usd: number;
}

export interface CategoryDefault extends TopicEconomics {
  id: string;
  keywords: string[];
}

export interface EconomicsAssumptions {
  assumptions_version: string;
  local_intent_keywords: string[];
  categories: CategoryDefault[];
}

export const ASSUMPTIONS: EconomicsAssumptions = JSON.parse(readFileSync(new URL('../../infra/topic-economics.json', import.meta.url), 'utf8'));

/** One model's answers of a topic in one window. B and D: the position-weighted sums of the brand and of all entities. */
export interface ModelCounts {
  n: number;
  /** answers mentioning the brand */
  mentioned: number;
  B: number;
  D: number;
}

export const emptyCounts = (): ModelCounts => ({ n: 0, mentioned: 0, B: 0, D: 0 });

export interface TopicInput {
  topic_id: string;
  name: string;
  branded: boolean;
  /** texts of its live prompts (every type): the category and the local intent read them */
  prompts: string[];
  economics: TopicEconomics | null;
  /** by model: the window W and the previous window P */
  window: Map<string, ModelCounts>;
  previous: Map<string, ModelCounts>;
  locations: number;
  personas: number;
}

export interface ModelInput {
  /** topics in creation order (the older of two duplicates is counted) */
  topics: TopicInput[];
  measured_responses: number;
  assumptions?: EconomicsAssumptions;
  /** null: attribution unavailable, with the reason */
  attribution: { attributed_share: number } | { unavailable: string };
}

export const GATHERING_THRESHOLD = 50;
export const Z = 1.96;
const STOP = new Set(['a', 'an', 'the', 'and', 'or', 'of', 'for', 'to', 'in', 'on', 'with', 'vs', 'best', 'top']);

const r4 = (x: number) => Math.round(x * 10_000) / 10_000;
const cents = (usd: number) => Math.round(usd * 100);
const usd = (c: number) => c / 100;

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const keywordCache = new Map<string, RegExp>();
/** Whole words, case-insensitive (a phrase's words separated by any spaces). */
export function matches(keyword: string, text: string): boolean {
  let re = keywordCache.get(keyword);
  if (!re) {
    const body = keyword.trim().split(/\s+/).map(escapeRegExp).join('\\s+');
    re = new RegExp(`(?<![\\p{L}\\p{N}])${body}(?![\\p{L}\\p{N}])`, 'iu');
    keywordCache.set(keyword, re);
  }
  return re.test(text);
}

/** The topic's category: 3 x name matches + (prompt, keyword) matches; ties to the first listed; none = general. */
export function categoryOf(name: string, prompts: readonly string[], a: EconomicsAssumptions = ASSUMPTIONS): CategoryDefault | null {
  let best: CategoryDefault | null = null;
  let bestScore = 0;
  for (const c of a.categories) {
    let score = 0;
    for (const k of c.keywords) {
      if (matches(k, name)) score += 3;
      for (const p of prompts) if (matches(k, p)) score += 1;
    }
    if (score > bestScore) {
      best = c;
      bestScore = score;
    }
  }
  return best;
}

export const localIntent = (name: string, prompts: readonly string[], a: EconomicsAssumptions = ASSUMPTIONS) =>
  a.local_intent_keywords.some((k) => matches(k, name) || prompts.some((p) => matches(k, p)));

/** A topic name's tokens: lower case, letters and digits, no stop words, a trailing s off words longer than 3. */
export function nameTokens(name: string): Set<string> {
  const out = new Set<string>();
  for (const raw of name.toLocaleLowerCase('en-US').split(/[^\p{L}\p{N}]+/u)) {
    if (!raw || STOP.has(raw)) continue;
    out.add(raw.length > 3 && raw.endsWith('s') ? raw.slice(0, -1) : raw);
  }
  return out;
}

export function jaccard(a: Set<string>, b: Set<string>): number {
  if (!a.size && !b.size) return 0;
  let both = 0;
  for (const x of a) if (b.has(x)) both++;
  return both / (a.size + b.size - both);
}

/** The share of one model's answers on the basis. */
const shareOf = (c: ModelCounts, basis: 'pw_sov' | 'mention_rate') =>
  basis === 'pw_sov' ? (c.D > 0 ? c.B / c.D : 0) : c.n > 0 ? c.mentioned / c.n : 0;

/** Mix-adjusted share (each measured model counts the same) and its standard error (Agresti–Coull per model). */
export function mixAdjusted(
  byModel: Map<string, ModelCounts>,
  basis: 'pw_sov' | 'mention_rate',
): { share: number; se: number; models: number } | null {
  let sum = 0;
  let variance = 0;
  let M = 0;
  for (const c of byModel.values()) {
    if (c.n === 0) continue;
    const s = shareOf(c, basis);
    const p = (c.n * s + 2) / (c.n + 4);
    sum += s;
    variance += (p * (1 - p)) / (c.n + 4);
    M++;
  }
  if (M === 0) return null;
  return { share: sum / M, se: Math.sqrt(variance) / M, models: M };
}

const pooled = (byModel: Map<string, ModelCounts>) => {
  const t = emptyCounts();
  for (const c of byModel.values()) {
    t.n += c.n;
    t.mentioned += c.mentioned;
    t.B += c.B;
    t.D += c.D;
  }
  return t;
};

interface CentsBand {
  c: number;
  e: number;
  u: number;
}
const band = (b: CentsBand): Band => ({ conservative: usd(b.c), expected: usd(b.e), upside: usd(b.u) });

/** The valuation of a website from its topics' counts (docs/VALUATION.md, sections 2 to 6). */
export function valuate(input: ModelInput): Valuation {
  const a = input.assumptions ?? ASSUMPTIONS;
  // duplicates and merge suggestions (section 4)
  const tokens = input.topics.map((t) => nameTokens(t.name));
  const counted = input.topics.map(() => true);
  const merge_suggestions: Valuation['merge_suggestions'] = [];
  for (let i = 0; i < input.topics.length; i++)
    for (let j = i + 1; j < input.topics.length; j++) {
      const sim = jaccard(tokens[i], tokens[j]);
      if (sim < 0.5) continue;
      const duplicate = sim === 1;
      if (duplicate) counted[j] = false;
      merge_suggestions.push({
        topic_ids: [input.topics[i].topic_id, input.topics[j].topic_id],
        names: [input.topics[i].name, input.topics[j].name],
        similarity: r4(sim),
        duplicate,
      });
    }

  const total = { market: 0, cap: { c: 0, e: 0, u: 0 }, head: { c: 0, e: 0, u: 0 } };
  let priced = 0;
  let countedTopics = 0;
  let sovWeighted = 0;
  let sovWeight = 0;
  const topics: TopicValue[] = input.topics.map((t, i) => {
    const category = categoryOf(t.name, t.prompts, a);
    const economics = t.economics ?? category;
    const V = economics ? cents(economics.monthly_searches * economics.cpc_usd) : 0;
    const all = pooled(t.window);
    const basis = t.branded ? 'mention_rate' : 'pw_sov';
    const now = all.n > 0 ? mixAdjusted(t.window, basis) : null;
    const before = mixAdjusted(t.previous, basis);
    const s = now?.share ?? 0;
    const se = now?.se ?? 0;
    const sc = Math.max(0, s - Z * se);
    const su = Math.min(1, s + Z * se);
    const cap = { c: Math.round(V * sc), e: Math.round(V * s), u: Math.round(V * su) };
    // A band with an error is never a point: when rounding to cents collapses it, it opens by one cent.
    if (se > 0 && V > 0 && cap.u === cap.c) {
      if (cap.u < V) cap.u += 1;
      else cap.c -= 1;
    }
    const head = { c: V - cap.u, e: V - cap.e, u: V - cap.c };
    const pw = all.D > 0 ? all.B / all.D : 0;
    if (counted[i]) {
      countedTopics++;
      if (V > 0) priced++;
      total.market += V;
      for (const k of ['c', 'e', 'u'] as const) {
        total.cap[k] += cap[k];
        total.head[k] += head[k];
      }
      if (V > 0 && !t.branded && all.n > 0) {
        sovWeighted += V * pw;
        sovWeight += V;
      }
    }
    return {
      topic_id: t.topic_id,
      name: t.name,
      category: category?.id ?? 'general',
      local_intent: localIntent(t.name, t.prompts, a),
      branded: t.branded,
      share_basis: now ? basis : 'unmeasured',
      economics_source: t.economics ? 'topic' : category ? 'category' : 'none',
      value_usd_mo: usd(V),
      pw_sov_pct: r4(100 * pw),
      mix_adjusted_share_pct: r4(100 * s),
      mention_rate_pct: r4(all.n > 0 ? (100 * all.mentioned) / all.n : 0),
      drift_pp: now && before ? r4(100 * (s - before.share)) : null,
      standard_error_pp: r4(100 * se),
      responses_28d: all.n,
      models_measured: now?.models ?? 0,
      personas_measured: t.personas,
      locations_measured: t.locations,
      captured: band(cap),
      headroom: band(head),
      counted_in_total: counted[i],
    };
  });

  const attributed = 'attributed_share' in input.attribution ? input.attribution.attributed_share : 0;
  return {
    assumptions_version: a.assumptions_version,
    market: {
      value_usd_mo: usd(total.market),
      topics_priced: priced,
      topics_total: countedTopics,
      coverage_pct: countedTopics ? r4((100 * priced) / countedTopics) : 0,
      current_sov_pct: sovWeight > 0 ? r4((100 * sovWeighted) / sovWeight) : 0,
    },
    captured: band(total.cap),
    headroom: band(total.head),
    measured_responses: input.measured_responses,
    topics,
    merge_suggestions,
    contribution: {
      modeled_attributed: band({
        c: Math.round(total.cap.c * attributed),
        e: Math.round(total.cap.e * attributed),
        u: Math.round(total.cap.u * attributed),
      }),
      attributed_share: r4(attributed),
      attribution_unavailable: 'unavailable' in input.attribution,
      unavailable_reason: 'unavailable' in input.attribution ? input.attribution.unavailable : null,
    },
    forecast: null,
  };
}
