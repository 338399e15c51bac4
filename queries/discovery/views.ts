import { z } from 'zod';

export const DiscoveryRunView = z.object({
  run_id: z.string(),
  /** extension: the website the run is for */
  website_id: z.string(),
  name: z.string(),
  status: z.enum(['queued', 'running', 'succeeded', 'failed']),
  sources: z.array(z.string()),
  locale: z.string(),
  country: z.string(),
  prompt_count_min: z.number().int(),
  prompt_count_max: z.number().int(),
  created_at: z.string(),
  completed_at: z.string().nullable(),
  prompts: z.array(z.object({ text: z.string(), topic: z.string().nullable(), source: z.string() })),
  unavailable_sources: z.array(z.object({ source: z.string(), reason: z.string() })),
  /** extension: indices of `prompts` accepted so far */
  accepted_indices: z.array(z.number().int()),
  /** extension: why a failed run failed (null otherwise) */
  error: z.string().nullable(),
});
export type DiscoveryRunView = z.infer<typeof DiscoveryRunView>;

export const DiscoveryRunAnswer = z.object({ run: DiscoveryRunView });
export const DiscoveryRunsView = z.object({ runs: z.array(DiscoveryRunView) });
export type DiscoveryRunsView = z.infer<typeof DiscoveryRunsView>;

/** POST …/runs/{id}/accept: the prompts made, by index (an index accepted before answers its prompt again). */
export const DiscoveryAcceptView = z.object({
  run_id: z.string(),
  prompts: z.array(z.object({ index: z.number().int(), prompt_id: z.string(), text: z.string(), topic_id: z.string().nullable() })),
});
export type DiscoveryAcceptView = z.infer<typeof DiscoveryAcceptView>;
