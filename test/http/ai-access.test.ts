import { describe, expect, it } from 'vitest';
import { ORG_CHECKS_PER_MIN, orgLimitKey } from '../../src/app/ai-access';
import { ENGINE_IDS } from '../../src/analysis/ai-crawlers';
import { AiAccessReport } from '../../src/app/ai-access';
import { EXPECTED_KEYS, flags, withFlags } from '../support/ai-access';
import { guardConnections } from '../support/net';
import { call, startServer, type TestServer } from '../support/server';
import { tenancyChecks, useWorld, type World } from '../support/tenancy';
import { useStarted } from '../support/started';
import { inOneMinute } from '../support/until';
import { D, ENGINES_WITH_TRAINING_AGENTS, SHORT_TIMEOUT_MS, startFixture, type Fixture } from './ai-access-fixture';

const { attempts } = guardConnections();

let fx: Fixture;
let s: TestServer;
let w: World;
// the fixture starts before the server and closes after it
useStarted(startFixture, (x) => (fx = x));
useWorld(
  (ctx) => ({ s, w } = ctx),
  () => startServer({}, { outbound: fx.outbound }),
);

const PATH = '/api/v1/ai-access/check';
const check = (domain: unknown, key = w.a.key) => call(s, 'POST', PATH, { key, body: { domain } });

const UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{3})?Z$/;
const FINGERPRINT_KEYS = ['checked_at', 'duration_ms', 'error', 'headers', 'status', 'url'];

/** The exact shape of a 200: the spec's table, every engine, every fingerprint field. */
function expectReportShape(body: any, domain: string) {
  expect(Object.keys(body).sort()).toEqual(['diagnostics', 'log', 'result']);
  expect(AiAccessReport.safeParse(body).success, JSON.stringify(AiAccessReport.safeParse(body).error?.issues?.[0])).toBe(true);
  const { result, diagnostics, log } = body;
  expect(Object.keys(result).sort()).toEqual(['checkedAt', 'domain', 'hasSitemap', 'http', 'robots', 'status']);
  expect(result.domain).toBe(domain);
  expect(['accessible', 'partial', 'blocked']).toContain(result.status);
  expect(result.checkedAt).toMatch(UTC);
  expect(typeof result.hasSitemap).toBe('boolean');
  for (const map of [result.http, result.robots]) {
    expect(Object.keys(map).sort()).toEqual([...ENGINE_IDS].sort());
    for (const id of ENGINE_IDS) {
      expect(Object.keys(map[id]).sort()).toEqual(['conversational', 'training']);
      expect(typeof map[id].conversational).toBe('boolean');
      expect(typeof map[id].training).toBe('boolean');
    }
  }
  expect(Object.keys(diagnostics).sort()).toEqual(['robotsCheck', 'userAgentChecks']);
  expect(Object.keys(diagnostics.userAgentChecks).sort()).toEqual(EXPECTED_KEYS);
  for (const [key, fp] of [['robots.txt', diagnostics.robotsCheck], ...Object.entries(diagnostics.userAgentChecks)] as [string, any][]) {
    expect(key).toMatch(/^(robots\.txt|(chatgpt|claude|perplexity|gemini|copilot|grok|deepseek|rufus)\.[A-Za-z0-9_-]+)$/);
    expect(Object.keys(fp).sort()).toEqual(FINGERPRINT_KEYS);
    expect(fp.status === null || Number.isInteger(fp.status)).toBe(true);
    expect(fp.error === null || /^[A-Z_]+$/.test(fp.error)).toBe(true);
    expect(fp.status === null).toBe(fp.error !== null);
    expect(Number.isInteger(fp.duration_ms) && fp.duration_ms >= 0).toBe(true);
    expect(fp.checked_at).toMatch(UTC);
    expect(typeof fp.headers).toBe('object');
  }
  expect(typeof log).toBe('string');
  expect(log).toContain(`Domain:     ${domain}`);
  expect(log).toContain(`Status:     ${result.status}`);
}

const budgetUsed = async (organizationId: string): Promise<number> => {
  const rows = await s.rt.database.db('aivis_rate_limits').where('key', orgLimitKey(organizationId)).sum({ n: 'count' });
  return Number(rows[0]?.n ?? 0);
};

describe('POST /api/v1/ai-access/check', () => {
  it('given a site that allows everything, then 200 accessible with every flag true, a sitemap, and the exact shape', async () => {
    const r = await check(D.allow);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expectReportShape(r.body, D.allow);
    expect(r.body.result).toMatchObject({ domain: D.allow, status: 'accessible', http: flags(true), robots: flags(true), hasSitemap: true });
    expect(r.body.diagnostics.robotsCheck).toMatchObject({ url: `http://${D.allow}:${fx.port}/robots.txt`, status: 200, error: null, headers: {} });
    expect(r.body.diagnostics.userAgentChecks['chatgpt.GPTBot']).toMatchObject({
      url: `http://${D.allow}:${fx.port}/`,
      status: 200,
      error: null,
      headers: { server: 'nginx', 'x-cache': 'MISS', via: '1.1 varnish' },
    });
    // the agents were really sent with their documented User-Agent
    const home = fx.requests.filter((q) => q.host === D.allow && q.path === '/');
    expect(home.some((q) => q.ua.includes('compatible; GPTBot/'))).toBe(true);
    expect(home.some((q) => q.ua.includes('Claude-User/'))).toBe(true);
  });

  it('given robots.txt blocking only the training agents, then the training robots flags of the engines that name one are false and the status is partial', async () => {
    const r = await check(D.training);
    expect(r.status).toBe(200);
    expectReportShape(r.body, D.training);
    expect(ENGINES_WITH_TRAINING_AGENTS).toEqual(['chatgpt', 'claude', 'gemini', 'rufus']);
    expect(r.body.result.robots).toEqual(
      withFlags(true, { chatgpt: { training: false }, claude: { training: false }, gemini: { training: false }, rufus: { training: false } }),
    );
    expect(r.body.result.http).toEqual(flags(true));
    expect(r.body.result.status).toBe('partial');
    expect(r.body.result.hasSitemap).toBe(false);
  });

  it('given a CDN answering 403 to one agent, then that kind fails over HTTP and its fingerprint carries the CDN headers', async () => {
    const r = await check(D.cdn);
    expect(r.status).toBe(200);
    expectReportShape(r.body, D.cdn);
    expect(r.body.result.http).toEqual(withFlags(true, { claude: { conversational: false } }));
    expect(r.body.result.robots).toEqual(flags(true));
    expect(r.body.result.status).toBe('partial');
    const fp = r.body.diagnostics.userAgentChecks['claude.Claude-User'];
    expect(fp).toMatchObject({ status: 403, error: null });
    // only CDN-related headers are kept
    expect(fp.headers).toEqual({ server: 'cloudflare', 'cf-ray': '8f1e2d3c4b5a6978-FRA' });
    expect(r.body.diagnostics.userAgentChecks['claude.Claude-SearchBot'].status).toBe(200);
    expect(r.body.log).toMatch(/claude\.Claude-User\s+status=403\s+error=-.*cdn=\[cf-ray=8f1e2d3c4b5a6978-FRA server=cloudflare\]/);
  });

  it('given no robots.txt (404), then everything is allowed and /sitemap.xml answering 200 counts as a sitemap', async () => {
    const r = await check(D.norobots);
    expect(r.status).toBe(200);
    expectReportShape(r.body, D.norobots);
    expect(r.body.diagnostics.robotsCheck.status).toBe(404);
    expect(r.body.result).toMatchObject({ status: 'accessible', robots: flags(true), http: flags(true), hasSitemap: true });
  });

  it('given a malformed robots.txt, then 200 and unparseable lines are ignored', async () => {
    const r = await check(D.malformed);
    expect(r.status).toBe(200);
    expectReportShape(r.body, D.malformed);
    expect(r.body.diagnostics.robotsCheck.status).toBe(200);
    expect(r.body.result).toMatchObject({ status: 'accessible', robots: flags(true), http: flags(true) });
  });

  it('given a site that never answers one agent, then that fingerprint says TIMEOUT and only that kind fails', async () => {
    const t0 = Date.now();
    const r = await check(D.slow);
    expect(Date.now() - t0).toBeLessThan(5_000);
    expect(r.status).toBe(200);
    expectReportShape(r.body, D.slow);
    expect(r.body.result.http).toEqual(withFlags(true, { perplexity: { conversational: false } }));
    expect(r.body.result.status).toBe('partial');
    const fp = r.body.diagnostics.userAgentChecks['perplexity.PerplexityBot'];
    expect(fp).toMatchObject({ status: null, error: 'TIMEOUT', headers: {} });
    expect(fp.duration_ms).toBeGreaterThanOrEqual(SHORT_TIMEOUT_MS - 20);
    expect(r.body.diagnostics.userAgentChecks['perplexity.Perplexity-User']).toMatchObject({ status: 200, error: null });
  });

  it('given a site that never answers at all, then 200 blocked, every flag false, TIMEOUT in the fingerprints (never a 5xx)', async () => {
    const r = await check(D.hang);
    expect(r.status).toBe(200);
    expectReportShape(r.body, D.hang);
    expect(r.body.result).toMatchObject({ status: 'blocked', http: flags(false), robots: flags(false), hasSitemap: false });
    expect(r.body.diagnostics.robotsCheck).toMatchObject({ status: null, error: 'TIMEOUT' });
    for (const fp of Object.values<any>(r.body.diagnostics.userAgentChecks)) expect(fp).toMatchObject({ status: null, error: 'TIMEOUT' });
  });

  it('given a homepage redirecting to private addresses, then every hop is refused without connecting: BLOCKED_ADDRESS and blocked', async () => {
    const r = await check(D.redirect);
    expect(r.status).toBe(200);
    expectReportShape(r.body, D.redirect);
    expect(r.body.result).toMatchObject({ status: 'blocked', robots: flags(true), http: flags(false) });
    for (const fp of Object.values<any>(r.body.diagnostics.userAgentChecks))
      expect(fp).toMatchObject({ status: null, error: 'BLOCKED_ADDRESS', headers: {} });
    // no attempt to 10.0.0.1, 169.254.169.254 or 10.0.0.7 (the guard checks it again after each test)
    expect(attempts.filter((ip) => ip !== '127.0.0.1' && ip !== '::1')).toEqual([]);
  });

  it('given a domain that does not resolve, then 200 blocked, every flag false, DNS_FAILURE in every fingerprint, nothing sent', async () => {
    const before = fx.requests.length;
    const r = await check(D.nowhere);
    expect(r.status).toBe(200);
    expectReportShape(r.body, D.nowhere);
    expect(r.body.result).toEqual({
      domain: D.nowhere,
      status: 'blocked',
      checkedAt: expect.stringMatching(UTC),
      http: flags(false),
      robots: flags(false),
      hasSitemap: false,
    });
    expect(r.body.diagnostics.robotsCheck).toMatchObject({ status: null, error: 'DNS_FAILURE' });
    for (const fp of Object.values<any>(r.body.diagnostics.userAgentChecks)) expect(fp).toMatchObject({ status: null, error: 'DNS_FAILURE' });
    expect(r.body.log).toContain('domain failed (DNS_FAILURE)');
    expect(fx.requests.length).toBe(before);
  });

  it('given a domain that resolves to a private address, then 200 blocked with BLOCKED_ADDRESS and no connection', async () => {
    const r = await check(D.private);
    expect(r.status).toBe(200);
    expectReportShape(r.body, D.private);
    expect(r.body.result).toMatchObject({ status: 'blocked', http: flags(false), robots: flags(false) });
    expect(r.body.diagnostics.robotsCheck).toMatchObject({ status: null, error: 'BLOCKED_ADDRESS' });
    for (const fp of Object.values<any>(r.body.diagnostics.userAgentChecks)) expect(fp.error).toBe('BLOCKED_ADDRESS');
  });

  it('given an IDN, then it is checked as punycode and result.domain is the punycode form', async () => {
    const r = await check('Bücher.Example.com');
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expectReportShape(r.body, D.idn);
    expect(r.body.result.status).toBe('accessible');
    expect(fx.requests.some((q) => q.host === D.idn && q.path === '/robots.txt')).toBe(true);
  });

  it('given a scheme or a trailing slash around the domain, then they are dropped', async () => {
    const r = await check(`https://${D.allow}/`);
    expect(r.status).toBe(200);
    expect(r.body.result.domain).toBe(D.allow);
  });

  it('given any key of the organization, including a key scoped to one website, then the check runs', async () => {
    for (const key of [w.a.scoped, w.a.plainGlobal, w.b.key]) {
      const r = await check(D.norobots, key);
      expect(r.status).toBe(200);
    }
  });

  it('given bad input, then 400 naming the problem, nothing fetched and no budget spent', async () => {
    const org = await s.org('Bad input');
    const before = fx.requests.length;
    const cases: [unknown, string][] = [
      [{ domain: 'example.com/about' }, 'domain must not include a path'],
      [{ domain: 'example.com:8080' }, 'domain must not include a port'],
      [{ domain: 'user:secret@example.com' }, 'domain must not include credentials'],
      [{ domain: 'https://user@example.com/' }, 'domain must not include credentials'],
      [{ domain: '93.184.216.34' }, 'domain must be a domain name, not an IP address'],
      [{ domain: '[2001:db8::1]' }, 'domain must be a domain name, not an IP address'],
      [{ domain: '127.0.0.1' }, 'domain must be a domain name, not an IP address'],
      [{ domain: 'example.com?x=1' }, 'domain must not include a query'],
      [{ domain: 'ftp://example.com' }, 'domain must not include a scheme other than http or https (got ftp://)'],
      [{ domain: 'localhost' }, 'domain must be a public domain, not localhost'],
      [{ domain: 'intranet' }, 'domain must have at least two labels, such as example.com'],
      [{ domain: '' }, 'domain is required'],
      [{ domain: '   ' }, 'domain is required'],
      [{ domain: 42 }, 'domain: must be a string'],
      [{ domain: null }, 'domain: must be a string'],
      [{ domain: ['example.com'] }, 'domain: must be a string'],
      [{}, 'domain is required'],
      [{ domain: 'example.com', website_id: w.a.a1 }, 'website_id is not allowed'],
      [[D.allow], 'body must be a JSON object'],
    ];
    for (const [body, error] of cases) {
      const r = await call(s, 'POST', PATH, { key: org.key, body });
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body, JSON.stringify(body)).toEqual({ error });
    }
    const bad = await call(s, 'POST', PATH, { key: org.key, body: '{"domain": ', headers: { 'content-type': 'application/json' } });
    expect(bad).toMatchObject({ status: 400, body: { error: 'body must be valid JSON' } });
    expect(fx.requests.length).toBe(before);
    expect(await budgetUsed(org.organization_id)).toBe(0);
  });

  it(`given ${ORG_CHECKS_PER_MIN} checks in a minute, then the next gets 429 with Retry-After, and a 400 still comes before the budget`, async () => {
    await inOneMinute(async () => {
      const org = await s.org('Busy');
      const other = await s.org('Neighbour');
      // refused input first: spends nothing
      for (let i = 0; i < 5; i++) expect((await check('example.com/path', org.key)).status).toBe(400);
      const answers = await Promise.all(Array.from({ length: ORG_CHECKS_PER_MIN }, () => check(D.norobots, org.key)));
      expect(answers.map((a) => a.status)).toEqual(Array(ORG_CHECKS_PER_MIN).fill(200));
      const over = await check(D.norobots, org.key);
      expect(over.status).toBe(429);
      expect(over.body).toEqual({ error: 'Rate limit exceeded' });
      const retryAfter = Number(over.headers.get('retry-after'));
      expect(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60).toBe(true);
      // invalid input is still refused as such, not as rate-limited
      expect(await check('example.com:443', org.key)).toMatchObject({ status: 400, body: { error: 'domain must not include a port' } });
      // the budget is the organization's: another organization is unaffected
      expect((await check(D.norobots, other.key)).status).toBe(200);
      expect(await budgetUsed(org.organization_id)).toBe(ORG_CHECKS_PER_MIN + 1);
    });
  });

  it('given the OpenAPI document, then the route documents the status rule and where the agents come from', async () => {
    const r = await call(s, 'GET', '/api/v1/openapi.json', { key: w.a.key });
    const op = r.body.paths['/api/v1/ai-access/check'].post;
    expect(op.summary).toMatch(/accessible = every flag true; blocked = no engine has conversational access/);
    expect(op.summary).toContain('infra/ai-crawlers.json');
    expect(op.requestBody.content['application/json'].schema).toMatchObject({ required: ['domain'], additionalProperties: false });
    expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['200', '400', '401', '429']));
  });

  tenancyChecks('POST /api/v1/ai-access/check', () => w, { method: 'POST', request: () => ({ path: PATH, body: { domain: D.allow } }) });
});
