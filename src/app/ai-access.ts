import { z } from 'zod';
import type * as aiAccessAnalysis from '../analysis/ai-access';
import { checkAiAccess, parseDomainInput } from '../analysis/ai-access';
import { ENGINE_IDS } from '../analysis/ai-crawlers';
import { DomainErrorException, invalid, rateLimited } from '../domain/errors';
import { text } from '../domain/schemas';
import type { RateLimiter } from '../limits/rate';
import type { AppDeps, Caller } from './context';

/**
 * The AI access check: can answer engines' crawlers read a domain? Not a read model: it fetches the domain (through
 * the safe outbound fetcher) on a budget, so it lives here rather than in queries/.
 */

/** 30 checks per minute per organization, shared by REST and the authenticated MCP tool. */
export const ORG_CHECKS_PER_MIN = 30;
/** 5 scans per minute per hashed client address for the public MCP tool. */
export const PUBLIC_SCANS_PER_MIN = 5;

export const orgLimitKey = (organizationId: string) => `ai-access:org:${organizationId}`;
export const publicLimitKey = (hashedAddress: string) => `ai-access:public:${hashedAddress}`;

export const AiAccessCheckBody = z
  .object({
    domain: text().describe(
      'A public domain such as example.com (an http:// or https:// prefix is dropped); no path, credentials, port or IP address',
    ),
  })
  .strict();
export type AiAccessCheckBody = z.output<typeof AiAccessCheckBody>;

const Flags = z.object({ conversational: z.boolean(), training: z.boolean() }).strict();
const EngineFlags = z.object(Object.fromEntries(ENGINE_IDS.map((id) => [id, Flags])) as Record<(typeof ENGINE_IDS)[number], typeof Flags>).strict();

/** One fetch: HTTP status (null when no answer), the CDN-related headers present, error code, duration, UTC time. */
export const Fingerprint = z
  .object({
    url: z.string(),
    status: z.number().int().nullable(),
    headers: z.record(z.string(), z.string()),
    error: z.string().nullable(),
    duration_ms: z.number().int().nonnegative(),
    checked_at: z.string(),
  })
  .strict();

/** The check's answer (REST and both tools). */
export const AiAccessReport = z
  .object({
    result: z
      .object({
        domain: z.string(),
        status: z.enum(['accessible', 'partial', 'blocked']),
        checkedAt: z.string(),
        http: EngineFlags,
        robots: EngineFlags,
        hasSitemap: z.boolean(),
      })
      .strict(),
    diagnostics: z
      .object({
        robotsCheck: Fingerprint,
        /** `<engine>.<agent token>`, `<engine>.default` for a kind with no documented agent */
        userAgentChecks: z.record(z.string(), Fingerprint),
      })
      .strict(),
    log: z.string(),
  })
  .strict();

// the check's result is exactly what the schema describes
const _documented: z.input<typeof AiAccessReport> = {} as aiAccessAnalysis.AiAccessReport;
void _documented;

/** Takes one unit of a budget or fails with 429 and the seconds to wait. */
async function spend(limiter: RateLimiter, key: string, perMinute: number): Promise<void> {
  const d = await limiter.hit(key, perMinute, 60);
  if (!d.allowed) {
    throw new DomainErrorException(rateLimited(d.retryAfterSeconds));
  }
}

/** The domain, or 400 naming the problem: bad input is refused before it can spend any budget. */
function domainOf(input: AiAccessCheckBody): string {
  const parsed = parseDomainInput(input.domain);
  if ('error' in parsed) throw new DomainErrorException(invalid(parsed.error));
  return parsed.domain;
}

const run = (deps: AppDeps, domain: string): Promise<aiAccessAnalysis.AiAccessReport> =>
  checkAiAccess(domain, { fetch: deps.outbound.fetch, baseUrl: deps.outbound.baseUrl });

/** Any key of the organization, on the organization's budget. */
export async function checkAiAccessFor(c: Caller, input: AiAccessCheckBody): Promise<aiAccessAnalysis.AiAccessReport> {
  const domain = domainOf(input);
  await spend(c.deps.limiter, orgLimitKey(c.principal.organizationId), ORG_CHECKS_PER_MIN);
  return run(c.deps, domain);
}

/** Without an account (the public tool), on the budget of the client's hashed address. */
export async function checkPublicAiAccess(deps: AppDeps, clientHash: string, input: AiAccessCheckBody): Promise<aiAccessAnalysis.AiAccessReport> {
  const domain = domainOf(input);
  await spend(deps.limiter, publicLimitKey(clientHash), PUBLIC_SCANS_PER_MIN);
  return run(deps, domain);
}
