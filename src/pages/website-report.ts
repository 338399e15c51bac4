import type { ReportPage } from '../../queries/reports/views';
import { barChart, figures, formatNumber, formatPercent, table } from './charts';
import { type Html, html } from './html';

const VERDICT = { up: 'up', down: 'down', within_noise: 'within noise', insufficient_data: 'insufficient data' } as const;
const pct = (v: number | null) => (v === null ? '—' : formatPercent(v, 1));
const signedPoints = (v: number | null) => (v === null ? '—' : `${v > 0 ? '+' : ''}${v.toFixed(1)} pts`);
const range = (ci: readonly [number, number] | null) => (ci ? `${ci[0].toFixed(1)}–${ci[1].toFixed(1)}%` : '—');
const none = (what: string) => html`<p class="muted empty">${what}</p>`;

/** The daily mention rate as one column per day (heights in percent of the chart, so it prints at any width). */
function trendChart(trend: ReportPage['snapshot']['trend'], brand: string): Html {
  const days = trend.filter((d) => d.mention_rate !== null);
  const summary = days.length ? days.map((d) => `${d.date}: ${formatPercent(d.mention_rate ?? 0, 1)}`).join('; ') : 'No data';
  const w = days.length ? 100 / days.length : 100;
  const H = 160;
  const cols = days.map((d, i) => {
    const h = ((d.mention_rate ?? 0) / 100) * H;
    return html`<rect class="bar self" x="${(i * w + w * 0.1).toFixed(2)}%" y="${(H - h).toFixed(1)}" width="${(w * 0.8).toFixed(2)}%" height="${h.toFixed(1)}"><title>${d.date}: ${formatPercent(d.mention_rate ?? 0, 1)}</title></rect>`;
  });
  return html`<svg class="chart" role="img" aria-labelledby="trend-title trend-desc" height="${H + 22}">
<title id="trend-title">Daily mention rate of ${brand}</title>
<desc id="trend-desc">${summary}</desc>
<rect class="track" x="0" y="0" width="100%" height="${H}"></rect>
${cols}
${days.length ? html`<text x="0" y="${H + 18}">${days[0].date}</text><text x="100%" y="${H + 18}" text-anchor="end">${days[days.length - 1].date}</text>` : ''}
</svg>`;
}

/** The public page of a website report (report_url): the snapshot taken at its creation, every section. */
export function websiteReportPage(d: ReportPage): { title: string; body: Html } {
  const s = d.snapshot;
  const self = s.rates.find((r) => r.is_self);
  const selfCompare = s.comparison.find((r) => r.is_self);
  const brand = s.website.name;
  return {
    title: d.title,
    body: html`<header class="masthead">
<p class="muted small">AI visibility report</p>
<h1>${d.title}</h1>
<p class="muted">${brand} · ${s.website.url} · ${d.start_date} to ${d.end_date}, compared with ${s.previous.start_date} to ${s.previous.end_date}</p>
</header>
${figures([
  { label: 'Answers analysed', value: s.responses },
  { label: `Mention rate of ${brand}`, value: self ? pct(self.mention_rate) : '—' },
  { label: 'Change from the period before', value: selfCompare ? `${signedPoints(selfCompare.change)} (${VERDICT[selfCompare.verdict]})` : '—' },
])}
<section class="card" id="rates">
<h2>Mention rate, brand and competitors</h2>
${
  s.rates.length
    ? html`${barChart({
        id: 'rates',
        title: 'Mention rate by brand',
        bars: s.rates.map((r) => ({ label: r.name, value: r.mention_rate, highlight: r.is_self })),
        max: 100,
        format: (v) => formatPercent(v, 1),
      })}
${table({
  caption: 'Mention rate with its 95% interval',
  columns: [
    { label: 'Brand' },
    { label: 'Mentions', numeric: true },
    { label: 'Answers', numeric: true },
    { label: 'Mention rate', numeric: true },
    { label: '95% interval', numeric: true },
  ],
  rows: s.rates.map((r) => [r.name, r.mentions, r.responses, pct(r.mention_rate), range(r.ci95)]),
})}`
    : none('No answers in this period.')
}
</section>
<section class="card" id="comparison">
<h2>Compared with the period before</h2>
${table({
  caption: `Mention rate ${s.previous.start_date} to ${s.previous.end_date} against ${d.start_date} to ${d.end_date}`,
  columns: [
    { label: 'Brand' },
    { label: 'Before', numeric: true },
    { label: 'Now', numeric: true },
    { label: 'Change', numeric: true },
    { label: '95% interval of the change', numeric: true },
    { label: 'Verdict' },
  ],
  rows: s.comparison.map((r) => [
    r.name,
    pct(r.previous),
    pct(r.current),
    signedPoints(r.change),
    r.change_ci_low === null || r.change_ci_high === null ? '—' : `${r.change_ci_low.toFixed(1)} to ${r.change_ci_high.toFixed(1)} pts`,
    VERDICT[r.verdict],
  ]),
  empty: 'No answers in either period.',
})}
</section>
<section class="card" id="share-of-voice">
<h2>Share of voice by model</h2>
${
  s.share_of_voice_by_model.length
    ? s.share_of_voice_by_model.map((m) =>
        barChart({
          id: `sov-${m.model}`,
          title: `Share of voice on ${m.model} (${formatNumber(m.responses)} answers)`,
          bars: m.entities.map((e) => ({ label: e.name, value: e.share_of_voice, highlight: e.is_self })),
          max: 100,
          format: (v) => formatPercent(v, 1),
        }),
      )
    : none('No answers from any model in this period.')
}
</section>
<section class="card" id="trend">
<h2>Daily mention rate</h2>
${s.trend.some((t) => t.mention_rate !== null) ? trendChart(s.trend, brand) : none('No answers in this period.')}
</section>
<section class="card" id="sources">
<h2>Top sources</h2>
${
  s.sources.length
    ? table({
        caption: 'Domains the engines retrieved and cited',
        columns: [{ label: 'Domain' }, { label: 'Retrieved', numeric: true }, { label: 'Cited', numeric: true }],
        rows: s.sources.map((x) => [x.domain, x.retrieved, x.cited]),
      })
    : none('No sources retrieved or cited in this period.')
}
</section>
<section class="card" id="crawlers">
<h2>Verified AI crawler activity</h2>
${
  s.crawlers.length
    ? html`${barChart({ id: 'crawlers', title: 'Verified AI crawler hits by bot', bars: s.crawlers.map((b) => ({ label: b.bot, value: b.hits })) })}
${table({
  caption: 'Verified AI crawlers',
  columns: [{ label: 'Bot' }, { label: 'Operator' }, { label: 'Hits', numeric: true }, { label: 'Pages', numeric: true }, { label: 'Last seen' }],
  rows: s.crawlers.map((b) => [b.bot, b.operator, b.hits, b.pages, b.last_seen.slice(0, 10)]),
})}`
    : none('No verified AI crawler visits in this period (no access logs imported, or none matched).')
}
</section>
<section class="card" id="alerts">
<h2>Alerts fired in the period</h2>
${
  s.alerts.length
    ? table({
        caption: 'Alerts fired',
        columns: [{ label: 'Fired (UTC)' }, { label: 'Kind' }, { label: 'What happened' }],
        rows: s.alerts.map((a) => [a.fired_at.slice(0, 16).replace('T', ' '), a.kind, a.summary]),
      })
    : none('No alerts fired in this period.')
}
</section>
<footer class="colophon">Made with aivis · a snapshot taken ${d.created_at.slice(0, 16).replace('T', ' ')} UTC</footer>`,
  };
}

export const websiteReportNotFoundPage = () => ({
  title: 'Report not found',
  body: html`<section class="notice error"><h2>Report not found</h2><p>This link does not lead to a report: it was deleted, or not copied whole.</p></section>`,
});
