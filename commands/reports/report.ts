import { randomBytes } from 'node:crypto';
import { type DomainError, notFound } from '../../src/domain/errors';
import { type EventData, type EventsOf, exhaustive, reportEvents } from '../../src/domain/events';
import { typesOf } from '../../src/domain/event-lists';
import { newId } from '../../src/domain/ids';
import { type Aggregate, type CommandContext, handle } from '../handle';

/** One website report, folded from its stream `report-<id>`: it exists until deleted. */
export const reportStream = (reportId: string) => `report-${reportId}`;

export const REPORT_EVENT_TYPES = typesOf(reportEvents);
type ReportEvent = EventsOf<typeof REPORT_EVENT_TYPES>;

export const REPORT_NOT_FOUND = 'Report not found';

export interface ReportState {
  status: 'none' | 'live' | 'deleted';
  /** what its creation recorded (a schedule's retry mails the numbers its first attempt stored) */
  created: EventData<'ReportCreated'> | null;
}

export const Report: Aggregate<ReportState, ReportEvent> = {
  types: REPORT_EVENT_TYPES,
  initial: () => ({ status: 'none', created: null }),
  evolve(s, e) {
    switch (e.type) {
      case 'ReportCreated':
        return { status: 'live', created: e.data };
      case 'ReportDeleted':
        return { ...s, status: 'deleted' };
    }
    return exhaustive(e, s);
  },
};

/** 192 random bits: the link is the only key to the page. */
export const newReportToken = () => randomBytes(24).toString('base64url');

export type NewReport = Omit<EventData<'ReportCreated'>, 'report_id' | 'token'>;

export async function createReport(ctx: CommandContext, input: NewReport) {
  const id = newId();
  const token = newReportToken();
  return handle(ctx, reportStream(id), Report, () => ({
    events: [{ type: 'ReportCreated' as const, data: { report_id: id, token, ...input } }],
    result: { id },
  }));
}

/**
 * A schedule's report of one period (its id claimed on the schedule's stream): made once, whoever retries; answers
 * what its creation recorded (null once deleted).
 */
export function createReportOnce(ctx: CommandContext, id: string, input: NewReport) {
  return handle(ctx, reportStream(id), Report, (s) => {
    if (s.status !== 'none') return { events: [], result: { created: s.status === 'live' ? s.created : null } };
    const data = { report_id: id, token: newReportToken(), ...input };
    return { events: [{ type: 'ReportCreated' as const, data }], result: { created: data as EventData<'ReportCreated'> | null } };
  });
}

export function deleteReport(ctx: CommandContext, id: string) {
  return handle(ctx, reportStream(id), Report, (s): ReturnType<typeof decideDelete> | DomainError => decideDelete(s, id));
}

function decideDelete(s: ReportState, id: string) {
  if (s.status !== 'live') return notFound(REPORT_NOT_FOUND);
  return { events: [{ type: 'ReportDeleted' as const, data: { report_id: id } }], result: { id } };
}
