import { createHash } from 'node:crypto';
import type { FastifyReply } from 'fastify';
import { type Html, html, trustedHtml } from './html';

/**
 * The page every public page is drawn in: one static stylesheet (allowed by its hash, so no script and no other
 * style can run), a viewport for phones, print rules, system fonts only, nothing fetched from anywhere.
 */
export const STYLESHEET = `
:root{color-scheme:light;--ink:#1b2330;--muted:#5b6574;--line:#d9dee5;--paper:#fff;--wash:#f4f6f9;--accent:#1f5fbf;
--self:#1f5fbf;--other:#8d9bb0;--positive:#1e8e4e;--neutral:#9aa3ae;--negative:#c83a32}
*{box-sizing:border-box}
html{-webkit-text-size-adjust:100%;text-size-adjust:100%}
body{margin:0;background:var(--wash);color:var(--ink);font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Noto Sans",sans-serif;overflow-wrap:break-word}
.page{max-width:52rem;margin:0 auto;padding:1.25rem 1rem 3rem}
header.masthead{margin:0 0 1.5rem}
h1{font-size:1.6rem;line-height:1.25;margin:0 0 .25rem}
h2{font-size:1.15rem;line-height:1.3;margin:0 0 .75rem}
p{margin:0 0 .75rem}
.muted{color:var(--muted)}
.small{font-size:.875rem}
a{color:var(--accent)}
section.card{background:var(--paper);border:1px solid var(--line);border-radius:.5rem;padding:1rem;margin:0 0 1rem}
.figures{display:grid;grid-template-columns:repeat(auto-fit,minmax(9rem,1fr));gap:.75rem;margin:0 0 1rem}
.figure{background:var(--paper);border:1px solid var(--line);border-radius:.5rem;padding:.75rem 1rem}
.figure .value{display:block;font-size:1.5rem;font-weight:650;font-variant-numeric:tabular-nums}
.figure .label{display:block;color:var(--muted);font-size:.875rem}
.notice{border-left:4px solid var(--accent);background:var(--paper);padding:.75rem 1rem;margin:0 0 1rem}
.notice.error{border-color:var(--negative)}
svg.chart{display:block;width:100%;overflow:visible}
svg.chart text{fill:var(--ink);font-size:14px;unicode-bidi:isolate}
svg.chart .wide{display:none}
svg.chart text.value{font-variant-numeric:tabular-nums;font-weight:600}
svg{print-color-adjust:exact;-webkit-print-color-adjust:exact}
.track{fill:#e7ebf0}
.bar{fill:var(--other)}
.bar.self{fill:var(--self)}
.positive{fill:var(--positive)}
.neutral{fill:var(--neutral)}
.negative{fill:var(--negative)}
ul.legend{list-style:none;display:flex;flex-wrap:wrap;gap:.25rem 1.25rem;margin:.5rem 0 0;padding:0;font-size:.875rem}
ul.legend li{display:flex;align-items:center;gap:.4rem}
ul.legend svg{flex:none}
.table-wrap{overflow-x:auto;margin:0 0 .5rem}
table{width:100%;border-collapse:collapse;font-size:.9375rem}
caption{text-align:left;font-weight:600;padding:0 0 .5rem}
th,td{padding:.45rem .5rem;border-bottom:1px solid var(--line);text-align:left;vertical-align:top;overflow-wrap:anywhere;min-width:6rem}
th{font-size:.8125rem;color:var(--muted);font-weight:600}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap;min-width:0}
footer.colophon{color:var(--muted);font-size:.8125rem;margin-top:2rem}
label{font-weight:600}
input.field{width:100%;max-width:24rem;font:inherit;padding:.5rem .6rem;border:1px solid var(--line);border-radius:.375rem;background:var(--paper);color:var(--ink)}
input.field:focus{outline:2px solid var(--accent);outline-offset:1px}
.button{font:inherit;font-weight:600;padding:.5rem 1.1rem;border:1px solid var(--line);border-radius:.375rem;background:var(--paper);color:var(--ink);cursor:pointer}
.button.primary{background:var(--accent);border-color:var(--accent);color:#fff}
.actions{display:flex;gap:.75rem;flex-wrap:wrap}
code{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:.875em;background:var(--wash);padding:0 .25rem;border-radius:.25rem}
@media (min-width:40rem){.page{padding:2rem 1.5rem 4rem}h1{font-size:2rem}svg.chart .wide{display:inline}svg.chart .narrow{display:none}}
@media print{
@page{size:A4;margin:14mm}
body{background:#fff;font-size:11pt}
.page{max-width:none;padding:0}
section.card,.figure{border-color:#bbb;break-inside:avoid}
.no-print{display:none}
a{color:inherit;text-decoration:none}
.table-wrap{overflow:visible}
}
`.trim();

const STYLE_ELEMENT = trustedHtml(`<style>${STYLESHEET}</style>`);
/** The CSP source that allows exactly the stylesheet above. */
const STYLE_SOURCE = `'sha256-${createHash('sha256').update(STYLESHEET).digest('base64')}'`;

export interface PageOptions {
  title: string;
  /** what goes inside the page's frame */
  body: Html;
  lang?: string;
  description?: string;
  /** keep the page out of search engines (meta robots and X-Robots-Tag) */
  noindex?: boolean;
  /** the page reloads itself after this many seconds (a meta refresh: no script runs) */
  refreshSeconds?: number;
  /**
   * Where forms may post besides the page's own origin. Chromium also checks the redirects that follow a form post
   * against form-action: a sign-in form whose answer redirects to a client's redirect URI must name that origin.
   */
  formActions?: readonly string[];
}

/** The page's Content-Security-Policy: nothing but its own stylesheet, data: images and forms to itself. */
export function contentSecurityPolicy(options: Pick<PageOptions, 'formActions'> = {}): string {
  const formAction = ["'self'", ...(options.formActions ?? [])].join(' ');
  return [
    "default-src 'none'",
    `style-src ${STYLE_SOURCE}`,
    'img-src data:',
    `form-action ${formAction}`,
    "base-uri 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/** The whole document. */
export function renderPage(options: PageOptions): string {
  const refresh = options.refreshSeconds !== undefined ? Math.max(1, Math.round(options.refreshSeconds)) : null;
  return `<!doctype html>\n${html`<html lang="${options.lang ?? 'en'}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
${options.noindex ? html`<meta name="robots" content="noindex, nofollow">` : ''}
${options.description ? html`<meta name="description" content="${options.description}">` : ''}
${refresh !== null ? html`<meta http-equiv="refresh" content="${refresh}">` : ''}
<meta name="referrer" content="no-referrer">
<title>${options.title}</title>
<link rel="icon" href="data:,">
${STYLE_ELEMENT}
</head>
<body>
<div class="page">
${options.body}
</div>
</body>
</html>
`}`;
}

/** The headers every page is sent with. */
export function pageHeaders(options: Pick<PageOptions, 'noindex' | 'formActions'> = {}): Record<string, string> {
  return {
    'content-security-policy': contentSecurityPolicy(options),
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    'x-frame-options': 'DENY',
    'cross-origin-opener-policy': 'same-origin',
    'cross-origin-resource-policy': 'same-origin',
    // a page may be reachable by its link alone (a report's token): no shared cache keeps it
    'cache-control': 'no-store',
    ...(options.noindex ? { 'x-robots-tag': 'noindex, nofollow' } : {}),
  };
}

/** Sends a page from a fastify route: HTML in UTF-8 with the security headers. */
export function sendPage(reply: FastifyReply, options: PageOptions & { status?: number }): FastifyReply {
  return reply
    .code(options.status ?? 200)
    .headers(pageHeaders(options))
    .type('text/html; charset=utf-8')
    .send(renderPage(options));
}
