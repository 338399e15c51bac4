import type { Knex } from 'knex';
import type { PitchListView, PitchPageData, PitchReportView } from './views';
import { newestFirst, onePageAndMore, pageInfo, pageRows, type PageRequest } from '../paging';
import { iso } from '../timestamps';

const EMPTY_METRICS = { total_responses: 0, brand_mentions: 0, sentiment_score: 0, response_rate: 0 };

interface Row {
  id: string;
  company_name: string | null;
  company_url: string;
  company_description: string | null;
  research_note: string | null;
  status: 'processing' | 'completed' | 'failed';
  created_at: Date;
  country: string;
  language: string;
  domain: string;
  report_token: string;
  competitors: PitchReportView['competitors'];
  prompts: PitchReportView['prompts'];
  attributes: PitchReportView['attributes'];
  sources: PitchReportView['sources'];
  metrics: PitchReportView['metrics'] | null;
  models: string[];
  answered_models: string[];
  model_stats: PitchPageData['model_stats'] | null;
  sentiment: PitchPageData['sentiment'];
  error: string | null;
}

function reportOf(r: Row): PitchReportView {
  return {
    pitch: {
      id: r.id,
      company_name: r.company_name ?? r.domain,
      company_url: r.company_url,
      company_description: r.company_description ?? '',
      status: r.status,
      created_at: iso(r.created_at),
      country: r.country,
      language: r.language,
      type: 'pitch_workspace',
      research_note: r.research_note,
    },
    competitors: r.competitors,
    prompts: r.prompts,
    attributes: r.attributes,
    sources: r.sources,
    metrics: r.metrics ?? EMPTY_METRICS,
  };
}

const live = (db: Knex) => db('rm_pitches').whereNull('deleted_at');

/** One report of the organization; undefined for a missing, deleted or another organization's report. */
export async function getPitch(db: Knex, organizationId: string, pitchId: string): Promise<PitchReportView | undefined> {
  const r: Row | undefined = await live(db).where({ id: pitchId, organization_id: organizationId }).first();
  return r ? reportOf(r) : undefined;
}

/** The report's token and status, for the admission's answer. */
export async function pitchHandle(
  db: Knex,
  organizationId: string,
  pitchId: string,
): Promise<{ status: Row['status']; report_token: string } | undefined> {
  return live(db).where({ id: pitchId, organization_id: organizationId }).first('status', 'report_token');
}

/** The organization's reports, newest first. */
export async function listPitches(db: Knex, organizationId: string, page: PageRequest, reportUrl: (token: string) => string): Promise<PitchListView> {
  const rows = await onePageAndMore(live(db).where('organization_id', organizationId).orderBy(newestFirst('created_at', 'id')), page).select(
    'id',
    'company_name',
    'company_url',
    'domain',
    'status',
    'created_at',
    'country',
    'language',
    'report_token',
  );
  return {
    pitches: pageRows(rows, page).map((r) => ({
      id: r.id,
      company_name: r.company_name ?? r.domain,
      company_url: r.company_url,
      status: r.status,
      created_at: iso(r.created_at),
      country: r.country,
      language: r.language,
      report_url: reportUrl(r.report_token),
    })),
    ...pageInfo(rows, page),
  };
}

/** The public page's data by its token (anyone with the link); undefined for an unknown token. */
export async function pitchByToken(db: Knex, token: string): Promise<PitchPageData | undefined> {
  const r: Row | undefined = await live(db).where('report_token', token).first();
  if (!r) return undefined;
  return {
    report: reportOf(r),
    domain: r.domain,
    models: r.models,
    answered_models: r.answered_models,
    model_stats: r.model_stats ?? [],
    sentiment: r.sentiment,
    error: r.error,
  };
}
