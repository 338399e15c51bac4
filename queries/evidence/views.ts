import { z } from 'zod';

/** The answer evidence read models' rows as the API answers them (CONTRACT.md, Answer evidence). */

const SourceCounts = {
  /** answers that retrieved it (its cited sources count as retrieved) */
  retrieved: z.number().int(),
  /** answers that cited it */
  cited: z.number().int(),
  /** 100 × answers citing / answers retrieving; null when none retrieved it */
  cited_when_retrieved: z.number().nullable(),
  is_self: z.boolean(),
  /** the competitor's id, the website's id for the brand, null for a third party */
  entity_id: z.string().nullable(),
};
export const SourceRow = z.union([z.object({ domain: z.string(), ...SourceCounts }), z.object({ url: z.string(), ...SourceCounts })]);
export type SourceRow = z.infer<typeof SourceRow>;
export const SourcePage = z.object({ data: z.array(SourceRow), page_num: z.number(), page_size: z.number(), has_more: z.boolean() });
export type SourcePage = z.infer<typeof SourcePage>;

export const SearchQueryRow = z.object({
  query: z.string(),
  answers: z.number().int(),
  models: z.array(z.string()),
  first_seen: z.string(),
  last_seen: z.string(),
});
export const SearchQueryList = z.object({ data: z.array(SearchQueryRow) });
export type SearchQueryList = z.infer<typeof SearchQueryList>;
