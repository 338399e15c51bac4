import { MODELS } from '../domain/models';
import type { PitchPageData } from '../../queries/pitches/views';
import { barChart, figures, formatPercent, stackedBar, table } from './charts';
import { type Html, html } from './html';

/** How often a processing report's page reloads itself (the spec's polling interval). */
export const REPORT_REFRESH_SECONDS = 10;

const share = (part: number, whole: number) => (whole > 0 ? (100 * part) / whole : 0);
const signed = (n: number) => (n > 0 ? `+${n}` : String(n));

/** The public report page (report_url): every block of the report drawn, or where the report stands. */
export function pitchReportPage(d: PitchPageData): { title: string; body: Html; refreshSeconds?: number } {
  const p = d.report.pitch;
  const title = `AI visibility report: ${p.company_name}`;
  const header = html`<header class="masthead">
<p class="muted small">AI visibility report</p>
<h1>How AI answer engines talk about ${p.company_name}</h1>
<p class="muted">${d.domain} · ${p.country} · ${p.language}</p>
${p.company_description ? html`<p>${p.company_description}</p>` : ''}
</header>
${p.research_note ? html`<p class="notice research-note">${p.research_note}. The company is named from its domain; what the answer engines say is measured as usual.</p>` : ''}`;
  if (p.status === 'processing') {
    return {
      title,
      refreshSeconds: REPORT_REFRESH_SECONDS,
      body: html`${header}<section class="notice" aria-live="polite">
<h2>Researching…</h2>
<p>The report is being prepared: ${d.report.prompts.length || 20} prompts asked to ${d.models.length} models (${d.answered_models.length} of ${d.models.length} answered so far). This page refreshes by itself every ${REPORT_REFRESH_SECONDS} seconds.</p>
</section>
${promptsCard(d)}`,
    };
  }
  if (p.status === 'failed') {
    return {
      title,
      body: html`${header}<section class="notice error" role="alert">
<h2>This report could not be completed</h2>
<p>${d.error ?? 'The research or the generation failed.'}</p>
<p class="muted small">Ask whoever shared this link for a new report.</p>
</section>
<footer class="colophon">Made with aivis</footer>`,
    };
  }
  const m = d.report.metrics;
  const mentioned = [
    { label: p.company_name, value: m.brand_mentions, highlight: true },
    ...d.report.competitors.map((c) => ({ label: c.name, value: c.mentions })).sort((a, b) => b.value - a.value),
  ];
  const totalMentions = mentioned.reduce((s, b) => s + b.value, 0);
  const sentiment = d.sentiment ?? { positive: 0, neutral: 0, negative: 0 };
  const stats = new Map(d.model_stats.map((s) => [s.model, s]));
  return {
    title,
    body: html`${header}
${figures([
  { label: 'Answers analysed', value: m.total_responses },
  { label: `Answers mentioning ${p.company_name}`, value: m.brand_mentions },
  { label: 'Mention rate', value: formatPercent(m.response_rate) },
  { label: 'Sentiment (−100 to 100)', value: signed(m.sentiment_score) },
])}
<section class="card">
<h2>Share of mentions by competitor</h2>
${barChart({
  id: 'share',
  title: 'Share of mentions by competitor',
  bars: mentioned.map((b) => ({ ...b, value: Math.round(share(b.value, totalMentions)) })),
  max: 100,
  format: (v) => formatPercent(v),
})}
</section>
<section class="card">
<h2>Sentiment</h2>
${stackedBar({
  id: 'sentiment',
  title: `Sentiment of the answers that mention ${p.company_name}`,
  segments: [
    { label: 'Positive', value: sentiment.positive, kind: 'positive' },
    { label: 'Neutral', value: sentiment.neutral, kind: 'neutral' },
    { label: 'Negative', value: sentiment.negative, kind: 'negative' },
  ],
})}
${table({
  caption: 'Competitors',
  columns: [{ label: 'Competitor' }, { label: 'Mentions', numeric: true }, { label: 'Sentiment', numeric: true }],
  rows: d.report.competitors.map((c) => [c.name, c.mentions, signed(c.sentiment)]),
  empty: 'No competitors found',
})}
</section>
<section class="card">
<h2>Sources the answers cite</h2>
${barChart({
  id: 'sources',
  title: 'Top citing domains',
  bars: d.report.sources.map((s) => ({ label: s.domain, value: s.mentions })),
})}
</section>
<section class="card">
<h2>What the answers say</h2>
${table({
  caption: 'Attributes',
  columns: [{ label: 'Attribute' }, { label: 'Said of' }, { label: 'Statements', numeric: true }],
  rows: d.report.attributes.map((a) => [
    a.attribute_name,
    `${a.applies_to === 'target' ? p.company_name : 'competitors'}, ${a.attribute_type === 'positive' ? 'praised' : 'criticised'}`,
    a.count,
  ]),
  empty: 'No judgements found in the answers',
})}
</section>
<section class="card">
<h2>Models</h2>
${table({
  caption: `The ${MODELS.length} models; ${d.models.length} measured for this report`,
  columns: [{ label: 'Model' }, { label: 'Answers', numeric: true }, { label: 'Mention rate', numeric: true }],
  rows: MODELS.map((model) => {
    const s = stats.get(model.id);
    return s
      ? [model.label, s.answers, formatPercent(share(s.brand_mentions, s.answers))]
      : [model.label, html`<span class="muted">—</span>`, html`<span class="muted">not measured</span>`];
  }),
})}
</section>
${promptsCard(d)}
<footer class="colophon">Made with aivis · figures from ${m.total_responses} answers</footer>`,
  };
}

function promptsCard(d: PitchPageData): Html {
  if (!d.report.prompts.length) return html``;
  return html`<section class="card">
<h2>Prompts</h2>
${table({
  caption: 'Questions asked, as a buyer would ask them',
  columns: [{ label: '#', numeric: true }, { label: 'Prompt' }, { label: 'Type' }],
  rows: d.report.prompts.map((q, i) => [i + 1, q.prompt, q.type]),
})}
</section>`;
}

/** An unknown or malformed link. */
export const reportNotFoundPage = () => ({
  title: 'Report not found',
  body: html`<section class="notice error"><h2>Report not found</h2><p>This link does not lead to a report. Check that it was copied whole.</p></section>`,
});
