import { analyzeAnswer, compileEntities } from '../../src/analysis/answer';
import { compileAttributes, extractObservations } from '../../src/analysis/observations';
import type { EventData } from '../../src/domain/events';
import { deterministicId } from '../../src/domain/ids';

/** The attributes a pitch report watches (a prospect has no website of its own here to say which). */
export const PITCH_ATTRIBUTES = [
  'Ease of use',
  'Value for money',
  'Customer support',
  'Reliability',
  'Features',
  'Integrations',
  'Security',
  'Performance',
] as const;

export const TOP_SOURCES = 10;

export interface PitchFacts {
  job_id: string;
  company_name: string;
  company_url: string;
  plan: EventData<'PitchPlanWritten'>;
  answers: { model: string; answers: EventData<'PitchAnswersRecorded'>['answers'] }[];
}

/** −100…100: the mean of the scores (a score missing counts as ±1 by its direction), × 100, rounded. */
const sentimentOf = (scores: number[]) => (scores.length ? Math.round((scores.reduce((a, b) => a + b, 0) / scores.length) * 100) : 0);

/**
 * The report from the answers, by the analysis every answer gets (src/analysis): mentions and citations per answer,
 * attribute observations for sentiment. Pure: the same answers always compile to the same report.
 */
export function compilePitchReport(f: PitchFacts): Omit<EventData<'PitchReportCompiled'>, 'job_id'> {
  const entities = compileEntities([
    { id: f.job_id, name: f.company_name, is_self: true, url: f.company_url },
    ...f.plan.competitors.map((c) => ({ id: c.id, name: c.name, is_self: false, url: c.url })),
  ]);
  const attributes = compileAttributes(f.plan.attributes.map((a) => ({ id: a.id, name: a.name })));
  const attributeName = new Map(f.plan.attributes.map((a) => [a.id, a.name]));
  const mentions = new Map<string, number>();
  const scores = new Map<string, number[]>();
  const citing = new Map<string, number>();
  const groups = new Map<string, { attribute_id: string; attribute_type: string; applies_to: string; count: number }>();
  const sentiment = { positive: 0, neutral: 0, negative: 0 };
  const models: { model: string; answers: number; brand_mentions: number }[] = [];
  let total = 0;
  let brandMentions = 0;
  for (const m of f.answers) {
    const row = { model: m.model, answers: 0, brand_mentions: 0 };
    for (const a of m.answers) {
      total++;
      row.answers++;
      const analysis = analyzeAnswer(entities, { text: a.text, citations: a.citations });
      const named = new Set(analysis.mentions.map((x) => x.entity_id));
      for (const id of named) mentions.set(id, (mentions.get(id) ?? 0) + 1);
      const domains = new Set(analysis.sources.map((s) => s.root_domain).filter((d) => d !== ''));
      for (const d of domains) citing.set(d, (citing.get(d) ?? 0) + 1);
      let brandScore = 0;
      for (const o of extractObservations(entities, attributes, a.text)) {
        const score = o.score ?? (o.positive ? 1 : -1);
        scores.set(o.entity_id, [...(scores.get(o.entity_id) ?? []), score]);
        if (o.entity_id === f.job_id) brandScore += score;
        const attribute_type = o.positive ? 'positive' : 'negative';
        const applies_to = o.entity_id === f.job_id ? 'target' : 'competitor';
        const key = `${o.attribute_id}\u0000${attribute_type}\u0000${applies_to}`;
        const g = groups.get(key) ?? { attribute_id: o.attribute_id, attribute_type, applies_to, count: 0 };
        g.count++;
        groups.set(key, g);
      }
      if (named.has(f.job_id)) {
        brandMentions++;
        row.brand_mentions++;
        if (brandScore > 0) sentiment.positive++;
        else if (brandScore < 0) sentiment.negative++;
        else sentiment.neutral++;
      }
    }
    models.push(row);
  }
  return {
    competitors: f.plan.competitors.map((c) => ({ ...c, mentions: mentions.get(c.id) ?? 0, sentiment: sentimentOf(scores.get(c.id) ?? []) })),
    attributes: [...groups.values()]
      .sort((a, b) => b.count - a.count || a.attribute_id.localeCompare(b.attribute_id) || a.attribute_type.localeCompare(b.attribute_type))
      .map((g) => ({
        id: deterministicId('pitch-attribute', f.job_id, g.attribute_id, g.attribute_type, g.applies_to),
        attribute_name: attributeName.get(g.attribute_id) ?? '',
        attribute_type: g.attribute_type,
        applies_to: g.applies_to,
        count: g.count,
      })),
    sources: [...citing.entries()]
      .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
      .slice(0, TOP_SOURCES)
      .map(([domain, n]) => ({ domain, mentions: n })),
    metrics: {
      total_responses: total,
      brand_mentions: brandMentions,
      sentiment_score: sentimentOf(scores.get(f.job_id) ?? []),
      response_rate: total ? Math.round((100 * brandMentions) / total) : 0,
    },
    models,
    sentiment,
  };
}
