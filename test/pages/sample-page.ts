// A sample report page drawn only in tests: every shared page piece once, fed hostile names and links.
import { barChart, figures, formatPercent, type Segment, stackedBar, table } from '../../src/pages/charts';
import { type Html, html } from '../../src/pages/html';

export const HOSTILE_NAME = '<img src=x onerror="document.title=\'pwned\'">Evil Corp';
export const BIDI_NAME = 'Acme\u202Egnp.exe';
export const SCRIPT_URL = 'javascript:document.title="pwned"';

/** A stacked bar's three sentiment parts, positive to negative. */
export const sentimentSegments = (positive: number, neutral: number, negative: number): Segment[] => [
  { label: 'Positive', value: positive, kind: 'positive' },
  { label: 'Neutral', value: neutral, kind: 'neutral' },
  { label: 'Negative', value: negative, kind: 'negative' },
];

export function sampleBody(state: 'completed' | 'processing'): Html {
  const header = html`<header class="masthead">
<p class="muted small">AI visibility report · sample (test fixture)</p>
<h1>How AI answer engines talk about Zentro</h1>
<p class="muted">zentro.example · United States · English</p>
</header>`;
  if (state === 'processing') {
    return html`${header}<section class="notice" aria-live="polite">
<h2>Researching…</h2>
<p>The report is being prepared: 20 prompts asked to four models. This page refreshes by itself.</p>
</section>`;
  }
  const competitors = [
    { label: 'Zentro', value: 42, highlight: true },
    { label: 'Acme Analytics International Holdings Group', value: 31 },
    { label: HOSTILE_NAME, value: 17 },
    { label: BIDI_NAME, value: 10 },
  ];
  return html`${header}
${figures([
  { label: 'Mention rate', value: '42%' },
  { label: 'Share of voice', value: '31%' },
  { label: 'Citation rate', value: '18%' },
  { label: 'Average position', value: 2.4 },
])}
<section class="card">
<h2>Share of mentions by competitor</h2>
${barChart({ id: 'share', title: 'Share of mentions by competitor', bars: competitors, max: 100, format: (v) => formatPercent(v) })}
</section>
<section class="card">
<h2>Sentiment</h2>
${stackedBar({
  id: 'sentiment',
  title: 'Sentiment of the answers that mention Zentro',
  segments: sentimentSegments(34, 40, 6),
})}
</section>
<section class="card">
<h2>Sources the answers cite</h2>
${table({
  caption: 'Top citing domains',
  columns: [{ label: 'Domain' }, { label: 'Citations', numeric: true }, { label: 'Link' }],
  rows: [
    ['g2.example', 128, html`<a href="${'https://g2.example/zentro'}">g2.example/zentro</a>`],
    ['reddit.example', 77, html`<a href="${SCRIPT_URL}">a link that must go nowhere</a>`],
    [HOSTILE_NAME, 12, ''],
  ],
})}
</section>
<section class="card">
<h2>Models</h2>
${table({
  caption: 'Models in the report',
  columns: [{ label: 'Model' }, { label: 'Answers', numeric: true }, { label: 'Mention rate', numeric: true }],
  rows: [
    ['gpt-4o', 20, '45%'],
    ['claude-sonnet', 20, '40%'],
    ['gemini-pro', 20, '38%'],
    ['perplexity-sonar', 20, '45%'],
    ['grok', 0, 'not measured'],
  ],
})}
</section>
<footer class="colophon">Made with aivis · figures from 80 answers</footer>`;
}
