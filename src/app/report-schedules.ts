import { z } from 'zod';
import type { CommandContext } from '../../commands/handle';
import { requestEmail } from '../../commands/email/request-email';
import { createReportOnce } from '../../commands/reports/report';
import * as scheduleCommands from '../../commands/reports/schedule';
import { type CreateReportSchedule, type Frequency, REPORT_SCHEDULE_NOT_FOUND, type UpdateReportSchedule } from '../../commands/reports/schedule';
import * as reportQueries from '../../queries/reports/reports';
import type { ActiveSchedule } from '../../queries/reports/reports';
import type { ReportScheduleView, ReportSnapshot } from '../../queries/reports/views';
import { utcDay } from '../domain/dates';
import { DomainErrorException, notFound } from '../domain/errors';
import { SYSTEM_ACTOR } from '../domain/events';
import type { Need, Principal } from '../domain/principal';
import { Uuid } from '../domain/schemas';
import { problemLog } from './problem';
import { type AppDeps, type Caller, commandContextOf, dbOf, orFail, type Reads, settled, websiteFor, writeThenRead } from './context';
import { reportUrlOf, snapshotOf } from './reports';
import { cutText } from '../domain/text';

/**
 * Report schedules (CONTRACT.md "Website reports (extension)"): each weekly or monthly period that ends, its report
 * is made and mailed through the outbox to every recipient, once per (schedule, period) whoever sends it.
 */
const READS: Reads = ['reports'];
const VIEW: Need = { category: 'analytics', level: 'view' };
const EDIT: Need = { category: 'analytics', level: 'edit' };
const DAY_MS = 86_400_000;
/** A claim older than this whose report was not mailed: its instance died, another takes the period over. */
export const CLAIM_TAKEOVER_MS = 5 * 60_000;

export const ReportScheduleParams = z.object({ schedule_id: Uuid });

const readSchedule = (c: Caller, id: string) => () => reportQueries.getSchedule(dbOf(c), c.principal.organizationId, id);
const unique = (emails: string[]) => [...new Set(emails)];

async function mine(c: Caller, id: string, need: Need, allow: { paused?: boolean; deleted?: boolean }): Promise<ReportScheduleView> {
  const r = await readSchedule(c, id.toLowerCase())();
  if (!r) throw new DomainErrorException(notFound(REPORT_SCHEDULE_NOT_FOUND));
  await websiteFor(c, r.website_id, need, allow);
  return r;
}

export async function createReportSchedule(c: Caller, input: CreateReportSchedule) {
  const w = await websiteFor(c, input.website_id, EDIT);
  const schedule = await writeThenRead(
    c,
    scheduleCommands.createReportSchedule(commandContextOf(c, w.id), { ...input, website_id: w.id, recipients: unique(input.recipients) }),
    READS,
    ({ id }) => readSchedule(c, id)(),
  );
  return { schedule };
}

export async function listReportSchedules(c: Caller, websiteId: string) {
  const w = await websiteFor(c, websiteId, VIEW);
  return { schedules: await reportQueries.listSchedules(dbOf(c), w.id) };
}

export async function getReportSchedule(c: Caller, id: string) {
  return { schedule: await mine(c, id, VIEW, { paused: true }) };
}

export async function updateReportSchedule(c: Caller, id: string, input: UpdateReportSchedule) {
  const r = await mine(c, id, EDIT, { paused: true });
  const patch = { ...input, recipients: input.recipients && unique(input.recipients) };
  const schedule = await writeThenRead(
    c,
    scheduleCommands.updateReportSchedule(commandContextOf(c, r.website_id), r.id, patch),
    READS,
    readSchedule(c, r.id),
  );
  return { schedule };
}

export async function deleteReportSchedule(c: Caller, id: string): Promise<void> {
  const r = await mine(c, id, EDIT, { paused: true, deleted: true });
  await settled(c.deps, scheduleCommands.deleteReportSchedule(commandContextOf(c, r.website_id), r.id), READS);
}

// ---- sending ----

export interface Period {
  /** `weekly:<monday>` or `monthly:<yyyy-mm>` */
  key: string;
  start_date: string;
  end_date: string;
}

/**
 * The last period that has ended by `now` (weeks Monday to Sunday, calendar months; UTC), if it ended on or after the
 * day the schedule was made: a period found late (the server was down) is still the one due.
 */
export function duePeriod(frequency: Frequency, createdAt: Date, now: Date): Period | null {
  const today = Date.parse(`${utcDay(now)}T00:00:00Z`);
  let start: number;
  let end: number;
  if (frequency === 'weekly') {
    const monday = today - ((new Date(today).getUTCDay() + 6) % 7) * DAY_MS;
    start = monday - 7 * DAY_MS;
    end = monday - DAY_MS;
  } else {
    const d = new Date(today);
    start = Date.UTC(d.getUTCFullYear(), d.getUTCMonth() - 1, 1);
    end = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1) - DAY_MS;
  }
  const endDay = utcDay(new Date(end));
  if (endDay < utcDay(createdAt)) return null;
  const startDay = utcDay(new Date(start));
  return { key: frequency === 'weekly' ? `weekly:${startDay}` : `monthly:${startDay.slice(0, 7)}`, start_date: startDay, end_date: endDay };
}

/** The organization's own work on one website, done by the system: as a key scoped to that website (the reads check no plan). */
const systemCaller = (deps: AppDeps, s: ActiveSchedule): Caller => {
  const principal: Principal = {
    organizationId: s.organization_id,
    apiKeyId: null,
    userId: null,
    websiteIds: [s.website_id],
    partner: false,
    plan: 'enterprise',
    features: [],
  };
  return { deps, principal };
};

const cut = (s: string) => cutText(s, 200);

/** The email's tables: the report's numbers, bounded as the template's schema bounds them. */
const emailParams = (snapshot: ReportSnapshot, frequency: Frequency, period: Period, reportUrl: string) => ({
  website: cut(snapshot.website.name),
  frequency,
  start_date: period.start_date,
  end_date: period.end_date,
  report_url: reportUrl,
  responses: snapshot.responses,
  rates: snapshot.rates.slice(0, 50).map((r) => ({ name: cut(r.name), is_self: r.is_self, mention_rate: r.mention_rate, ci95: r.ci95 })),
  comparison: snapshot.comparison
    .slice(0, 50)
    .map((r) => ({ name: cut(r.name), current: r.current, previous: r.previous, change: r.change, verdict: r.verdict })),
  sources: snapshot.sources.slice(0, 20).map((r) => ({ domain: cut(r.domain), retrieved: r.retrieved, cited: r.cited })),
});

/**
 * One schedule's due period: claimed on the schedule's stream (one instance wins the period), its report made with
 * the claimed id (once), each recipient's email asked of the outbox under a key of the report and address (once),
 * then the period marked sent. Every step is idempotent, so a claim whose instance died is finished by another.
 * Answers whether this call finished the period.
 */
async function sendPeriod(deps: AppDeps, s: ActiveSchedule, period: Period, now: Date): Promise<boolean> {
  const ctx: CommandContext = {
    store: deps.rt.store,
    organizationId: s.organization_id,
    websiteId: s.website_id,
    actor: SYSTEM_ACTOR,
    now: () => now,
  };
  const { claim, claimed } = orFail(await scheduleCommands.claimPeriod(ctx, s.id, period)).result;
  if (!claim || claim.sent) return false;
  // another instance holds a fresh claim: it is sending
  if (!claimed && now.getTime() - Date.parse(claim.claimed_at) < CLAIM_TAKEOVER_MS) return false;
  const c = systemCaller(deps, s);
  const w = await websiteFor(c, s.website_id, VIEW);
  const snapshot = await snapshotOf(c, w, claim.start_date, claim.end_date);
  const title = `${w.name}: ${s.frequency} report, ${claim.start_date} to ${claim.end_date}`;
  const { created } = orFail(
    await createReportOnce(ctx, claim.report_id, {
      website_id: w.id,
      title: cut(title),
      start_date: claim.start_date,
      end_date: claim.end_date,
      snapshot,
    }),
  ).result;
  if (created) {
    const params = emailParams(created.snapshot as ReportSnapshot, s.frequency, period, reportUrlOf(deps, created.token));
    for (const to of s.recipients) {
      orFail(await requestEmail(ctx, { template: 'scheduled_report', to, key: `report-${claim.report_id}-${to}`, params }));
    }
  }
  orFail(await scheduleCommands.markPeriodSent(ctx, s.id, period.key, created ? s.recipients.length : 0));
  return true;
}

/**
 * One pass over every schedule of an active website: the period due now, unless it was sent. A schedule that fails
 * is logged and retried on the next pass; the others go on. Answers the schedules this pass sent.
 */
export async function sendDueReports(deps: AppDeps, now: Date = new Date()): Promise<string[]> {
  const sent: string[] = [];
  for (const s of await reportQueries.activeSchedules(deps.rt.database.db)) {
    const period = duePeriod(s.frequency, new Date(s.created_at), now);
    if (!period || s.last_sent?.period === period.key) continue;
    try {
      if (await sendPeriod(deps, s, period, now)) sent.push(s.id);
    } catch (err) {
      deps.rt.logger.error({ ...problemLog(err), schedule_id: s.id, period: period.key }, 'scheduled report not sent');
    }
  }
  return sent;
}
