import { parseDomainInput } from '../../analysis/ai-access';
import { badRequest } from '../../http/errors';
import { AiAccessCheckBody } from '../../http/routes/ai-access';
import {
  checkDomain,
  ORG_CHECKS_PER_MIN,
  orgLimitKey,
  PUBLIC_SCANS_PER_MIN,
  publicLimitKey,
  spend,
} from '../../../queries/ai-access/check';
import { tool } from '../tool';

/** Bad input is refused (with REST's message) before it can spend any budget. */
function domainOf(input: { domain: string }): string {
  const parsed = parseDomainInput(input.domain);
  if ('error' in parsed) throw badRequest(parsed.error);
  return parsed.domain;
}

const WHAT =
  'Can AI answer engines crawl a domain (e.g. example.com)? Per engine (eight), conversational and training access over robots.txt and over HTTP, a sitemap flag, fingerprints of each fetch, and a plain-text log.';

export const aiAccessTools = [
  tool({
    name: 'check_public_ai_access',
    title: 'Check AI crawler access (public)',
    annotations: { readOnlyHint: true, openWorldHint: true },
    description: `${WHAT} Needs no account; ${PUBLIC_SCANS_PER_MIN} scans per minute per client address.`,
    public: true,
    input: AiAccessCheckBody,
    async handler({ deps, clientHash }, input) {
      const domain = domainOf(input);
      await spend(deps.limiter, publicLimitKey(clientHash), PUBLIC_SCANS_PER_MIN);
      return checkDomain(deps.outbound, domain);
    },
  }),
  tool({
    name: 'check_ai_access',
    title: 'Check AI crawler access',
    annotations: { readOnlyHint: true, openWorldHint: true },
    description: `${WHAT} Shares the organization's budget of ${ORG_CHECKS_PER_MIN} checks per minute with POST /api/v1/ai-access/check.`,
    input: AiAccessCheckBody,
    async handler({ deps, principal }, input) {
      const domain = domainOf(input);
      await spend(deps.limiter, orgLimitKey(principal.organizationId), ORG_CHECKS_PER_MIN);
      return checkDomain(deps.outbound, domain);
    },
  }),
];
