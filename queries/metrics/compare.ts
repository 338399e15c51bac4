import type { Knex } from 'knex';
import type { CompareMetric } from '../../src/domain/comparison';
import type { Selection } from '../filters';
import { daysOf, type SiteFacts } from './facts/layout';
import { chosen, factsCache, type Family, keyed, type MetricEntity, metricEntities, READS, type Read } from './metrics';
import { compileSelection, eachSelectedAnswer, scanTotal } from './scan';
import { meanDifference, newcombeInterval, round2, round4, stabilityOf, twoProportionP, verdictOf, wilsonInterval } from './stats';

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
 * the verdict. `s` selects the answers (its own dates are replaced by each period's); the alert rules call it too.
 */
export async function comparePeriods(db: Knex, s: Selection, metric: CompareMetric, current: Period, previous: Period, read?: Read) {
  const family = FAMILY[metric];
  const range = {
    start: new Date(Math.min(current.start.getTime(), previous.start.getTime())),
    end: new Date(Math.max(current.end.getTime(), previous.end.getTime())),
  };
  const { site, entities } = await load(db, s, range, read);
  const ids = entities.map((e) => e.id);
  const counts = [current, previous].map((p) =>
    scanTotal(site, compileSelection(site, { ...s, start: p.start, end: p.end }, ids, { any: false, reads: READS[family] })),
  );
  const [cur, prev] = counts;
  const names = keyed(entities);
  const data: Record<string, ComparisonRow> = {};
  entities.forEach((e, j) => {
    data[names[j]] = metric === 'avg_position' ? positionRow(e, cur, prev, j) : rateRow(metric, e, counts, j);
  });
  return {
    metric,
    current: { start_date: current.start.toISOString(), end_date: current.end.toISOString(), responses: cur.responses },
    previous: { start_date: previous.start.toISOString(), end_date: previous.end.toISOString(), responses: prev.responses },
    data,
  };
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

type C = ReturnType<typeof scanTotal>;

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
  const M = site.models.size;
  // per (prompt, model): its days in order (the parts come in day order), each [answers, mentioned]
  const pairs = new Map<number, { day: number; days: { answers: number; mentioned: number }[] }>();
  eachSelectedAnswer(site, q, (d, i, model) => {
    const key = d.prompt[i] * M + model;
    let p = pairs.get(key);
    if (!p) pairs.set(key, (p = { day: -1, days: [] }));
    if (p.day !== d.day) {
      p.day = d.day;
      p.days.push({ answers: 0, mentioned: 0 });
    }
    const today = p.days[p.days.length - 1];
    today.answers++;
    if (col >= 0 && d.pos[i * E + col] !== 0) today.mentioned++;
  });
  const text = new Map(prompts.map((p) => [p.id, p.text]));
  const rows = [...pairs].map(([key, p]) => {
    const promptId = site.prompts.keys[Math.floor(key / M)];
    const st = stabilityOf(p.days);
    const ci = wilsonInterval(st.mentioned, st.answers);
    return {
      prompt_id: promptId,
      prompt: text.get(promptId) ?? '',
      model: site.models.keys[key % M],
      answers: st.answers,
      mentioned: st.mentioned,
      mention_rate: round2((100 * st.mentioned) / st.answers),
      ci_low: ci === null ? 0 : round2(100 * ci[0]),
      ci_high: ci === null ? 0 : round2(100 * ci[1]),
      days: st.days,
      flips: st.flips,
      volatility: round4(st.volatility),
      consistency: round2(st.consistency),
      volatile: st.days >= VOLATILE.days && st.volatility >= VOLATILE.volatility,
      raw: st.volatility,
    };
  });
  rows.sort((a, b) => b.raw - a.raw || cmp(a.prompt, b.prompt) || cmp(a.model, b.model) || cmp(a.prompt_id, b.prompt_id));
  const volatile = rows.filter((r) => r.volatile).length;
  return { data: rows.map(({ volatile: _v, raw: _r, ...row }) => row), summary: { pairs: rows.length, volatile_pairs: volatile } };
}

/** Code-unit order, the same on every instance. */
const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
