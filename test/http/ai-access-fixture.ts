/**
 * Local stand-ins for the outside world of the AI access check: one HTTP server on 127.0.0.1 that behaves
 * per Host header, a resolver that knows only the fixture names, and a fetcher allowed to reach 127.0.0.1
 * and nothing else non-public. The connection guard is `guardConnections` in ../support/net.
 */
import type http from 'node:http';
import { aiCrawlers, ENGINE_IDS } from '../../src/analysis/ai-crawlers';
import type { Outbound } from '../../src/http/route';
import { createSafeFetcher, type SafeFetch } from '../../src/net/safe-fetch';
import { MALFORMED_ROBOTS_TXT, serveHomepage } from '../support/ai-access';
import { allowLoopback, fakeResolver, startFixtureServer } from '../support/net';

/** Fixture domains (RFC 2606 names: public-looking, so the domain rules accept them, but never anyone's site). */
export const D = {
  allow: 'allow.example.com',
  training: 'training.example.com',
  cdn: 'cdn.example.com',
  norobots: 'norobots.example.com',
  slow: 'slow.example.com',
  hang: 'hang.example.com',
  redirect: 'redirect.example.com',
  malformed: 'malformed.example.com',
  /** resolves to a private address: refused before connecting */
  private: 'private.example.com',
  /** the IDN bücher.example.com */
  idn: 'xn--bcher-kva.example.com',
  /** does not resolve */
  nowhere: 'nowhere.example.com',
} as const;

/** The requests the fixture never answers: all of hang.example.com, and PerplexityBot's homepage on slow.example.com. */
const neverAnswered = (host: string, path: string, ua: string): boolean =>
  host === D.hang || (host === D.slow && path === '/' && ua.includes('PerplexityBot/'));
/** Only those get a short timeout (the check's own 6 s would make the test slow); every other request keeps the check's. */
export const SHORT_TIMEOUT_MS = 300;

export const resolver = fakeResolver({
  ...Object.fromEntries(
    Object.values(D)
      .filter((d) => d !== D.private && d !== D.nowhere)
      .map((d) => [d, ['127.0.0.1']]),
  ),
  [D.private]: ['10.1.2.3'],
  'intranet.example.com': ['10.0.0.7'],
});

/** Every documented training agent's robots token: the training-only site disallows exactly these. */
const TRAINING_TOKENS = ENGINE_IDS.flatMap((id) => aiCrawlers().engines[id].training.agents.map((a) => a.token));
/** Engines whose training kind lists agents (the others follow the `*` group). */
export const ENGINES_WITH_TRAINING_AGENTS = ENGINE_IDS.filter((id) => aiCrawlers().engines[id].training.agents.length > 0);

const ROBOTS: Record<string, string> = {
  [D.allow]: `User-agent: *\nAllow: /\n\nSitemap: https://${D.allow}/sitemap.xml\n`,
  [D.training]: [...TRAINING_TOKENS.map((t) => `User-agent: ${t}`), 'Disallow: /', '', 'User-agent: *', 'Disallow: /admin/', ''].join('\n'),
  [D.cdn]: 'User-agent: *\nDisallow:\n',
  [D.slow]: 'User-agent: *\nAllow: /\n',
  [D.redirect]: 'User-agent: *\nAllow: /\n',
  [D.malformed]: MALFORMED_ROBOTS_TXT,
  [D.idn]: 'User-agent: *\nAllow: /\n',
};

function serve(host: string, req: http.IncomingMessage, res: http.ServerResponse, robots: Record<string, string>): void {
  const path = req.url ?? '/';
  const ua = req.headers['user-agent'] ?? '';
  if (neverAnswered(host, path, ua)) return;
  if (path === '/robots.txt') {
    if (host === D.norobots) return void res.writeHead(404, { 'content-type': 'text/html' }).end('<h1>Not found</h1>');
    return void res.writeHead(200, { 'content-type': 'text/plain' }).end(robots[host] ?? ROBOTS[host] ?? '');
  }
  if (path === '/sitemap.xml') {
    if (host === D.norobots) return void res.writeHead(200, { 'content-type': 'application/xml' }).end('<urlset/>');
    return void res.writeHead(404).end();
  }
  if (path === '/') return void serveHomepage(host === D.cdn ? 'cdn' : host === D.redirect ? 'redirect' : 'plain', ua, 'intranet.example.com', res);
  res.writeHead(404).end();
}

export interface Fixture {
  port: number;
  /** every request the fixture received (host without port, path, User-Agent) */
  requests: Array<{ host: string; path: string; ua: string }>;
  /** robots.txt served instead of a domain's own (a site that changes its mind between two checks) */
  robots: Record<string, string>;
  /** the outbound deps the app gets: the safe fetcher allowed to reach 127.0.0.1, domains served by the fixture */
  outbound: Outbound;
  close(): Promise<void>;
}

export async function startFixture(): Promise<Fixture> {
  const requests: Fixture['requests'] = [];
  const robots: Fixture['robots'] = {};
  const server = await startFixtureServer((req, res) => {
    const host = (req.headers.host ?? '').replace(/:\d+$/, '');
    requests.push({ host, path: req.url ?? '', ua: req.headers['user-agent'] ?? '' });
    serve(host, req, res, robots);
  });
  const { port } = server;
  const safeFetch = createSafeFetcher({ allowAddress: allowLoopback, resolver });
  // Test-side only: the check's per-request timeout (6 s) is cut for the requests the fixture never answers.
  const fetch: SafeFetch = (url, init = {}) => {
    const u = new URL(url);
    const short = neverAnswered(u.hostname, u.pathname, init.headers?.['user-agent'] ?? '');
    return safeFetch(url, short ? { ...init, timeoutMs: Math.min(init.timeoutMs ?? SHORT_TIMEOUT_MS, SHORT_TIMEOUT_MS) } : init);
  };
  return {
    port,
    requests,
    robots,
    outbound: { fetch, baseUrl: (d) => `http://${d}:${port}` },
    close: () => server.close(),
  };
}
