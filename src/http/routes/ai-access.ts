import { z } from 'zod';
import { checkDomain, ORG_CHECKS_PER_MIN, orgLimitKey, spend } from '../../../queries/ai-access/check';
import { parseDomainInput } from '../../analysis/ai-access';
import { ENGINE_IDS } from '../../analysis/ai-crawlers';
import { badRequest } from '../errors';
import { text } from '../../domain/schemas';
import { route } from '../route';

export const AiAccessCheckBody = z
  .object({ domain: text().describe('A public domain such as example.com (an http:// or https:// prefix is dropped); no path, credentials, port or IP address') })
  .strict();

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

export const aiAccessRoutes = [
  route({
    method: 'POST',
    url: '/api/v1/ai-access/check',
    summary:
      `Can AI answer engines' crawlers read a domain? For eight engines (${ENGINE_IDS.join(', ')}) and two kinds of agent ` +
      '(conversational: user-triggered fetchers and answer-search indexers; training), `robots` says robots.txt allows every ' +
      'documented agent of that kind to fetch "/", `http` says GET https://<domain>/ with that agent\'s User-Agent answers ' +
      '2xx/3xx. status: accessible = every flag true; blocked = no engine has conversational access (robots and http both ' +
      'true); partial = anything between. A domain that does not resolve or answer is blocked with every flag false and the ' +
      "error code in the fingerprints. Agents come from the vendors' published crawler documentation (infra/ai-crawlers.json); " +
      "a kind with no documented agent is judged by the robots \"*\" group and aivis' own User-Agent (`<engine>.default`). " +
      `Any key of the organization; ${ORG_CHECKS_PER_MIN} checks per minute per organization (429 with Retry-After); ` +
      'an invalid domain is refused with 400 before the budget is spent.',
    tag: 'ai-access',
    body: AiAccessCheckBody,
    responses: { 200: AiAccessReport },
    async handler({ deps, principal, body }) {
      // Validate before spending: a refused domain costs no budget and sends nothing.
      const parsed = parseDomainInput(body.domain);
      if ('error' in parsed) throw badRequest(parsed.error);
      await spend(deps.limiter, orgLimitKey(principal.organizationId), ORG_CHECKS_PER_MIN);
      return checkDomain(deps.outbound, parsed.domain);
    },
  }),
];
