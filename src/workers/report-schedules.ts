import type { AppDeps } from '../app/context';
import { sendDueReports } from '../app/report-schedules';
import { every } from './every';

/** Mails each report schedule's period once it has ended (SCHEDULER=on, as the other schedules): a pass every tickMs. */
export function startReportSchedules(deps: AppDeps & { now?: () => Date; tickMs?: number }): { stop(): Promise<void> } {
  return every({ everyMs: deps.tickMs ?? 60_000, firstMs: 30_000, logger: deps.rt.logger, failure: 'report schedule pass failed' }, () =>
    sendDueReports(deps, deps.now?.() ?? new Date()),
  );
}
