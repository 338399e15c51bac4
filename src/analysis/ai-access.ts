/** AI access check: can the AI answer engines' crawlers read a domain? Never throws (rules: docs/analysis.md#ai-access-check) */
import { domainToASCII } from 'node:url';
import { isIP } from 'node:net';
import robotsParser from 'robots-parser';
import { aiCrawlers, AGENT_KINDS, ENGINE_IDS, type AgentKind, type AiCrawlers, type EngineId } from './ai-crawlers';
import { SafeFetchError, type SafeFetch, type SafeFetchResponse } from '../net/safe-fetch';
import { mapLimit } from '../domain/map-limit';

// ---------------------------------------------------------------------------
// Input

/**
 * Validates the `domain` of a check request. Accepted: a public host name, IDN
 * (converted to punycode, lower-cased), optionally prefixed with http:// or https://
 * and/or followed by a single "/" (both dropped: the check always uses https://<domain>/),
 * and a trailing dot (dropped). Refused, with a message naming the problem: non-strings,
 * empty input, other schemes, credentials, ports, paths, queries, fragments, IP
 * addresses (any notation), single-label names, localhost and special-use names
 * (.localhost, .local, .internal, .test, .invalid, .example, .onion, .arpa), labels
 * over 63 or names over 253 characters, characters not allowed in host names.
 */
export function parseDomainInput(input: unknown): { domain: string } | { error: string } {
  if (typeof input !== 'string') return { error: 'domain must be a string' };
  let s = input.trim();
  if (s === '') return { error: 'domain is required' };
  if (s.length > 1000) return { error: 'domain is too long' };

  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(s);
  if (scheme) {
    const name = scheme[1].toLowerCase();
    if (name !== 'http' && name !== 'https') return { error: `domain must not include a scheme other than http or https (got ${name}://)` };
    s = s.slice(scheme[0].length);
  } else if (/^[a-z][a-z0-9+.-]*:(?!\d+(?:[/?#]|$))/i.test(s) && !s.includes('@')) {
    return { error: 'domain must be a host name such as example.com' };
  }

  const authorityEnd = s.search(/[/?#]/);
  const authority = authorityEnd === -1 ? s : s.slice(0, authorityEnd);
  const rest = authorityEnd === -1 ? '' : s.slice(authorityEnd);
  if (authority.includes('@')) return { error: 'domain must not include credentials' };
  if (rest.includes('#')) return { error: 'domain must not include a fragment' };
  if (rest.includes('?')) return { error: 'domain must not include a query' };
  if (rest !== '' && rest !== '/') return { error: 'domain must not include a path' };

  let host = authority;
  if (host.startsWith('[') || (host.match(/:/g)?.length ?? 0) > 1) {
    return { error: 'domain must be a domain name, not an IP address' };
  }
  if (host.includes(':')) return { error: 'domain must not include a port' };
  if (host === '') return { error: 'domain is required' };
  if (/[\s%*!$&'()+,;=<>"`{}|\\^~[\]]/.test(host)) return { error: 'domain contains characters that are not allowed in a host name' };
  if (isIP(host)) return { error: 'domain must be a domain name, not an IP address' };

  const ascii = domainToASCII(host).toLowerCase();
  if (ascii === '') return { error: 'domain is not a valid domain name' };
  if (isIP(ascii)) return { error: 'domain must be a domain name, not an IP address' };
  host = ascii.endsWith('.') ? ascii.slice(0, -1) : ascii;

  if (host.length > 253) return { error: 'domain must be at most 253 characters' };
  const labels = host.split('.');
  if (labels.some((l) => l === '')) return { error: 'domain must not contain empty labels' };
  for (const label of labels) {
    if (label.length > 63) return { error: `domain label "${label.slice(0, 20)}…" is longer than 63 characters` };
    if (!/^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/.test(label)) {
      return { error: `domain label "${label}" may only contain letters, digits and inner hyphens` };
    }
  }
  const tld = labels[labels.length - 1];
  if (host === 'localhost' || tld === 'localhost') return { error: 'domain must be a public domain, not localhost' };
  if (labels.length < 2) return { error: 'domain must have at least two labels, such as example.com' };
  if (/^\d+$/.test(tld)) return { error: 'domain must end in an alphabetic top-level domain' };
  if (SPECIAL_USE_TLDS.has(tld)) return { error: `domain must be a public domain (.${tld} is reserved for special use)` };
  return { domain: host };
}

const SPECIAL_USE_TLDS = new Set(['local', 'localdomain', 'internal', 'test', 'invalid', 'example', 'onion', 'arpa', 'home', 'lan']);

// ---------------------------------------------------------------------------
// Check

export const CDN_HEADERS = [
  'cf-ray',
  'x-vercel-id',
  'x-amz-cf-id',
  'x-fastly-request-id',
  'x-akamai-request-id',
  'server',
  'via',
  'x-served-by',
  'x-cache',
] as const;
export type CdnHeader = (typeof CDN_HEADERS)[number];

export interface Fingerprint {
  url: string;
  status: number | null;
  /** Only the CDN-related headers that were present. */
  headers: Partial<Record<CdnHeader, string>>;
  /** A SafeFetchError code (DNS_FAILURE, TIMEOUT, BLOCKED_ADDRESS, ...), or null when an HTTP answer came back. */
  error: string | null;
  duration_ms: number;
  checked_at: string;
}

export interface AccessFlags {
  conversational: boolean;
  training: boolean;
}

export type AiAccessStatus = 'accessible' | 'partial' | 'blocked';

export interface AiAccessResult {
  domain: string;
  status: AiAccessStatus;
  checkedAt: string;
  http: Record<EngineId, AccessFlags>;
  robots: Record<EngineId, AccessFlags>;
  hasSitemap: boolean;
}

export interface AiAccessDiagnostics {
  robotsCheck: Fingerprint;
  /** Keyed `<engine>.<agent token>`; `<engine>.default` for a kind with no documented agent. */
  userAgentChecks: Record<string, Fingerprint>;
}

export interface AiAccessReport {
  result: AiAccessResult;
  diagnostics: AiAccessDiagnostics;
  log: string;
}

export interface AiAccessDeps {
  fetch: SafeFetch;
  now?: () => Date;
  /** TEST ONLY: scheme + host + port to use instead of https://<domain>. */
  baseUrl?: (domain: string) => string;
  /** The agent list; defaults to infra/ai-crawlers.json. */
  crawlers?: AiCrawlers;
  /** Per request. Default 6 s. */
  timeoutMs?: number;
  /** Requests in flight at once against the domain. Default 4. */
  concurrency?: number;
  /** Time for the whole check; a request not started within it is reported as BUDGET_EXCEEDED. Default 20 s. */
  budgetMs?: number;
  /** User-Agent of aivis' own requests (robots.txt, sitemap, undocumented agents). */
  userAgent?: string;
}

export const CHECKER_USER_AGENT = 'Mozilla/5.0 (compatible; aivis-ai-access-check/1.0)';
const ROBOTS_MAX_BYTES = 500 * 1024;
const PAGE_MAX_BYTES = 64 * 1024;
const HOST_LEVEL_ERRORS = new Set(['DNS_FAILURE', 'BLOCKED_ADDRESS', 'BAD_URL']);

type Robots = ReturnType<typeof robotsParser>;
type RobotsPolicy = { kind: 'parsed'; robots: Robots } | { kind: 'allow-all' } | { kind: 'disallow-all' };

interface Probe {
  key: string;
  engine: EngineId;
  kind: AgentKind;
  /** robots group to evaluate */
  token: string;
  /** User-Agent used for the HTTP check */
  userAgent: string;
  /** false for a token-only agent: its HTTP result comes from another probe's fetch, and it has no fingerprint of its own */
  ownFingerprint: boolean;
}

type Outcome = { fingerprint: Fingerprint; response: SafeFetchResponse | null; error: SafeFetchError | null };

function errorCode(err: unknown): string {
  return err instanceof SafeFetchError ? err.code : 'INTERNAL_ERROR';
}

function cdnHeaders(headers: Record<string, string>): Partial<Record<CdnHeader, string>> {
  const out: Partial<Record<CdnHeader, string>> = {};
  for (const h of CDN_HEADERS) if (headers[h] !== undefined) out[h] = headers[h];
  return out;
}

async function probe(fetch: SafeFetch, url: string, userAgent: string, now: () => Date, timeoutMs: number, maxBytes: number): Promise<Outcome> {
  const checkedAt = now().toISOString();
  const t0 = performance.now();
  try {
    const response = await fetch(url, { method: 'GET', headers: { 'user-agent': userAgent, accept: '*/*' }, timeoutMs, maxBytes });
    return {
      response,
      error: null,
      fingerprint: {
        url,
        status: response.status,
        headers: cdnHeaders(response.headers),
        error: null,
        duration_ms: Math.round(performance.now() - t0),
        checked_at: checkedAt,
      },
    };
  } catch (err) {
    return {
      response: null,
      error: err instanceof SafeFetchError ? err : null,
      fingerprint: { url, status: null, headers: {}, error: errorCode(err), duration_ms: Math.round(performance.now() - t0), checked_at: checkedAt },
    };
  }
}

function probesOf(crawlers: AiCrawlers, checkerUserAgent: string): Probe[] {
  const probes: Probe[] = [];
  for (const engine of ENGINE_IDS) {
    const e = crawlers.engines[engine];
    const all = [...e.conversational.agents, ...e.training.agents];
    for (const kind of AGENT_KINDS) {
      const k = e[kind];
      if (k.agents.length === 0) {
        probes.push({ key: `${engine}.default`, engine, kind, token: '*', userAgent: checkerUserAgent, ownFingerprint: true });
        continue;
      }
      for (const a of k.agents) {
        const userAgent = a.userAgent ?? all.find((b) => b.token === a.fetchedBy)?.userAgent ?? checkerUserAgent;
        probes.push({ key: `${engine}.${a.token}`, engine, kind, token: a.token, userAgent, ownFingerprint: a.userAgent !== null });
      }
    }
  }
  return probes;
}

function robotsPolicy(outcome: Outcome, robotsUrl: string): RobotsPolicy {
  const res = outcome.response;
  if (!res) return outcome.error?.code === 'TOO_MANY_REDIRECTS' ? { kind: 'allow-all' } : { kind: 'disallow-all' };
  if (res.status >= 200 && res.status < 300) {
    try {
      return { kind: 'parsed', robots: robotsParser(robotsUrl, res.body) };
    } catch {
      return { kind: 'allow-all' };
    }
  }
  if (res.status === 429 || res.status >= 500) return { kind: 'disallow-all' };
  // 4xx: "unavailable" (RFC 9309 2.3.1.3), and a 3xx answer with no Location to follow
  return { kind: 'allow-all' };
}

function robotsAllows(policy: RobotsPolicy, homeUrl: string, token: string): boolean {
  if (policy.kind !== 'parsed') return policy.kind === 'allow-all';
  try {
    return policy.robots.isAllowed(homeUrl, token) !== false;
  } catch {
    return true;
  }
}

const reachable = (o: Outcome | undefined): boolean => !!o?.response && o.response.status >= 200 && o.response.status < 400;

function emptyFlags(): Record<EngineId, AccessFlags> {
  return Object.fromEntries(ENGINE_IDS.map((id) => [id, { conversational: false, training: false }])) as Record<EngineId, AccessFlags>;
}

export function statusOf(http: Record<EngineId, AccessFlags>, robots: Record<EngineId, AccessFlags>): AiAccessStatus {
  const anyConversational = ENGINE_IDS.some((id) => http[id].conversational && robots[id].conversational);
  if (!anyConversational) return 'blocked';
  const all = ENGINE_IDS.every((id) => AGENT_KINDS.every((k) => http[id][k] && robots[id][k]));
  return all ? 'accessible' : 'partial';
}

export async function checkAiAccess(domain: string, deps: AiAccessDeps): Promise<AiAccessReport> {
  const now = deps.now ?? (() => new Date());
  const checkedAt = now().toISOString();
  let crawlers: AiCrawlers | null = null;
  let base = `https://${domain}`;
  try {
    crawlers = deps.crawlers ?? aiCrawlers();
    if (!deps.baseUrl) {
      // Defence in depth: callers validate with parseDomainInput; anything else is not fetched at all.
      const parsed = parseDomainInput(domain);
      if ('error' in parsed) {
        const fp: Fingerprint = { url: `${base}/robots.txt`, status: null, headers: {}, error: 'BAD_URL', duration_ms: 0, checked_at: checkedAt };
        return hostFailureReport(domain, base, fp, crawlers, deps, checkedAt);
      }
      domain = parsed.domain;
      base = `https://${domain}`;
    } else {
      base = deps.baseUrl(domain).replace(/\/+$/, '');
    }
    return await runCheck(domain, base, deps, crawlers, now, checkedAt);
  } catch (err) {
    // Last resort: an unexpected failure still yields a well-formed blocked report.
    const fp: Fingerprint = { url: `${base}/robots.txt`, status: null, headers: {}, error: errorCode(err), duration_ms: 0, checked_at: checkedAt };
    return hostFailureReport(domain, base, fp, crawlers, deps, checkedAt);
  }
}

/** Every user-agent fingerprint carries the robots.txt fetch's error; every flag false; blocked. */
function hostFailureReport(
  domain: string,
  base: string,
  robotsCheck: Fingerprint,
  crawlers: AiCrawlers | null,
  deps: AiAccessDeps,
  checkedAt: string,
): AiAccessReport {
  const userAgentChecks: Record<string, Fingerprint> = {};
  if (crawlers) {
    for (const p of probesOf(crawlers, deps.userAgent ?? CHECKER_USER_AGENT)) {
      if (p.ownFingerprint) userAgentChecks[p.key] = { ...robotsCheck, url: `${base}/`, duration_ms: 0 };
    }
  }
  const result: AiAccessResult = { domain, status: 'blocked', checkedAt, http: emptyFlags(), robots: emptyFlags(), hasSitemap: false };
  const diagnostics = { robotsCheck, userAgentChecks };
  return { result, diagnostics, log: renderLog(result, diagnostics, crawlers, { source: 'none', status: null }) };
}

async function runCheck(
  domain: string,
  base: string,
  deps: AiAccessDeps,
  crawlers: AiCrawlers,
  now: () => Date,
  checkedAt: string,
): Promise<AiAccessReport> {
  const timeoutMs = deps.timeoutMs ?? 6_000;
  const concurrency = deps.concurrency ?? 4;
  const budgetEnds = performance.now() + (deps.budgetMs ?? 20_000);
  const checkerUA = deps.userAgent ?? CHECKER_USER_AGENT;
  const robotsUrl = `${base}/robots.txt`;
  const homeUrl = `${base}/`;
  const probes = probesOf(crawlers, checkerUA);
  // Each request gets the per-request timeout, cut to what is left of the check's budget.
  const budgeted = (url: string, userAgent: string, maxBytes: number): Promise<Outcome> => {
    const left = Math.floor(budgetEnds - performance.now());
    if (left <= 0) {
      const fingerprint: Fingerprint = { url, status: null, headers: {}, error: 'BUDGET_EXCEEDED', duration_ms: 0, checked_at: now().toISOString() };
      return Promise.resolve({ fingerprint, response: null, error: null });
    }
    return probe(deps.fetch, url, userAgent, now, Math.min(timeoutMs, left), maxBytes);
  };

  const robotsOutcome = await budgeted(robotsUrl, checkerUA, ROBOTS_MAX_BYTES);
  const robotsCheck = robotsOutcome.fingerprint;

  // The domain itself failed: every other request would fail the same way, so none is made.
  const hostFailed =
    robotsOutcome.error !== null &&
    HOST_LEVEL_ERRORS.has(robotsOutcome.error.code) &&
    (robotsOutcome.error.url === null || sameHost(robotsOutcome.error.url, robotsUrl));
  if (hostFailed || (robotsOutcome.response === null && robotsOutcome.error === null)) {
    return hostFailureReport(domain, base, robotsCheck, crawlers, deps, checkedAt);
  }

  const policy = robotsPolicy(robotsOutcome, robotsUrl);
  const sitemapsInRobots = policy.kind === 'parsed' ? policy.robots.getSitemaps().length > 0 : false;

  // One fetch per distinct User-Agent; the sitemap probe joins the same pool.
  const userAgents = [...new Set(probes.map((p) => p.userAgent))];
  type Job = { kind: 'ua'; userAgent: string } | { kind: 'sitemap' };
  const jobs: Job[] = [
    ...(sitemapsInRobots ? [] : [{ kind: 'sitemap' } as Job]),
    ...userAgents.map((userAgent) => ({ kind: 'ua', userAgent }) as Job),
  ];
  const outcomes = await mapLimit(jobs, concurrency, (job) =>
    job.kind === 'sitemap' ? budgeted(`${base}/sitemap.xml`, checkerUA, PAGE_MAX_BYTES) : budgeted(homeUrl, job.userAgent, PAGE_MAX_BYTES),
  );
  const byUserAgent = new Map<string, Outcome>();
  let sitemapOutcome: Outcome | null = null;
  jobs.forEach((job, i) => {
    if (job.kind === 'sitemap') sitemapOutcome = outcomes[i];
    else byUserAgent.set(job.userAgent, outcomes[i]);
  });

  const http = emptyFlags();
  const robots = emptyFlags();
  for (const engine of ENGINE_IDS) {
    for (const kind of AGENT_KINDS) {
      const ofKind = probes.filter((p) => p.engine === engine && p.kind === kind);
      http[engine][kind] = ofKind.every((p) => reachable(byUserAgent.get(p.userAgent)));
      robots[engine][kind] = ofKind.every((p) => robotsAllows(policy, homeUrl, p.token));
    }
  }

  const userAgentChecks: Record<string, Fingerprint> = {};
  for (const p of probes) {
    const o = byUserAgent.get(p.userAgent);
    if (p.ownFingerprint && o) userAgentChecks[p.key] = o.fingerprint;
  }

  const sitemap = sitemapOutcome as Outcome | null;
  const hasSitemap = sitemapsInRobots || sitemap?.response?.status === 200;
  const result: AiAccessResult = { domain, status: statusOf(http, robots), checkedAt, http, robots, hasSitemap };
  const diagnostics = { robotsCheck, userAgentChecks };
  const sitemapInfo: SitemapInfo = sitemapsInRobots
    ? { source: 'robots', status: null }
    : { source: 'sitemap.xml', status: sitemap?.fingerprint.status ?? null, error: sitemap?.fingerprint.error ?? null };
  return { result, diagnostics, log: renderLog(result, diagnostics, crawlers, sitemapInfo, policy.kind) };
}

function sameHost(a: string, b: string): boolean {
  try {
    return new URL(a).host === new URL(b).host;
  } catch {
    return true;
  }
}

// ---------------------------------------------------------------------------
// Ticket

type SitemapInfo = { source: 'robots' | 'sitemap.xml' | 'none'; status: number | null; error?: string | null };

const yn = (b: boolean) => (b ? 'yes' : 'NO');

function fingerprintLine(label: string, fp: Fingerprint): string {
  const cdn = Object.entries(fp.headers)
    .map(([k, v]) => `${k}=${v}`)
    .join(' ');
  return [
    label.padEnd(34),
    `status=${fp.status ?? '-'}`,
    `error=${fp.error ?? '-'}`,
    `duration=${fp.duration_ms}ms`,
    `at=${fp.checked_at}`,
    `url=${fp.url}`,
    `cdn=[${cdn}]`,
  ].join('  ');
}

function renderLog(
  result: AiAccessResult,
  diagnostics: AiAccessDiagnostics,
  crawlers: AiCrawlers | null,
  sitemap: SitemapInfo | null,
  robotsKind?: RobotsPolicy['kind'],
): string {
  const lines: string[] = [];
  lines.push('AI access check');
  lines.push(`Domain:     ${result.domain}`);
  lines.push(`Status:     ${result.status}`);
  lines.push(`Checked at: ${result.checkedAt}`);
  const robotsNote =
    robotsKind === 'parsed'
      ? 'parsed'
      : robotsKind === 'allow-all'
        ? 'not available: everything allowed'
        : robotsKind === 'disallow-all'
          ? 'unreachable: everything disallowed'
          : `domain failed (${diagnostics.robotsCheck.error ?? '-'}): no further request made`;
  lines.push(`robots.txt: ${robotsNote}`);
  let sitemapNote = 'not checked';
  if (sitemap?.source === 'robots') sitemapNote = 'Sitemap: line in robots.txt';
  else if (sitemap?.source === 'sitemap.xml') sitemapNote = `/sitemap.xml answered ${sitemap.status ?? sitemap.error ?? '-'}`;
  lines.push(`Sitemap:    ${result.hasSitemap ? 'yes' : 'no'} (${sitemapNote})`);
  lines.push('');
  lines.push(`${'engine'.padEnd(12)}${'conversational'.padEnd(20)}training`);
  lines.push(`${''.padEnd(12)}${'robots  http'.padEnd(20)}robots  http`);
  for (const id of ENGINE_IDS) {
    const r = result.robots[id];
    const h = result.http[id];
    lines.push(
      `${id.padEnd(12)}${`${yn(r.conversational).padEnd(8)}${yn(h.conversational)}`.padEnd(20)}${yn(r.training).padEnd(8)}${yn(h.training)}`,
    );
  }
  if (crawlers) {
    const notes: string[] = [];
    for (const id of ENGINE_IDS) {
      for (const kind of AGENT_KINDS) {
        const k = crawlers.engines[id][kind];
        if (k.undocumented) notes.push(`${id} ${kind}: no documented agent; robots "*" group and aivis' own User-Agent (${id}.default)`);
        for (const a of k.agents) if (a.userAgent === null) notes.push(`${id} ${kind}: ${a.token} is a robots token only; HTTP via ${a.fetchedBy}`);
      }
    }
    if (notes.length) {
      lines.push('');
      lines.push(...notes.map((n) => `note: ${n}`));
    }
  }
  lines.push('');
  lines.push('Fetches:');
  lines.push(fingerprintLine('robots.txt', diagnostics.robotsCheck));
  for (const [key, fp] of Object.entries(diagnostics.userAgentChecks)) lines.push(fingerprintLine(key, fp));
  return `${lines.join('\n')}\n`;
}
