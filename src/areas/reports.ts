import { entryOf } from '../../projections/activity';
import { reportsProjection } from '../../projections/reports';
import { reportRoutes } from '../http/routes/reports';
import { reportTools } from '../mcp/tools/reports';
import { appDepsOf } from '../app/context';
import { startReportSchedules } from '../workers/report-schedules';
import type { AreaManifest } from './manifest';

/** Website reports: snapshots of a website's numbers for a period, shared by link. */
export const reports: AreaManifest<'reports'> = {
  readModels: { reports: reportsProjection },
  routes: reportRoutes,
  tools: reportTools,
  feed: {
    ReportCreated: entryOf('report', 'created', (e) => [e.data.report_id]),
    ReportDeleted: entryOf('report', 'deleted', (e) => [e.data.report_id]),
    ReportScheduleCreated: entryOf('report_schedule', 'created', (e) => [e.data.schedule_id], 'website_id'),
    ReportScheduleUpdated: entryOf('report_schedule', 'updated', (e) => [e.data.schedule_id]),
    ReportScheduleDeleted: entryOf('report_schedule', 'deleted', (e) => [e.data.schedule_id]),
  },
  notInFeed: [
    {
      why: "a schedule's period at work: the report it makes is in the feed (report.created), its emails in the outbox",
      types: ['ReportSchedulePeriodClaimed', 'ReportSchedulePeriodSent'],
    },
  ],
  // each ended period's report, mailed once (SCHEDULER=on, as the other schedules)
  workers: [
    { start: ({ config, runtime, outbound, now }) => (config.scheduler ? startReportSchedules({ ...appDepsOf(runtime, outbound), now }) : null) },
  ],
};
