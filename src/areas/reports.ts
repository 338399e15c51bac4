import { entryOf } from '../../projections/activity';
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
    ReportCreated: entryOf('report', 'created', (e) => [e.data.report_id]),
    ReportDeleted: entryOf('report', 'deleted', (e) => [e.data.report_id]),
  },
};
