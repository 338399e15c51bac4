import { z } from 'zod';
import { PageInfo } from '../paging';
import { catalogue } from '../../src/domain/events';

export const PitchStatus = z.enum(['processing', 'completed', 'failed']);

const Compiled = catalogue.PitchReportCompiled.shape;

/** The spec's "Pitch report" blocks: GET /api/v1/pitches/{pitch_id} and the MCP get_pitch. */
export const PitchReportView = z.object({
  pitch: z.object({
    id: z.string(),
    /** the bare domain until the home page is read */
    company_name: z.string(),
    company_url: z.string(),
    company_description: z.string(),
    status: PitchStatus,
    created_at: z.string(),
    country: z.string(),
    language: z.string(),
    type: z.literal('pitch_workspace'),
    /** why the home page could not be read (the report then goes on from the bare domain); null when it was read */
    research_note: z.string().nullable(),
  }),
  // the plan's prompts and the compiled report's blocks, as the pitch worker recorded them
  competitors: Compiled.competitors,
  prompts: catalogue.PitchPlanWritten.shape.prompts,
  attributes: Compiled.attributes,
  /** top 10 citing domains by the answers citing them */
  sources: Compiled.sources,
  metrics: Compiled.metrics,
});
export type PitchReportView = z.infer<typeof PitchReportView>;

/** 202 (admitted, or the key's report still processing) or 200 (the key's report has ended). */
export const PitchAdmittedView = z.object({
  pitch_id: z.string(),
  status: PitchStatus.describe('processing until completed or failed: poll get_pitch every 10 seconds'),
  report_url: z.string(),
});
export type PitchAdmittedView = z.infer<typeof PitchAdmittedView>;

export const PitchListItem = z.object({
  id: z.string(),
  company_name: z.string(),
  company_url: z.string(),
  status: PitchStatus,
  created_at: z.string(),
  country: z.string(),
  language: z.string(),
  report_url: z.string(),
});
export const PitchListView = z.object({
  pitches: z.array(PitchListItem),
  ...PageInfo,
});
export type PitchListView = z.infer<typeof PitchListView>;

/** The organization's pitch allowance in the current UTC month. */
export const PitchUsageView = z.object({ used: z.number().int(), limit: z.number().int(), period_start: z.string(), period_end: z.string() });
export type PitchUsageView = z.infer<typeof PitchUsageView>;

/** What the public report page draws: the report, its progress and the per-model figures. */
export interface PitchPageData {
  report: PitchReportView;
  domain: string;
  models: string[];
  answered_models: string[];
  model_stats: { model: string; answers: number; brand_mentions: number }[];
  sentiment: { positive: number; neutral: number; negative: number } | null;
  error: string | null;
}
