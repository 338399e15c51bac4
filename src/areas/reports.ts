import { entry } from '../../projections/activity';
import { reportsProjection } from '../../projections/reports';
import { reportRoutes } from '../http/routes/reports';
import { reportTools } from '../mcp/tools/reports';
import type { AreaManifest } from './manifest';

/** Website reports: snapshots of a website's numbers for a period, shared by link. */
export const reports: AreaManifest<'reports'> = {
  readModels: { reports: reportsProjection },
  routes: reportRoutes,
  tools: reportTools,
  feed: {
    ReportCreated: (e) => entry('report', 'created', [e.data.report_id]),
    ReportDeleted: (e) => entry('report', 'deleted', [e.data.report_id]),
    ReportScheduleCreated: (e) => entry('report_schedule', 'created', [e.data.schedule_id], e.data.website_id),
    ReportScheduleUpdated: (e) => entry('report_schedule', 'updated', [e.data.schedule_id]),
    ReportScheduleDeleted: (e) => entry('report_schedule', 'deleted', [e.data.schedule_id]),
  },
  notInFeed: [
    {
      why: "a schedule's period at work: the report it makes is in the feed (report.created), its emails in the outbox",
      types: ['ReportSchedulePeriodClaimed', 'ReportSchedulePeriodSent'],
    },
  ],
};
