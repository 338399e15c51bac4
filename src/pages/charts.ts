import { type Html, type HtmlValue, html } from './html';
import { cutText } from '../domain/text';

/**
 * Charts drawn as inline SVG, sized in percentages and pixels (no viewBox), so text stays at its reading size on a
 * phone and the bars stretch on a desktop. Each chart is an image with a title and a description that carries its
 * data as text; every label and number is escaped by html``.
 */

const number = new Intl.NumberFormat('en-US', { maximumFractionDigits: 1 });
export const formatNumber = (n: number): string => number.format(n);
export const formatPercent = (n: number, digits = 0): string => `${n.toFixed(digits)}%`;

/** An id usable in an SVG's aria-labelledby: the caller's name reduced to a-z, 0-9 and dashes. */
const idOf = (s: string): string =>
  s
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '') || 'chart';

/** Long labels are cut to fit beside their value (shorter on a phone); the whole label stays in the row's tooltip. */
const NARROW_LABEL = 34;
const WIDE_LABEL = 72;
const cut = (s: string, max: number): string => (s.length > max ? `${cutText(s, max - 1)}…` : s);

/** 2 decimals are finer than a pixel at any width a page is read at. */
const pct = (part: number, whole: number): string => (whole > 0 ? ((Math.max(0, part) / whole) * 100).toFixed(2) : '0');

export interface Bar {
  label: string;
  value: number;
  /** drawn in the brand's color (the report's own website) */
  highlight?: boolean;
}

export interface BarChartOptions {
  /** unique in the page (the title's and description's ids derive from it) */
  id: string;
  title: string;
  bars: readonly Bar[];
  /** the value of a full-width bar (default: the largest value) */
  max?: number;
  format?: (value: number) => string;
}

const ROW = 46;

/** Horizontal bars, one per row: label left and value right on one line, the bar under them. */
export function barChart(o: BarChartOptions): Html {
  const id = idOf(o.id);
  const format = o.format ?? formatNumber;
  const max = o.max ?? Math.max(0, ...o.bars.map((b) => b.value));
  const height = Math.max(1, o.bars.length) * ROW;
  const summary = o.bars.length ? o.bars.map((b) => `${b.label}: ${format(b.value)}`).join('; ') : 'No data';
  const rows = o.bars.map((b, i) => {
    const y = i * ROW;
    return html`<g>
<title>${b.label}: ${format(b.value)}</title>
${
  b.label.length > NARROW_LABEL
    ? html`<text class="narrow" x="0" y="${y + 16}">${cut(b.label, NARROW_LABEL)}</text><text class="wide" x="0" y="${y + 16}">${cut(b.label, WIDE_LABEL)}</text>`
    : html`<text x="0" y="${y + 16}">${b.label}</text>`
}
<text class="value" x="100%" y="${y + 16}" text-anchor="end">${format(b.value)}</text>
<rect class="track" x="0" y="${y + 24}" width="100%" height="14" rx="3"></rect>
<rect class="${b.highlight ? 'bar self' : 'bar'}" x="0" y="${y + 24}" width="${pct(b.value, max)}%" height="14" rx="3"></rect>
</g>`;
  });
  return html`<svg class="chart" role="img" aria-labelledby="${id}-title ${id}-desc" height="${height}">
<title id="${id}-title">${o.title}</title>
<desc id="${id}-desc">${summary}</desc>
${o.bars.length ? rows : html`<text x="0" y="20">No data</text>`}
</svg>`;
}

export type SegmentKind = 'positive' | 'neutral' | 'negative' | 'self' | 'other';

export interface Segment {
  label: string;
  value: number;
  kind: SegmentKind;
}

export interface StackedBarOptions {
  id: string;
  title: string;
  segments: readonly Segment[];
  format?: (value: number) => string;
}

const kindClass = (k: SegmentKind) => (k === 'self' ? 'bar self' : k === 'other' ? 'bar' : k);

/** One bar split into parts of a whole (e.g. positive / neutral / negative), with a legend that gives the numbers. */
export function stackedBar(o: StackedBarOptions): Html {
  const id = idOf(o.id);
  const format = o.format ?? formatNumber;
  const total = o.segments.reduce((s, x) => s + Math.max(0, x.value), 0);
  const share = (v: number) => (total > 0 ? formatPercent((Math.max(0, v) / total) * 100) : '0%');
  const summary = total > 0 ? o.segments.map((s) => `${s.label}: ${format(s.value)} (${share(s.value)})`).join('; ') : 'No data';
  let x = 0;
  const parts = o.segments.map((s) => {
    const w = total > 0 ? (Math.max(0, s.value) / total) * 100 : 0;
    const part = html`<rect class="${kindClass(s.kind)}" x="${x.toFixed(2)}%" y="0" width="${w.toFixed(2)}%" height="24"><title>${s.label}: ${format(s.value)} (${share(s.value)})</title></rect>`;
    x += w;
    return part;
  });
  const legend = o.segments.map(
    (s) =>
      html`<li><svg width="12" height="12" aria-hidden="true"><rect class="${kindClass(s.kind)}" width="12" height="12" rx="2"></rect></svg><span>${s.label}: <strong>${format(s.value)}</strong> <span class="muted">(${share(s.value)})</span></span></li>`,
  );
  return html`<svg class="chart" role="img" aria-labelledby="${id}-title ${id}-desc" height="24">
<title id="${id}-title">${o.title}</title>
<desc id="${id}-desc">${summary}</desc>
<rect class="track" x="0" y="0" width="100%" height="24" rx="3"></rect>
${parts}
</svg>
<ul class="legend">${legend}</ul>`;
}

export interface Column {
  label: string;
  /** numbers: right-aligned, tabular figures */
  numeric?: boolean;
}

export interface TableOptions {
  caption: string;
  columns: readonly Column[];
  /** cells in column order: text (escaped), numbers, or Html */
  rows: readonly (readonly HtmlValue[])[];
  /** shown in a single row when there are no rows */
  empty?: string;
}

/** A table that scrolls sideways on a narrow screen rather than squeezing its columns. */
export function table(o: TableOptions): Html {
  const cls = (c: Column | undefined) => (c?.numeric ? 'num' : '');
  const body = o.rows.length
    ? o.rows.map(
        (r) =>
          html`<tr>${r.map((cell, i) => html`<td class="${cls(o.columns[i])}">${typeof cell === 'number' ? formatNumber(cell) : cell}</td>`)}</tr>`,
      )
    : html`<tr><td colspan="${o.columns.length}" class="muted">${o.empty ?? 'Nothing yet'}</td></tr>`;
  return html`<div class="table-wrap" role="region" aria-label="${o.caption}" tabindex="0">
<table>
<caption>${o.caption}</caption>
<thead><tr>${o.columns.map((c) => html`<th scope="col" class="${cls(c)}">${c.label}</th>`)}</tr></thead>
<tbody>${body}</tbody>
</table>
</div>`;
}

export interface Figure {
  label: string;
  value: string | number;
}

/** Headline numbers in a row of boxes that wraps on a phone. */
export function figures(items: readonly Figure[]): Html {
  return html`<div class="figures">${items.map(
    (f) =>
      html`<div class="figure"><span class="value">${typeof f.value === 'number' ? formatNumber(f.value) : f.value}</span><span class="label">${f.label}</span></div>`,
  )}</div>`;
}
