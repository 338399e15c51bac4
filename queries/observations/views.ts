import { z } from 'zod';

/** The spec's attribute observation object (rm_observations, named from the website's entities and attributes). */
export const Observation = z.object({
  observation_id: z.string(),
  response_id: z.string(),
  entity_id: z.string(),
  entity_name: z.string(),
  is_website: z.boolean(),
  attribute_id: z.string(),
  attribute_name: z.string(),
  positive: z.boolean(),
  score: z.number().nullable(),
  text_span: z.string(),
  model: z.string(),
  /** the answer's time, UTC, whole seconds: 2026-03-02T08:30:15Z */
  created_at: z.string(),
});
export type Observation = z.infer<typeof Observation>;

export const ObservationPage = z.object({ data: z.array(Observation), page_num: z.number(), page_size: z.number(), has_more: z.boolean() });
export type ObservationPage = z.infer<typeof ObservationPage>;
