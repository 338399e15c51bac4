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
  },
};
