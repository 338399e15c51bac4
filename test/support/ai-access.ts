/**
 * Expectations shared by the AI access check's tests (the pure check in test/analysis and the HTTP route in
 * test/http): the flag maps of a report and the diagnostics keys it must carry, a malformed robots.txt, and the
 * fixture sites' homepages.
 */
import type http from 'node:http';
import { ENGINE_IDS, type EngineId } from '../../src/analysis/ai-crawlers';

/** Every engine with both kinds set to `value`. */
export const flags = (value: boolean) => Object.fromEntries(ENGINE_IDS.map((id) => [id, { conversational: value, training: value }]));
/** Every engine with both kinds set to `base`, except the kinds named in `overrides`. */
export const withFlags = (base: boolean, overrides: Partial<Record<EngineId, { conversational?: boolean; training?: boolean }>>) => {
  const out = flags(base) as Record<EngineId, { conversational: boolean; training: boolean }>;
  for (const [id, o] of Object.entries(overrides)) Object.assign(out[id as EngineId], o);
  return out;
};

/** The keys of diagnostics.userAgentChecks: one per engine and User-Agent (`default` where none is documented), sorted. */
export const EXPECTED_KEYS = [
  'chatgpt.ChatGPT-User',
  'chatgpt.OAI-SearchBot',
  'chatgpt.GPTBot',
  'claude.Claude-User',
  'claude.Claude-SearchBot',
  'claude.ClaudeBot',
  'perplexity.Perplexity-User',
  'perplexity.PerplexityBot',
  'perplexity.default',
  'gemini.Googlebot',
  'copilot.bingbot',
  'copilot.default',
  'grok.default',
  'deepseek.default',
  'rufus.Amzn-SearchBot',
  'rufus.Amzn-User',
  'rufus.Amazonbot',
].sort();

/** A robots.txt that is mostly not robots.txt: HTML, lines without colons, control characters. */
export const MALFORMED_ROBOTS_TXT = [
  '<html><body>Oops, this is not robots.txt</body></html>',
  'User-agent GPTBot',
  'Disallow /',
  '\u0000\u0007\ufffd\ufffd',
  ':::',
  'Disallow: /private',
  'User-agent: *',
  'Disallow: /*.pdf$',
  'Allow /',
  'Crawl-delay: soon',
].join('\n');

/** What the fixture CDN sends: its fingerprint (server, cf-ray) and two headers that are not. */
const CDN_HEADERS_SENT = { server: 'cloudflare', 'cf-ray': '8f1e2d3c4b5a6978-FRA', 'content-type': 'text/html', 'x-powered-by': 'fixture' };

/**
 * A fixture site's homepage (path /), by what the site is. `cdn`: behind a CDN that blocks Claude-User. `redirect`:
 * sends GPTBot to a private address, Claude's agents to the cloud metadata address and the others to `intranet` (a
 * name that resolves to a private address). `plain`: a page behind nginx and varnish.
 */
export function serveHomepage(site: 'cdn' | 'redirect' | 'plain', ua: string, intranet: string, res: http.ServerResponse): void {
  if (site === 'cdn') {
    if (ua.includes('Claude-User/')) return void res.writeHead(403, CDN_HEADERS_SENT).end('<h1>Sorry, you have been blocked</h1>');
    return void res.writeHead(200, CDN_HEADERS_SENT).end('<h1>home</h1>');
  }
  if (site === 'redirect') {
    const target = ua.includes('GPTBot')
      ? 'http://10.0.0.1/'
      : ua.includes('Claude')
        ? 'http://169.254.169.254/latest/meta-data/'
        : `http://${intranet}/`;
    return void res.writeHead(302, { location: target }).end();
  }
  res.writeHead(200, { 'content-type': 'text/html', server: 'nginx', 'x-cache': 'MISS', via: '1.1 varnish' }).end('<h1>home</h1>');
}
