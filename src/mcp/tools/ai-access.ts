import {
  AiAccessCheckBody,
  AiAccessReport,
  checkAiAccessFor,
  checkPublicAiAccess,
  ORG_CHECKS_PER_MIN,
  PUBLIC_SCANS_PER_MIN,
} from '../../app/ai-access';
import { tool } from '../tool';

export const aiAccessTools = [
  tool({
    name: 'check_public_ai_access',
    title: 'Check AI crawler access (public)',
    annotations: { readOnlyHint: true, openWorldHint: true },
    description: `Can AI answer engines crawl a domain? Per engine (eight): answer and training access by robots.txt and by HTTP, a sitemap flag and a log. No account needed; ${PUBLIC_SCANS_PER_MIN} scans per minute.`,
    public: true,
    input: AiAccessCheckBody,
    output: AiAccessReport,
    handler: ({ deps, clientHash }, input) => checkPublicAiAccess(deps, clientHash, input),
  }),
  tool({
    name: 'check_ai_access',
    title: 'Check AI crawler access',
    annotations: { readOnlyHint: true, openWorldHint: true },
    description: `Can AI answer engines crawl a domain? Per engine (eight): answer and training access by robots.txt and by HTTP, a sitemap flag and a log. Shares the organization's ${ORG_CHECKS_PER_MIN} checks per minute with REST.`,
    input: AiAccessCheckBody,
    output: AiAccessReport,
    handler: (ctx, input) => checkAiAccessFor(ctx, input),
  }),
];
