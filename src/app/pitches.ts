import { type CreatePitch, PITCH_ALLOWANCE, PITCH_NOT_ENABLED, PITCH_REQUESTS, requestPitch } from '../../commands/pitches/request-pitch';
import { allowanceUsage } from '../../queries/allowances/usage';
import * as pitchesQueries from '../../queries/pitches/pitches';
import { pitchByToken, pitchHandle } from '../../queries/pitches/pitches';
import { pitchAllowance } from '../../queries/organizations/organizations';
import type { PitchAdmittedView, PitchListView, PitchPageData, PitchReportView, PitchUsageView } from '../../queries/pitches/views';
import { DomainErrorException, forbidden, invalid, notFound } from '../domain/errors';
import { isUuid } from '../domain/ids';
import { authorize, isUser, requireGlobal } from '../domain/principal';
import { spendBudgets } from '../limits/budgets';
import { monthOf } from '../../commands/allowances/allowance';
import { type AppDeps, type Caller, commandContextOf, dbOf, readWritten, written } from './context';

/**
 * Pitch reports (spec, "Pitch reports"; CONTRACT.md): creation and reading need a global key (Authentication 4).
 * Creation is admitted once per Idempotency-Key (commands/pitches/request-pitch.ts) within the organization's
 * allowance, 3 reports processing and 10 requests per minute; the pitch worker (src/workers/pitch.ts) does the rest.
 */

export const INVALID_PITCH_ID = 'Invalid pitch ID format';
export const PITCH_NOT_FOUND = 'Pitch not found';
export const IDEMPOTENCY_KEY_REQUIRED = 'Idempotency-Key is required';

/**
 * Pitch creation and reading are global-only (spec, Authentication 4): a scoped key gets 403 'Forbidden: global API
 * key required'; a signed-in user needs the whole organization and its `organization` category at `level`.
 */
function globalOnly(c: Caller, level: 'view' | 'manage'): void {
  requireGlobal(c.principal);
  if (isUser(c.principal)) authorize(c.principal, { category: 'organization', level });
}

export const reportUrlOf = (deps: AppDeps, token: string) => `${deps.rt.config.publicBaseUrl}/r/${token}`;

/** The organization's pitch allowance per UTC month (org:create --pitch-allowance). */
async function allowanceOf(c: Caller): Promise<number> {
  return pitchAllowance(dbOf(c), c.principal.organizationId);
}

export interface PitchAdmission {
  /** 202 while the report is processing (a new one, or the key's one still under way), 200 once it has ended */
  status: 200 | 202;
  body: PitchAdmittedView;
}

/** POST /api/v1/pitches and create_pitch. */
export async function createPitch(c: Caller, input: CreatePitch, key: string | undefined): Promise<PitchAdmission> {
  globalOnly(c, 'manage');
  if (!c.principal.features.includes('pitch')) throw new DomainErrorException(forbidden(PITCH_NOT_ENABLED));
  if (key === undefined) throw new DomainErrorException(invalid(IDEMPOTENCY_KEY_REQUIRED));
  await spendBudgets(c.deps.limiter, [{ budget: PITCH_REQUESTS, scope: c.principal.organizationId }]);
  const admission = { key, db: dbOf(c), allowance: await allowanceOf(c), models: c.deps.rt.config.pitchModels };
  const admitted = await written(c.deps, requestPitch(commandContextOf(c), input, admission), ['pitches']);
  const handle = await readWritten(() => pitchHandle(dbOf(c), c.principal.organizationId, admitted.pitch_id));
  return {
    status: handle.status === 'processing' ? 202 : 200,
    body: { pitch_id: admitted.pitch_id, status: handle.status, report_url: reportUrlOf(c.deps, handle.report_token) },
  };
}

/** GET /api/v1/pitches/{pitch_id} and get_pitch. */
export async function getPitch(c: Caller, pitchId: string): Promise<PitchReportView> {
  globalOnly(c, 'view');
  if (!isUuid(pitchId)) throw new DomainErrorException(invalid(INVALID_PITCH_ID));
  const report = await pitchesQueries.getPitch(dbOf(c), c.principal.organizationId, pitchId.toLowerCase());
  if (!report) throw new DomainErrorException(notFound(PITCH_NOT_FOUND));
  return report;
}

/** GET /api/v1/pitches and list_pitches (extension). */
export async function listPitches(c: Caller, page: { page_num: number; page_size: number }): Promise<PitchListView> {
  globalOnly(c, 'view');
  return pitchesQueries.listPitches(dbOf(c), c.principal.organizationId, page, (t) => reportUrlOf(c.deps, t));
}

/** GET /api/v1/pitches/usage (extension): the current UTC month's allowance. */
export async function pitchUsage(c: Caller): Promise<PitchUsageView> {
  globalOnly(c, 'view');
  const now = new Date();
  const period = monthOf(now);
  const start = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
  const end = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
  const usage = await allowanceUsage(dbOf(c), c.principal.organizationId, PITCH_ALLOWANCE, period);
  return { used: usage.used, limit: await allowanceOf(c), period_start: start.toISOString(), period_end: end.toISOString() };
}

/** The public report page's data: anyone with the token (report_url) may read it. */
export async function reportPageData(deps: AppDeps, token: string): Promise<PitchPageData | undefined> {
  if (!/^[A-Za-z0-9_-]{16,64}$/.test(token)) return undefined;
  return pitchByToken(deps.rt.database.db, token);
}
