import type { Knex } from 'knex';
import type { CompareMetric } from '../../src/domain/comparison';
import type { Selection } from '../filters';
import { daysOf, type SiteFacts } from './facts/layout';
import { chosen, factsCache, type Family, keyed, type MetricEntity, metricEntities, READS, type Read } from './metrics';
import { compileSelection, type Counts, eachSelectedAnswer, type Reads, scanTotal } from './scan';
import { meanDifference, newcombeInterval, round2, round4, twoProportionP, verdictOf, wilsonInterval } from './stats';

/** The family each compared metric reads. */
const FAMILY: Record<CompareMetric, Family> = {
  mention_rate: 'mention-rate',
  share_of_voice: 'share-of-voice',
  citation_rate: 'citation-rate',
  avg_position: 'position',
};

export interface Period {
  start: Date;
  end: Date;
}

/** The facts of both periods (or of the stability range) and the entities, as the other metric reads take them. */
async function load(db: Knex, s: Selection, range: { start: Date; end: Date }, read?: Read): Promise<{ site: SiteFacts; entities: MetricEntity[] }> {
  const days = daysOf(range);
  if (read) return { site: await factsCache(db).get(db, s.websiteId, days, read.head), entities: chosen(read.entities, s) };
  const [site, entities] = await Promise.all([factsCache(db).get(db, s.websiteId, days), metricEntities(db, s)]);
  return { site, entities };
}

const pct = (x: number | null) => (x === null ? null : round2(100 * x));

/**
 * Each entity's value in the current and the previous period, the change, its 95% interval, the two-sided p-value and
 * the verdict. `s` selects the answers (its own dates are replaced by each period's).
 */
export async function comparePeriods(db: Knex, s: Selection, metric: CompareMetric, current: Period, previous: Period, read?: Read) {
  const { site, entities } = await load(db, s, comparedRange(current, previous), read);
  const ids = entities.map((e) => e.id);
  const reads = readsOf(metric);
  const cur = periodCounts(site, ids, s, current, reads);
  const prev = periodCounts(site, ids, s, previous, reads);
  const rows = comparisonRows(metric, entities, cur, prev);
  const names = keyed(entities);
  const data: Record<string, ComparisonRow> = {};
  entities.forEach((_, j) => {
    data[names[j]] = rows[j];
  });
  return {
    metric,
    current: { start_date: current.start.toISOString(), end_date: current.end.toISOString(), responses: cur.responses },
    previous: { start_date: previous.start.toISOString(), end_date: previous.end.toISOString(), responses: prev.responses },
    data,
  };
}

/** The time both periods span (the facts a comparison needs held). */
export const comparedRange = (current: Period, previous: Period): Period => ({
  start: new Date(Math.min(current.start.getTime(), previous.start.getTime())),
  end: new Date(Math.max(current.end.getTime(), previous.end.getTime())),
});

/** The counts a compared metric reads (the scans count only those). */
export const readsOf = (metric: CompareMetric): Reads => READS[FAMILY[metric]];

/**
 * The counts of the entities `ids` (in their order) over one period of facts held: one scan, of `reads` only (counts
 * of several metrics over one period: the union of their reads, `all` for mentions and cites). `s` selects the
 * answers, its own dates replaced by the period's.
 */
export function periodCounts(site: SiteFacts, ids: string[], s: Selection, p: Period, reads: Reads): Counts {
  return scanTotal(site, compileSelection(site, { ...s, start: p.start, end: p.end }, ids, { any: false, reads }));
}

/**
 * Each entity's row (in the order of `entities`) from the counts of both periods (periodCounts of those entities, with
 * at least the metric's reads). comparePeriods keys them by name; the alert rules take them by entity id.
 */
export function comparisonRows(metric: CompareMetric, entities: MetricEntity[], cur: Counts, prev: Counts): ComparisonRow[] {
  return entities.map((e, j) => (metric === 'avg_position' ? positionRow(e, cur, prev, j) : rateRow(metric, e, [cur, prev], j)));
}

export interface ComparisonRow {
  is_self: boolean;
  current: number | null;
  previous: number | null;
  change: number | null;
  change_ci_low: number | null;
  change_ci_high: number | null;
  p_value: number | null;
  verdict: 'up' | 'down' | 'within_noise' | 'insufficient_data';
}

type C = Counts;

/** A rate as k/n per period: share of voice's n is the mentions of every included entity. */
function rateRow(metric: Exclude<CompareMetric, 'avg_position'>, e: MetricEntity, counts: C[], j: number): ComparisonRow {
  const [[k1, n1], [k2, n2]] = counts.map((c): [number, number] => {
    if (metric === 'citation_rate') return [c.cited[j], c.responses];
    if (metric === 'mention_rate') return [c.mentioned[j], c.responses];
    return [c.mentioned[j], c.mentioned.reduce((a, b) => a + b, 0)];
  });
  const interval = newcombeInterval(k1, n1, k2, n2);
  const p = twoProportionP(k1, n1, k2, n2);
  return {
    is_self: e.is_self,
    current: n1 === 0 ? null : pct(k1 / n1),
    previous: n2 === 0 ? null : pct(k2 / n2),
    change: interval === null ? null : pct(k1 / n1 - k2 / n2),
    change_ci_low: interval === null ? null : pct(interval[0]),
    change_ci_high: interval === null ? null : pct(interval[1]),
    p_value: p === null ? null : round4(p),
    verdict: verdictOf(interval),
  };
}

function positionRow(e: MetricEntity, cur: C, prev: C, j: number): ComparisonRow {
  const a = { n: cur.mentioned[j], sum: cur.posSum[j], sumSq: cur.posSq[j] };
  const b = { n: prev.mentioned[j], sum: prev.posSum[j], sumSq: prev.posSq[j] };
  const d = meanDifference(a, b);
  return {
    is_self: e.is_self,
    current: a.n === 0 ? null : round2(a.sum / a.n),
    previous: b.n === 0 ? null : round2(b.sum / b.n),
    change: d === null ? null : round2(d.change),
    change_ci_low: d === null ? null : round2(d.low),
    change_ci_high: d === null ? null : round2(d.high),
    p_value: d === null ? null : round4(d.p),
    verdict: verdictOf(d === null ? null : [d.low, d.high]),
  };
}

/** Rows with days ≥ 3 and volatility ≥ 0.5 are volatile. */
export const VOLATILE = { days: 3, volatility: 0.5 };

/**
 * Per (prompt, model) with selected answers, how steadily the brand is mentioned from UTC day to day. `s` must carry
 * its range (start and end).
 */
export async function promptStability(db: Knex, s: Selection & { start: Date; end: Date }, read?: Read) {
  const [{ site, entities }, prompts] = await Promise.all([
    load(db, s, s, read),
    db('rm_prompts').where('website_id', s.websiteId).select('id', 'text') as Promise<{ id: string; text: string }[]>,
  ]);
  const brand = entities.find((e) => e.is_self);
  const q = compileSelection(site, s, brand ? [brand.id] : [], { any: false, reads: 'mentions' });
  const col = brand ? q.slots[0] : -1;
  const E = site.entities.length;
  const M = Math.max(1, site.models.size);
  const K = Math.max(1, site.prompts.size) * M;
  // per (prompt, model): the day open now and its counts, then the closed days' totals (the parts come in day order)
  const open = new Int32Array(K).fill(-1);
  const dayA = new Uint32Array(K);
  const dayM = new Uint32Array(K);
  const answers = new Uint32Array(K);
  const mentioned = new Uint32Array(K);
  const days = new Uint32Array(K);
  const flips = new Uint32Array(K);
  const last = new Int8Array(K).fill(-1);
  const close = (k: number) => {
    const flag = 2 * dayM[k] >= dayA[k] ? 1 : 0;
    if (last[k] >= 0 && last[k] !== flag) flips[k]++;
    last[k] = flag;
    days[k]++;
    answers[k] += dayA[k];
    mentioned[k] += dayM[k];
  };
  eachSelectedAnswer(site, q, (d, i, model) => {
    const k = d.prompt[i] * M + model;
    if (open[k] !== d.day) {
      if (open[k] >= 0) close(k);
      open[k] = d.day;
      dayA[k] = 0;
      dayM[k] = 0;
    }
    dayA[k]++;
    if (col >= 0 && d.pos[i * E + col] !== 0) dayM[k]++;
  });
  const text = new Map(prompts.map((p) => [p.id, p.text]));
  const rows = [];
  for (let k = 0; k < K; k++) {
    if (open[k] < 0) continue;
    close(k);
    const promptId = site.prompts.keys[Math.floor(k / M)];
    const volatility = days[k] < 2 ? 0 : flips[k] / (days[k] - 1);
    const ci = wilsonInterval(mentioned[k], answers[k]);
    rows.push({
      prompt_id: promptId,
      prompt: text.get(promptId) ?? '',
      model: site.models.keys[k % M],
      answers: answers[k],
      mentioned: mentioned[k],
      mention_rate: round2((100 * mentioned[k]) / answers[k]),
      ci_low: ci === null ? 0 : round2(100 * ci[0]),
      ci_high: ci === null ? 0 : round2(100 * ci[1]),
      days: days[k],
      flips: flips[k],
      volatility: round4(volatility),
      consistency: round2((100 * Math.max(mentioned[k], answers[k] - mentioned[k])) / answers[k]),
      volatile: days[k] >= VOLATILE.days && volatility >= VOLATILE.volatility,
      raw: volatility,
    });
  }
  rows.sort((a, b) => b.raw - a.raw || cmp(a.prompt, b.prompt) || cmp(a.model, b.model) || cmp(a.prompt_id, b.prompt_id));
  const volatile = rows.filter((r) => r.volatile).length;
  return { data: rows.map(({ volatile: _v, raw: _r, ...row }) => row), summary: { pairs: rows.length, volatile_pairs: volatile } };
}

/** Code-unit order, the same on every instance. */
const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
