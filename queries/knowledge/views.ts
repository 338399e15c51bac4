import { z } from 'zod';
import { PageInfo } from '../paging';

/** A pillar as the API shows it (spec, Pillar; CONTRACT.md, Knowledge base). */
export const PillarView = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string(),
  status: z.enum(['researching', 'draft', 'published', 'archived']),
  last_researched_at: z.string().nullable(),
  created_at: z.string(),
});
export type PillarView = z.infer<typeof PillarView>;
export const PillarsView = z.object({ pillars: z.array(PillarView) });
export const PillarAnswer = z.object({ pillar: PillarView });
export const CreatePillarAnswer = z.object({ pillar: PillarView, created: z.boolean() });

/** A brand fact (spec, Brand fact; CONTRACT.md, Knowledge base). */
export const FactView = z.object({
  id: z.string(),
  website_id: z.string(),
  /** null: unfiled */
  pillar_id: z.string().nullable(),
  text: z.string(),
  source_url: z.string().nullable(),
  source_quote: z.string().nullable(),
  confidence: z.enum(['high', 'medium', 'low']),
  review_status: z.enum(['pending', 'approved', 'rejected']),
  source_type: z.enum(['manual', 'site', 'web_research', 'upload', 'ai_response', 'oracle']),
  /** the answer it was captured from */
  response_id: z.string().nullable(),
  /** set on a hidden duplicate: the fact with the same text */
  duplicate_of: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type FactView = z.infer<typeof FactView>;
export const FactAnswer = z.object({ fact: FactView });
export const FactsPage = z.object({ facts: z.array(FactView), ...PageInfo });
export type FactsPage = z.infer<typeof FactsPage>;
export const SearchHit = FactView.extend({ rank: z.number() });
export const SearchAnswer = z.object({ facts: z.array(SearchHit) });
export type SearchAnswer = z.infer<typeof SearchAnswer>;
export const PatchFactAnswer = z.object({ fact: FactView, before: FactView });
export const DeleteFactsAnswer = z.object({ success: z.boolean(), deleted_ids: z.array(z.string()), not_found_ids: z.array(z.string()) });
export const ApprovedFacts = z.object({ facts: z.array(FactView), not_approved_ids: z.array(z.string()) });
export type ApprovedFacts = z.infer<typeof ApprovedFacts>;
