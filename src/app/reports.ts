import { z } from 'zod';
import { PlainDay } from '../domain/dates';
import * as reportCommands from '../../commands/reports/report';
import { REPORT_NOT_FOUND } from '../../commands/reports/report';
import { alertsFiredIn } from '../../queries/alerts/alerts';
import * as reportQueries from '../../queries/reports/reports';
import type { ReportPage, ReportSnapshot } from '../../queries/reports/views';
import { DomainErrorException, notFound } from '../domain/errors';
import { MODEL_IDS } from '../domain/models';
import type { Need } from '../domain/principal';
import { label, Uuid, WebsiteId } from '../domain/schemas';
import { getCrawlerActivity } from './crawlers';
import { type AppDeps, type Caller, commandContextOf, dbOf, type Reads, settled, websiteFor, writeThenRead } from './context';
import { getSources } from './evidence';
import { comparePeriods, cumulative, timeSeries } from './metrics';

/** Website reports (CONTRACT.md "Website reports (extension)"): a snapshot of a website's numbers for a period, shared by link. */
const READS: Reads = ['reports'];
const VIEW: Need = { category: 'analytics', level: 'view' };
const DAY_MS = 86_400_000;
export const MAX_REPORT_DAYS = 366;

const Day = PlainDay.refine((d) => d >= '2000-01-01' && d <= '2099-12-31', 'must be between 2000-01-01 and 2099-12-31');

const dayMs = (d: string) => Date.parse(`${d}T00:00:00Z`);
const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);

export const CreateReport = z
  .strictObject({
    website_id: WebsiteId,
    start_date: Day.describe('First UTC day of the period, YYYY-MM-DD'),
    end_date: Day.describe('Last UTC day of the period, YYYY-MM-DD (at most 366 days in all)'),
    title: label(200).optional().describe('The title (default: the website and period)'),
  })
  .superRefine((q, ctx) => {
    if (typeof q.start_date !== 'string' || typeof q.end_date !== 'string') return;
    const days = (dayMs(q.end_date) - dayMs(q.start_date)) / DAY_MS + 1;
    if (days < 1) ctx.addIssue({ code: 'custom', path: ['end_date'], message: `is before start_date (${q.start_date})` });
    else if (days > MAX_REPORT_DAYS)
      ctx.addIssue({ code: 'custom', path: ['end_date'], message: `must be at most ${MAX_REPORT_DAYS} days after start_date` });
  });
export type CreateReport = z.infer<typeof CreateReport>;
export const ReportsQuery = z.strictObject({ website_id: WebsiteId });
export const ReportParams = z.object({ report_id: Uuid });

export const reportUrlOf = (deps: AppDeps, token: string) => `${deps.rt.config.publicBaseUrl}/reports/${token}`;

const interval = (v: [number, number] | null | undefined): [number, number] | null => (v ? [v[0], v[1]] : null);

/** The numbers of the period, read through the same operations the API serves them by (so the page equals the API). */
async function takeSnapshot(c: Caller, websiteId: string, startDay: string, endDay: string): Promise<Omit<ReportSnapshot, 'website'>> {
  const start = new Date(`${startDay}T00:00:00.000Z`);
  const end = new Date(`${endDay}T23:59:59.999Z`);
  const days = (dayMs(endDay) - dayMs(startDay)) / DAY_MS + 1;
  const prevEnd = dayOf(dayMs(startDay) - DAY_MS);
  const prevStart = dayOf(dayMs(startDay) - days * DAY_MS);
  const filters = { start_date: start, end_date: end };
  const [rates, comparison, trend, sources, crawlers, alerts, ...byModel] = await Promise.all([
    cumulative(c, 'mention-rate', websiteId, filters),
    comparePeriods(c, {
      website_id: websiteId,
      metric: 'mention_rate',
      current: { start, end },
      previous: { start: new Date(`${prevStart}T00:00:00.000Z`), end: new Date(`${prevEnd}T23:59:59.999Z`) },
      filters: {},
    }),
    timeSeries(c, 'mention-rate', websiteId, filters),
    getSources(c, { website_id: websiteId, start, end, groupBy: 'domain' }, { page_num: 0, page_size: 10 }),
    getCrawlerActivity(c, { website_id: websiteId, start_date: startDay, end_date: endDay, verification: 'verified', group_by: 'bot' }),
    alertsFiredIn(dbOf(c), websiteId, start, end),
    ...MODEL_IDS.map((m) => cumulative(c, 'share-of-voice', websiteId, { ...filters, models: [m] })),
  ]);
  const rateData = rates.data as Record<
    string,
    { mention_rate: number; is_self: boolean; sample: { mention_rate: { numerator: number; denominator: number; ci95: [number, number] | null } } }
  >;
  const sovData = (r: (typeof byModel)[number]) => r.data as Record<string, { share_of_voice: number; is_self: boolean }>;
  const trendData = trend.data as { date: string; responses: number; metrics: Record<string, { mention_rate: number; is_self: boolean }> }[];
  return {
    previous: { start_date: prevStart, end_date: prevEnd },
    responses: rates.responses,
    rates: Object.entries(rateData).map(([name, v]) => ({
      name,
      is_self: v.is_self,
      mention_rate: v.mention_rate,
      ci95: interval(v.sample.mention_rate.ci95),
      mentions: v.sample.mention_rate.numerator,
      responses: v.sample.mention_rate.denominator,
    })),
    comparison: Object.entries(comparison.data).map(([name, v]) => ({
      name,
      is_self: v.is_self,
      current: v.current,
      previous: v.previous,
      change: v.change,
      change_ci_low: v.change_ci_low,
      change_ci_high: v.change_ci_high,
      verdict: v.verdict,
    })),
    share_of_voice_by_model: byModel
      .map((r, i) => ({
        model: MODEL_IDS[i],
        responses: r.responses,
        entities: Object.entries(sovData(r)).map(([name, v]) => ({ name, is_self: v.is_self, share_of_voice: v.share_of_voice })),
      }))
      .filter((m) => m.responses > 0),
    trend: trendData.map((d) => {
      const self = Object.values(d.metrics).find((m) => m.is_self);
      return { date: d.date.slice(0, 10), responses: d.responses, mention_rate: self ? self.mention_rate : null };
    }),
    sources: sources.data.flatMap((s) => ('domain' in s ? [{ domain: s.domain, retrieved: s.retrieved, cited: s.cited }] : [])),
    crawlers: crawlers.data.map((b) => ({ bot: b.bot, operator: b.operator, hits: b.hits, pages: b.pages, last_seen: b.last_seen })),
    alerts: alerts.map((a) => ({ kind: a.kind, fired_at: a.fired_at, summary: a.summary })),
  };
}

/** POST /api/v1/reports: the snapshot taken now and stored in the report's event. */
/** The website's numbers of a period as a report stores them (its schedule's reports take the same). */
export async function snapshotOf(c: Caller, w: { id: string; name: string; url: string }, startDay: string, endDay: string): Promise<ReportSnapshot> {
  return { website: { name: w.name, url: w.url }, ...(await takeSnapshot(c, w.id, startDay, endDay)) };
}

export async function createReport(c: Caller, input: CreateReport) {
  const w = await websiteFor(c, input.website_id, VIEW);
  const snapshot = await snapshotOf(c, w, input.start_date, input.end_date);
  const title = input.title ?? `${w.name}: ${input.start_date} to ${input.end_date}`;
  const report = await writeThenRead(
    c,
    reportCommands.createReport(commandContextOf(c, w.id), {
      website_id: w.id,
      title,
      start_date: input.start_date,
      end_date: input.end_date,
      snapshot,
    }),
    READS,
    (r) => reportQueries.getReport(dbOf(c), c.principal.organizationId, r.id, (t) => reportUrlOf(c.deps, t)),
  );
  return { report };
}

export async function listReports(c: Caller, websiteId: string) {
  const w = await websiteFor(c, websiteId, VIEW);
  return { reports: await reportQueries.listReports(dbOf(c), w.id, (t) => reportUrlOf(c.deps, t)) };
}

export async function getReport(c: Caller, id: string) {
  const r = await reportQueries.getReport(dbOf(c), c.principal.organizationId, id.toLowerCase(), (t) => reportUrlOf(c.deps, t));
  if (!r) throw new DomainErrorException(notFound(REPORT_NOT_FOUND));
  await websiteFor(c, r.website_id, VIEW, { paused: true });
  return { report: r };
}

/** DELETE /api/v1/reports/{id}: its link answers 404 from then on. */
export async function deleteReport(c: Caller, id: string): Promise<void> {
  const { report } = await getReport(c, id);
  await settled(c.deps, reportCommands.deleteReport(commandContextOf(c, report.website_id), report.id), READS);
}

/** The public page's data: anyone with the token may read it. */
export async function reportPageData(deps: AppDeps, token: string): Promise<ReportPage | undefined> {
  if (!/^[A-Za-z0-9_-]{16,64}$/.test(token)) return undefined;
  return reportQueries.reportByToken(deps.rt.database.db, token);
}
