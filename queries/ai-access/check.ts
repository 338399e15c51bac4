import { checkAiAccess, parseDomainInput, type AiAccessReport } from '../../src/analysis/ai-access';
import { DomainErrorException } from '../../src/domain/errors';
import type { Outbound } from '../../src/net/safe-fetch';
import type { RateLimiter } from '../../src/limits/rate';

/** 30 checks per minute per organization, shared by REST and the authenticated MCP tool. */
export const ORG_CHECKS_PER_MIN = 30;
/** 5 scans per minute per hashed client address for the public MCP tool. */
export const PUBLIC_SCANS_PER_MIN = 5;

export const orgLimitKey = (organizationId: string) => `ai-access:org:${organizationId}`;
export const publicLimitKey = (hashedAddress: string) => `ai-access:public:${hashedAddress}`;

/** Takes one unit of a budget or fails with 429 and the seconds to wait. */
export async function spend(limiter: RateLimiter, key: string, perMinute: number): Promise<void> {
  const d = await limiter.hit(key, perMinute, 60);
  if (!d.allowed) {
    throw new DomainErrorException({ kind: 'rate_limited', message: 'Rate limit exceeded', retryAfterSeconds: d.retryAfterSeconds });
  }
}

/** Validates the domain (400 naming the problem) and runs the check through the safe outbound fetcher. */
export async function checkDomain(outbound: Outbound, input: unknown): Promise<AiAccessReport> {
  const parsed = parseDomainInput(input);
  if ('error' in parsed) throw new DomainErrorException({ kind: 'invalid', message: parsed.error });
  return checkAiAccess(parsed.domain, { fetch: outbound.fetch, baseUrl: outbound.baseUrl });
}
