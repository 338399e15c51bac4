import type http from 'node:http';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { checkAiAccess, statusOf, type AiAccessReport } from '../../src/analysis/ai-access';
import { aiCrawlers, ENGINE_IDS, parseAiCrawlers } from '../../src/analysis/ai-crawlers';
import { createSafeFetcher } from '../../src/net/safe-fetch';
import { EXPECTED_KEYS, flags, MALFORMED_ROBOTS_TXT, serveHomepage, withFlags } from '../support/ai-access';
import { allowLoopback, fakeResolver, guardConnections, startFixtureServer, type FixtureServer } from '../support/net';

// Fake domains, all served by one local fixture server; every other name does not resolve.
const SITES = ['allow.test', 'training.test', 'cdn.test', 'norobots.test', 'hang.test', 'redirect.test', 'malformed.test', 'robots500.test'];
const resolver = fakeResolver({ ...Object.fromEntries(SITES.map((s) => [s, ['127.0.0.1']])), 'intranet.test': ['10.0.0.7'] });
const safeFetch = createSafeFetcher({ resolver, allowAddress: allowLoopback });
const NOW = new Date('2025-01-02T03:04:05.000Z');

const { attempts } = guardConnections();

let server: FixtureServer;
let port: number;
const requests: Array<{ host: string; path: string; ua: string }> = [];

const ROBOTS: Record<string, string> = {
  'allow.test': 'User-agent: *\nAllow: /\n\nSitemap: https://allow.test/sitemap.xml\n',
  'training.test': [
    'User-agent: GPTBot',
    'User-agent: ClaudeBot',
    'Disallow: /',
    '',
    'User-agent: Google-Extended',
    'Disallow: /',
    '',
    'User-agent: Amazonbot',
    'Disallow: /',
    '',
    'User-agent: *',
    'Disallow: /admin/',
    '',
  ].join('\n'),
  'cdn.test': 'User-agent: *\nDisallow:\n',
  'hang.test': '',
  'redirect.test': 'User-agent: *\nAllow: /\n',
  'malformed.test': MALFORMED_ROBOTS_TXT,
};

function route(host: string, req: http.IncomingMessage, res: http.ServerResponse): void {
  const path = req.url ?? '/';
  const ua = req.headers['user-agent'] ?? '';
  if (host === 'hang.test') return; // never answers
  if (path === '/robots.txt') {
    if (host === 'norobots.test') return void res.writeHead(404, { 'content-type': 'text/html' }).end('<h1>Not found</h1>');
    if (host === 'robots500.test') return void res.writeHead(503).end('unavailable');
    return void res.writeHead(200, { 'content-type': 'text/plain' }).end(ROBOTS[host] ?? '');
  }
  if (path === '/sitemap.xml') {
    if (host === 'norobots.test') return void res.writeHead(200, { 'content-type': 'application/xml' }).end('<urlset/>');
    return void res.writeHead(404).end();
  }
  if (path === '/')
    return void serveHomepage(host === 'cdn.test' ? 'cdn' : host === 'redirect.test' ? 'redirect' : 'plain', ua, 'intranet.test', res);
  res.writeHead(404).end();
}

beforeAll(async () => {
  server = await startFixtureServer((req, res) => {
    const host = (req.headers.host ?? '').replace(/:\d+$/, '');
    requests.push({ host, path: req.url ?? '', ua: req.headers['user-agent'] ?? '' });
    route(host, req, res);
  });
  port = server.port;
});

afterAll(async () => {
  await server.close();
});

afterEach(() => {
  requests.length = 0;
});

const check = (domain: string, extra: { timeoutMs?: number; budgetMs?: number } = {}): Promise<AiAccessReport> =>
  checkAiAccess(domain, { fetch: safeFetch, now: () => NOW, baseUrl: (d) => `http://${d}:${port}`, ...extra });

describe('the AI crawler list (infra/ai-crawlers.json)', () => {
  it('given the shipped list, when loaded, then it names exactly the eight engines with both kinds', () => {
    const list = aiCrawlers();
    expect(Object.keys(list.engines)).toEqual([...ENGINE_IDS]);
    for (const id of ENGINE_IDS) {
      const e = list.engines[id];
      expect(e.source.length).toBeGreaterThan(10);
      for (const kind of [e.conversational, e.training]) {
        if (kind.undocumented) expect(kind.agents).toEqual([]);
        else expect(kind.agents.length).toBeGreaterThan(0);
      }
    }
    expect(list.engines.chatgpt.training.agents.map((a) => a.token)).toEqual(['GPTBot']);
    expect(list.engines.gemini.training.agents[0]).toMatchObject({ token: 'Google-Extended', userAgent: null, fetchedBy: 'Googlebot' });
  });

  it('given an undocumented kind without a note, when validated, then it is refused', () => {
    const list = structuredClone(aiCrawlers()) as unknown as { engines: { grok: { training: { note?: string } } } };
    delete list.engines.grok.training.note;
    expect(() => parseAiCrawlers(list)).toThrow(/undocumented kind needs a note/);
  });

  it('given a list missing an engine, when validated, then it is refused', () => {
    const list = structuredClone(aiCrawlers()) as unknown as { engines: Record<string, unknown> };
    delete list.engines.rufus;
    expect(() => parseAiCrawlers(list)).toThrow(/engines\.rufus/);
  });
});

describe('statusOf', () => {
  it('given every flag true, then accessible', () => {
    expect(statusOf(withFlags(true, {}), withFlags(true, {}))).toBe('accessible');
  });
  it('given one engine with conversational robots and http true and the rest false, then partial', () => {
    expect(statusOf(withFlags(false, { grok: { conversational: true } }), withFlags(false, { grok: { conversational: true } }))).toBe('partial');
  });
  it('given conversational robots true only where http is false, then blocked', () => {
    expect(statusOf(withFlags(false, { grok: { conversational: true } }), withFlags(false, { claude: { conversational: true } }))).toBe('blocked');
  });
});

describe('checkAiAccess', () => {
  it('given a site that allows everything, when checked, then accessible with every flag true and a sitemap', async () => {
    const { result, diagnostics: d, log } = await check('allow.test');
    expect(result).toEqual({
      domain: 'allow.test',
      status: 'accessible',
      checkedAt: '2025-01-02T03:04:05.000Z',
      http: flags(true),
      robots: flags(true),
      hasSitemap: true,
    });
    expect(d.robotsCheck).toEqual({
      url: `http://allow.test:${port}/robots.txt`,
      status: 200,
      headers: {},
      error: null,
      duration_ms: expect.any(Number),
      checked_at: '2025-01-02T03:04:05.000Z',
    });
    expect(Object.keys(d.userAgentChecks).sort()).toEqual(EXPECTED_KEYS);
    expect(d.userAgentChecks['chatgpt.GPTBot']).toEqual({
      url: `http://allow.test:${port}/`,
      status: 200,
      headers: { server: 'nginx', 'x-cache': 'MISS', via: '1.1 varnish' },
      error: null,
      duration_ms: expect.any(Number),
      checked_at: '2025-01-02T03:04:05.000Z',
    });
    // one homepage fetch per distinct User-Agent, sent as documented; the Sitemap: line spares /sitemap.xml
    const home = requests.filter((r) => r.path === '/');
    expect(home).toHaveLength(14);
    expect(home.some((r) => r.ua.includes('compatible; GPTBot/'))).toBe(true);
    expect(requests.some((r) => r.path === '/sitemap.xml')).toBe(false);
    expect(log).toContain('Domain:     allow.test');
    expect(log).toContain('Status:     accessible');
  });

  it('given robots.txt blocking only training agents, when checked, then training robots flags are false and the status partial', async () => {
    const { result } = await check('training.test');
    expect(result.robots).toEqual(
      withFlags(true, { chatgpt: { training: false }, claude: { training: false }, gemini: { training: false }, rufus: { training: false } }),
    );
    expect(result.http).toEqual(flags(true));
    expect(result.status).toBe('partial');
    expect(result.hasSitemap).toBe(false);
  });

  it('given a CDN answering 403 to one User-Agent, when checked, then that kind fails over HTTP and the fingerprint shows the CDN', async () => {
    const { result, diagnostics: d, log } = await check('cdn.test');
    expect(result.http).toEqual(withFlags(true, { claude: { conversational: false } }));
    expect(result.robots).toEqual(flags(true));
    expect(result.status).toBe('partial');
    expect(d.userAgentChecks['claude.Claude-User']).toMatchObject({
      status: 403,
      headers: { server: 'cloudflare', 'cf-ray': '8f1e2d3c4b5a6978-FRA' },
      error: null,
    });
    expect(Object.keys(d.userAgentChecks['claude.Claude-User'].headers).sort()).toEqual(['cf-ray', 'server']);
    expect(d.userAgentChecks['claude.Claude-SearchBot'].status).toBe(200);
    expect(log).toMatch(/claude\.Claude-User\s+status=403\s+error=-.*cdn=\[cf-ray=8f1e2d3c4b5a6978-FRA server=cloudflare\]/);
  });

  it('given no robots.txt (404), when checked, then everything is allowed and /sitemap.xml answering 200 counts as a sitemap', async () => {
    const { result, diagnostics: d } = await check('norobots.test');
    expect(d.robotsCheck.status).toBe(404);
    expect(result.robots).toEqual(flags(true));
    expect(result.http).toEqual(flags(true));
    expect(result.hasSitemap).toBe(true);
    expect(result.status).toBe('accessible');
  });

  it('given robots.txt answering 503, when checked, then robots is unreachable: everything disallowed and blocked', async () => {
    const { result, diagnostics: d, log } = await check('robots500.test');
    expect(d.robotsCheck.status).toBe(503);
    expect(result.robots).toEqual(flags(false));
    expect(result.http).toEqual(flags(true));
    expect(result.status).toBe('blocked');
    expect(log).toContain('unreachable: everything disallowed');
  });

  it('given a malformed robots.txt, when checked, then it does not crash and unparseable lines are ignored', async () => {
    const { result, diagnostics: d } = await check('malformed.test');
    expect(d.robotsCheck.status).toBe(200);
    expect(result.robots).toEqual(flags(true));
    expect(result.status).toBe('accessible');
  });

  it('given a server that never answers, when checked with a short timeout, then blocked with TIMEOUT fingerprints', async () => {
    const t0 = Date.now();
    const { result, diagnostics: d } = await check('hang.test', { timeoutMs: 150 });
    expect(Date.now() - t0).toBeLessThan(3_000);
    expect(result.status).toBe('blocked');
    expect(result.http).toEqual(flags(false));
    expect(result.robots).toEqual(flags(false));
    expect(d.robotsCheck).toMatchObject({ status: null, error: 'TIMEOUT', headers: {} });
    for (const fp of Object.values(d.userAgentChecks)) expect(fp).toMatchObject({ status: null, error: 'TIMEOUT' });
  });

  it('given a homepage redirecting to private addresses, when checked, then each hop is refused before connecting and the fingerprints say BLOCKED_ADDRESS', async () => {
    const { result, diagnostics: d } = await check('redirect.test');
    expect(result.robots).toEqual(flags(true));
    expect(result.http).toEqual(flags(false));
    expect(result.status).toBe('blocked');
    expect(Object.keys(d.userAgentChecks).sort()).toEqual(EXPECTED_KEYS);
    for (const fp of Object.values(d.userAgentChecks)) expect(fp).toMatchObject({ status: null, error: 'BLOCKED_ADDRESS', headers: {} });
    // the afterEach hook proves that no connection to 10.0.0.1, 169.254.169.254 or 10.0.0.7 was attempted
    expect(new Set(attempts)).toEqual(new Set(['127.0.0.1']));
  });

  it('given a domain that does not resolve, when checked, then blocked, every flag false, fingerprints carry DNS_FAILURE, and nothing is sent', async () => {
    const report = await check('nowhere.test');
    expect(report.result).toEqual({
      domain: 'nowhere.test',
      status: 'blocked',
      checkedAt: '2025-01-02T03:04:05.000Z',
      http: flags(false),
      robots: flags(false),
      hasSitemap: false,
    });
    expect(report.diagnostics.robotsCheck).toMatchObject({ status: null, error: 'DNS_FAILURE', headers: {} });
    expect(Object.keys(report.diagnostics.userAgentChecks).sort()).toEqual(EXPECTED_KEYS);
    for (const fp of Object.values(report.diagnostics.userAgentChecks)) expect(fp).toMatchObject({ status: null, error: 'DNS_FAILURE' });
    expect(requests).toEqual([]);
    expect(attempts).toEqual([]);
    expect(report.log).toContain('domain failed (DNS_FAILURE)');
  });

  it('given a fetch that throws something unexpected, when checked, then the check still answers blocked instead of throwing', async () => {
    const report = await checkAiAccess('example.org', { fetch: () => Promise.reject(new TypeError('boom')), now: () => NOW });
    expect(report.result.status).toBe('blocked');
    expect(report.diagnostics.robotsCheck.error).toBe('INTERNAL_ERROR');
    expect(report.diagnostics.robotsCheck.url).toBe('https://example.org/robots.txt');
    expect(report.diagnostics.userAgentChecks['chatgpt.GPTBot']).toMatchObject({ url: 'https://example.org/', error: 'INTERNAL_ERROR' });
  });

  it('given a domain that is not a valid public domain, when checked in production mode, then nothing is fetched and the fingerprints say BAD_URL', async () => {
    let calls = 0;
    const report = await checkAiAccess('example.com/path', { fetch: () => (calls++, Promise.reject(new Error('unreachable'))), now: () => NOW });
    expect(calls).toBe(0);
    expect(report.result).toMatchObject({ status: 'blocked', http: flags(false), robots: flags(false) });
    expect(report.diagnostics.robotsCheck.error).toBe('BAD_URL');
  });

  it('given a server that never answers and a small budget, when checked, then requests not started in time are reported as BUDGET_EXCEEDED', async () => {
    const t0 = Date.now();
    const { result, diagnostics: d } = await check('hang.test', { timeoutMs: 150, budgetMs: 200 });
    expect(Date.now() - t0).toBeLessThan(1_500);
    expect(result.status).toBe('blocked');
    const errors = Object.values(d.userAgentChecks).map((fp) => fp.error);
    expect(errors.every((e) => e === 'TIMEOUT' || e === 'BUDGET_EXCEEDED')).toBe(true);
    expect(errors).toContain('BUDGET_EXCEEDED');
  });

  it('given a completed check, when the log is read, then it is a ticket with the table and one line per fetch', async () => {
    const { log, diagnostics: d } = await check('training.test');
    expect(log).toContain('Checked at: 2025-01-02T03:04:05.000Z');
    expect(log).toMatch(/^chatgpt\s+yes\s+yes\s+NO\s+yes$/m);
    expect(log).toMatch(/^grok\s+yes\s+yes\s+yes\s+yes$/m);
    expect(log).toContain('gemini training: Google-Extended is a robots token only; HTTP via Googlebot');
    expect(log).toContain('grok conversational: no documented agent');
    expect(log).toMatch(/^robots\.txt\s+status=200\s+error=-\s+duration=\d+ms\s+at=2025-01-02T03:04:05\.000Z/m);
    for (const key of Object.keys(d.userAgentChecks)) expect(log).toContain(key);
  });
});
