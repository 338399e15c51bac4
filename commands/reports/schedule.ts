import { z } from 'zod';
import { type EventsOf, exhaustive, reportScheduleEvents } from '../../src/domain/events';
import { typesOf } from '../../src/domain/event-lists';
import { newId } from '../../src/domain/ids';
import { EmailAddress, Uuid } from '../../src/domain/schemas';
import { type Aggregate, type CommandContext, handle, handleLive, handleNew } from '../handle';

/** One report schedule and the periods it sent, folded from its stream `report-schedule-<id>`. */
export const reportScheduleStream = (scheduleId: string) => `report-schedule-${scheduleId}`;

export const REPORT_SCHEDULE_EVENT_TYPES = typesOf(reportScheduleEvents);
type ReportScheduleEvent = EventsOf<typeof REPORT_SCHEDULE_EVENT_TYPES>;

export const REPORT_SCHEDULE_NOT_FOUND = 'Report schedule not found';
export const FREQUENCIES = ['weekly', 'monthly'] as const;
export type Frequency = (typeof FREQUENCIES)[number];

export interface Claim {
  report_id: string;
  start_date: string;
  end_date: string;
  claimed_at: string;
  sent: boolean;
}

export interface ReportScheduleState {
  status: 'none' | 'live' | 'deleted';
  /** each period's claim, by its key (`weekly:<monday>`, `monthly:<yyyy-mm>`) */
  periods: Map<string, Claim>;
}

export const ReportSchedule: Aggregate<ReportScheduleState, ReportScheduleEvent> = {
  types: REPORT_SCHEDULE_EVENT_TYPES,
  initial: () => ({ status: 'none', periods: new Map() }),
  evolve(s, e) {
    switch (e.type) {
      case 'ReportScheduleCreated':
        return { ...s, status: 'live' };
      case 'ReportScheduleUpdated':
        return s;
      case 'ReportScheduleDeleted':
        return { ...s, status: 'deleted' };
      case 'ReportSchedulePeriodClaimed': {
        const { report_id, start_date, end_date, claimed_at } = e.data;
        return { ...s, periods: new Map([...s.periods, [e.data.period, { report_id, start_date, end_date, claimed_at, sent: false }]]) };
      }
      case 'ReportSchedulePeriodSent': {
        const c = s.periods.get(e.data.period);
        return c ? { ...s, periods: new Map([...s.periods, [e.data.period, { ...c, sent: true }]]) } : s;
      }
    }
    return exhaustive(e, s);
  },
};

const Frequency = z.enum(FREQUENCIES, { error: 'must be weekly or monthly' });
const Recipients = z
  .array(EmailAddress, { error: 'must be a list of email addresses' })
  .min(1, 'must list 1 to 20 email addresses')
  .max(20, 'must list 1 to 20 email addresses');

export const CreateReportSchedule = z.strictObject({
  website_id: Uuid.describe('The website (brand) id'),
  frequency: Frequency.describe('weekly (Monday to Sunday, UTC) or monthly (calendar month, UTC)'),
  recipients: Recipients.describe('1 to 20 email addresses that receive each period’s report'),
});
export type CreateReportSchedule = z.infer<typeof CreateReportSchedule>;

export const UpdateReportSchedule = z.strictObject({
  frequency: Frequency.optional().describe('weekly or monthly'),
  recipients: Recipients.optional().describe('1 to 20 email addresses (replaces the list)'),
});
export type UpdateReportSchedule = z.infer<typeof UpdateReportSchedule>;

export function createReportSchedule(ctx: CommandContext, input: CreateReportSchedule) {
  return handleNew(ctx, reportScheduleStream, ReportSchedule, (id) => ({ type: 'ReportScheduleCreated', data: { schedule_id: id, ...input } }));
}

export function updateReportSchedule(ctx: CommandContext, id: string, patch: UpdateReportSchedule) {
  return handleLive(ctx, reportScheduleStream(id), ReportSchedule, REPORT_SCHEDULE_NOT_FOUND, () => {
    const { frequency, recipients } = patch;
    if (frequency === undefined && recipients === undefined) return { events: [], result: { id } };
    const data = { schedule_id: id, ...(frequency && { frequency }), ...(recipients && { recipients }) };
    return { events: [{ type: 'ReportScheduleUpdated' as const, data }], result: { id } };
  });
}

export function deleteReportSchedule(ctx: CommandContext, id: string) {
  return handleLive(ctx, reportScheduleStream(id), ReportSchedule, REPORT_SCHEDULE_NOT_FOUND, () => ({
    events: [{ type: 'ReportScheduleDeleted' as const, data: { schedule_id: id } }],
    result: { id },
  }));
}

/**
 * Takes a period once: the first caller (this instance or another, by the stream's expected version) appends the claim
 * with a new report id; later ones get that claim back. A deleted schedule's period is not taken (null).
 */
export function claimPeriod(ctx: CommandContext, id: string, period: { key: string; start_date: string; end_date: string }) {
  return handle(ctx, reportScheduleStream(id), ReportSchedule, (s) => {
    if (s.status !== 'live') return { events: [], result: { claim: null, claimed: false } };
    const earlier = s.periods.get(period.key);
    if (earlier) return { events: [], result: { claim: earlier as Claim | null, claimed: false } };
    const { start_date, end_date } = period;
    const claim: Claim = { report_id: newId(), start_date, end_date, claimed_at: (ctx.now?.() ?? new Date()).toISOString(), sent: false };
    const { sent: _, ...data } = claim;
    return {
      events: [{ type: 'ReportSchedulePeriodClaimed' as const, data: { schedule_id: id, period: period.key, ...data } }],
      result: { claim: claim as Claim | null, claimed: true },
    };
  });
}

/** Records that a claimed period's report was made and mailed (once). */
export function markPeriodSent(ctx: CommandContext, id: string, period: string, recipients: number) {
  return handle(ctx, reportScheduleStream(id), ReportSchedule, (s) => {
    const c = s.periods.get(period);
    if (!c || c.sent) return { events: [], result: { id } };
    return {
      events: [{ type: 'ReportSchedulePeriodSent' as const, data: { schedule_id: id, period, report_id: c.report_id, recipients } }],
      result: { id },
    };
  });
}
