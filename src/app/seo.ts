import { isIP } from 'node:net';
import { z } from 'zod';
import { requestSeoRecommendations, SEO_OUTSTANDING, type SeoRequest } from '../../commands/seo/request-recommendations';
import { getSeoJob } from '../../queries/seo/jobs';
import { hasFeature } from '../../queries/organizations/organizations';
import type { SeoJobView, SeoSubmittedView } from '../../queries/seo/views';
import { parseDraft, parseHtmlPage, type SeoPage } from '../analysis/seo';
import { type DomainError, DomainErrorException, forbidden, invalid, notFound } from '../domain/errors';
import type { Feature } from '../domain/events';
import { Text, text, Uuid } from '../domain/schemas';
import { spendBudgets } from '../limits/budgets';
import { isPublicAddress, SafeFetchError } from '../net/safe-fetch';
import { type AppDeps, type Caller, commandContextOf, dbOf, websiteFor, written } from './context';
import { ProblemError } from './problem';

/**
 * SEO recommendations (spec, "SEO recommendations" and its row in "Limits"; CONTRACT.md): a draft or a public HTTPS
 * page submitted as a job, polled by its id. Budgets are counted in Postgres (every instance shares them); the
 * organization's `seo_recommendations` entitlement is read through a cache that outlives a failing check for a while.
 */

export const SEO_NOT_ENABLED = 'SEO recommendations are not enabled for this organization';
export const ENTITLEMENT_UNAVAILABLE = 'The entitlement check is unavailable; try again shortly';
export const NOT_PUBLIC_HTTPS = 'url: must be a public HTTPS URL';

/** Whether an organization has a feature: the source the cache asks (a read of the organizations read model by default). */
export type EntitlementCheck = (organizationId: string, feature: Feature) => Promise<boolean>;

/**
 * An organization's entitlements as last checked: an answer younger than `healthyMs` (15 minutes) is used as it is;
 * an older one is checked again, and while that check fails it is still used up to `staleMs` (one hour) past its
 * healthy life. No answer to fall back on and a failing check: 500, and nothing is done.
 */
export class EntitlementCache {
  private readonly entries = new Map<string, { allowed: boolean; at: number }>();
  constructor(
    private readonly check: EntitlementCheck,
    private readonly now: () => number = Date.now,
    readonly healthyMs = 15 * 60_000,
    readonly staleMs = 60 * 60_000,
  ) {}

  async allowed(organizationId: string, feature: Feature): Promise<boolean> {
    const key = `${organizationId}:${feature}`;
    const seen = this.entries.get(key);
    const t = this.now();
    if (seen && t - seen.at < this.healthyMs) return seen.allowed;
    try {
      const allowed = await this.check(organizationId, feature);
      this.entries.set(key, { allowed, at: t });
      return allowed;
    } catch {
      if (seen && t - seen.at < this.healthyMs + this.staleMs) return seen.allowed;
      throw new ProblemError(500, ENTITLEMENT_UNAVAILABLE);
    }
  }
}

/** Options of the SEO area (tests: a failing entitlement check, a clock, other budgets). */
export interface SeoOptions {
  entitlements?: EntitlementCache;
  /** requests per minute per organization, submissions and polls together (default 60) */
  organizationPerMinute?: number;
  /** submissions per minute per website (default 120) */
  websitePerMinute?: number;
  /** jobs not yet ended per website (default 1,000) */
  outstandingPerWebsite?: number;
}

const caches = new WeakMap<AppDeps, EntitlementCache>();
function entitlementsOf(deps: AppDeps): EntitlementCache {
  if (deps.seo?.entitlements) return deps.seo.entitlements;
  let c = caches.get(deps);
  if (!c) {
    const db = deps.rt.database.db;
    c = new EntitlementCache((org, feature) => hasFeature(db, org, feature));
    caches.set(deps, c);
  }
  return c;
}

async function entitled(c: Caller): Promise<void> {
  if (!(await entitlementsOf(c.deps).allowed(c.principal.organizationId, 'seo_recommendations')))
    throw new DomainErrorException(forbidden(SEO_NOT_ENABLED));
}

const organizationBudget = (c: Caller) => ({
  budget: { name: 'seo-org', limit: c.deps.seo?.organizationPerMinute ?? 60, windowSeconds: 60 },
  scope: c.principal.organizationId,
});

const DraftInput = z.strictObject({
  title: text().min(1, 'must not be empty').max(300, 'must be at most 300 characters').describe('The draft title'),
  body: text().min(1, 'must not be empty').max(100_000, 'must be at most 100000 characters').describe('The draft body: HTML or Markdown'),
});

export const SubmitSeoRecommendations = z.strictObject({
  website_id: Uuid.describe('The website (brand) id'),
  request_id: text()
    .min(1, 'must not be empty')
    .max(255, 'must be at most 255 characters')
    .describe('Your id for this request: the same id and input answer the same job'),
  url: Text.max(2048, 'must be at most 2048 characters').optional().describe('A public HTTPS page to review'),
  draft: DraftInput.optional().describe('A draft to review instead of a page'),
});
/** url or draft, exactly one (checked after the schema: the input walker builds each on its own) */
export const URL_OR_DRAFT = 'url: give url or draft, exactly one';
export type SubmitSeoRecommendations = z.output<typeof SubmitSeoRecommendations>;

/** A public HTTPS URL, or the 400 that names it: other schemes, credentials, IP literals of private ranges. */
function publicHttpsUrl(raw: string): URL {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new DomainErrorException(invalid(NOT_PUBLIC_HTTPS));
  }
  if (u.protocol !== 'https:' || u.username || u.password || !u.hostname) throw new DomainErrorException(invalid(NOT_PUBLIC_HTTPS));
  const host = u.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host) && !isPublicAddress(host)) throw new DomainErrorException(invalid(NOT_PUBLIC_HTTPS));
  if (!isIP(host) && (!host.includes('.') || /\.(local|localhost|internal)$/i.test(host) || host.toLowerCase() === 'localhost'))
    throw new DomainErrorException(invalid(NOT_PUBLIC_HTTPS));
  u.hash = '';
  return u;
}

/** The page behind a URL, through the safe fetcher: a private address is the URL's fault (400), as is a page that does not answer. */
async function fetchPage(deps: AppDeps, u: URL): Promise<SeoPage | DomainError> {
  const target = deps.outbound.baseUrl ? `${deps.outbound.baseUrl(u.host)}${u.pathname}${u.search}` : u.href;
  try {
    const res = await deps.outbound.fetch(target, { timeoutMs: 10_000, maxBytes: 2 * 1024 * 1024, headers: { accept: 'text/html,*/*;q=0.5' } });
    if (res.status < 200 || res.status > 299) return invalid(`url: the page answered ${res.status}`);
    return parseHtmlPage(res.body);
  } catch (err) {
    if (err instanceof SafeFetchError) {
      if (err.code === 'BLOCKED_ADDRESS' || err.code === 'BAD_URL') return invalid(NOT_PUBLIC_HTTPS);
      return invalid(`url: the page could not be fetched (${err.code})`);
    }
    throw err;
  }
}

export async function submitSeoRecommendations(c: Caller, input: SubmitSeoRecommendations): Promise<SeoSubmittedView> {
  if ((input.url === undefined) === (input.draft === undefined)) throw new DomainErrorException(invalid(URL_OR_DRAFT));
  const site = await websiteFor(c, input.website_id, { category: 'content', level: 'manage' });
  const url = input.url !== undefined ? publicHttpsUrl(input.url) : null;
  await spendBudgets(c.deps.limiter, [
    organizationBudget(c),
    { budget: { name: 'seo-website', limit: c.deps.seo?.websitePerMinute ?? 120, windowSeconds: 60 }, scope: site.id },
  ]);
  await entitled(c);
  const req: SeoRequest = { website_id: site.id, request_id: input.request_id, url: url?.href ?? null, draft: input.draft ?? null };
  const admitted = await written(
    c.deps,
    requestSeoRecommendations(commandContextOf(c, site.id), dbOf(c), req, async () => (url ? fetchPage(c.deps, url) : parseDraft(input.draft!)), {
      ...SEO_OUTSTANDING,
      limit: c.deps.seo?.outstandingPerWebsite ?? SEO_OUTSTANDING.limit,
    }),
    ['seo'],
  );
  // a new job is answered as admitted (CONTRACT: "queued"), even if a worker already took it; a repeat as it stands
  if (!admitted.replayed) return { job_id: admitted.job_id, status: 'queued' };
  const job = await getSeoJob(dbOf(c), c.principal.organizationId, site.id, admitted.job_id);
  return { job_id: admitted.job_id, status: job?.status ?? 'queued' };
}

export async function getSeoRecommendations(c: Caller, jobId: string, websiteId: string): Promise<SeoJobView> {
  const site = await websiteFor(c, websiteId, { category: 'content', level: 'view' });
  await spendBudgets(c.deps.limiter, [organizationBudget(c)]);
  await entitled(c);
  const job = await getSeoJob(dbOf(c), c.principal.organizationId, site.id, jobId);
  if (!job) throw new DomainErrorException(notFound('Job not found'));
  return job;
}
