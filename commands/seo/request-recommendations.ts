import type { Knex } from 'knex';
import type { SeoPage } from '../../src/analysis/seo';
import { type DomainError, isDomainError } from '../../src/domain/errors';
import { deterministicId } from '../../src/domain/ids';
import { jobStream } from '../../src/domain/jobs';
import type { Position } from '../../src/eventstore/port';
import { admitUnderHold, type ConcurrencyLimit } from '../../src/limits/holds';
import type { CommandContext } from '../handle';
import { admitOnce } from '../idempotency/idempotency';

/** The spec's cap on SEO jobs not yet ended per website. */
export const SEO_OUTSTANDING: ConcurrencyLimit = { name: 'seo-outstanding', limit: 1000, retryAfterSeconds: 30 };
export const SEO_REQUEST_CONFLICT = 'request_id reused with a different request';

export interface SeoRequest {
  website_id: string;
  request_id: string;
  /** the normalized URL (public HTTPS), or null for a draft */
  url: string | null;
  draft: { title: string; body: string } | null;
}

export interface SeoAdmitted {
  job_id: string;
  replayed: boolean;
  position: Position | null;
}

/**
 * Admits an SEO recommendations job once per request_id (within the organization): same input → the same job, other
 * input → 409. A new job takes one of the website's 1,000 outstanding places (429 past it; the job's end gives it
 * back), then its page is read (`page`: the fetch of a URL, which may refuse it) and its stream opened by the request.
 */
export async function requestSeoRecommendations(
  ctx: CommandContext,
  db: Knex,
  input: SeoRequest,
  page: () => Promise<SeoPage | DomainError>,
  outstanding: ConcurrencyLimit = SEO_OUTSTANDING,
): Promise<SeoAdmitted | DomainError> {
  const job = { ...ctx, websiteId: input.website_id };
  const r = await admitOnce(job, {
    scope: 'seo',
    key: input.request_id,
    input: { website_id: input.website_id, url: input.url, draft: input.draft },
    conflictMessage: SEO_REQUEST_CONFLICT,
    streamOf: (id) => jobStream('seo', id),
    async admit(jobId) {
      const p = await admitUnderHold(db, outstanding, input.website_id, jobId, jobStream('seo', jobId), page);
      if (isDomainError(p)) return p;
      return [
        {
          id: deterministicId('seo-requested', jobId),
          type: 'SeoRecommendationsRequested',
          data: {
            job_id: jobId,
            website_id: input.website_id,
            request_id: input.request_id,
            source: input.url ? 'url' : 'draft',
            url: input.url,
            page: p,
          },
        },
      ];
    },
  });
  return isDomainError(r) ? r : { job_id: r.resultId, replayed: r.replayed, position: r.position };
}
