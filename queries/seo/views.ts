import { z } from 'zod';
import { catalogue } from '../../src/domain/events';

export const SeoJobStatus = z.enum(['queued', 'running', 'succeeded', 'failed']);

/** A recommendation as the job produced it; a `facts` one shows its fact's text, read when polled, as the excerpt (jobs.ts). */
export const SeoRecommendationView = catalogue.SeoRecommendationsProduced.shape.recommendations.element.omit({ fact_id: true });

/** GET /api/v1/seo/recommendations/{job_id} (CONTRACT.md). */
export const SeoJobView = z.object({
  job_id: z.string(),
  status: SeoJobStatus,
  created_at: z.string(),
  completed_at: z.string().nullable(),
  recommendations: z.array(SeoRecommendationView),
  error: z.string().nullable(),
});
export type SeoJobView = z.infer<typeof SeoJobView>;

/** POST /api/v1/seo/recommendations: 202 with the job (a repeated request_id answers the same job, as it stands). */
export const SeoSubmittedView = z.object({ job_id: z.string(), status: SeoJobStatus });
export type SeoSubmittedView = z.infer<typeof SeoSubmittedView>;
