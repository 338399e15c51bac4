import { z } from 'zod';

export const SeoJobStatus = z.enum(['queued', 'running', 'succeeded', 'failed']);

export const SeoRecommendationView = z.object({
  id: z.string(),
  /** prompt_coverage, competitor_gap, facts, title, meta_description, headings, faq, schema, brand */
  category: z.string(),
  severity: z.enum(['high', 'medium', 'low']),
  title: z.string(),
  detail: z.string(),
  /** the part of the page it concerns; null when it concerns what the page lacks */
  excerpt: z.string().nullable(),
});

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
