import type { FastifyInstance } from 'fastify';
import { CreateReportSchedule, UpdateReportSchedule } from '../../../commands/reports/schedule';
import { ReportAnswer, ReportList, ReportScheduleAnswer, ReportScheduleList } from '../../../queries/reports/views';
import * as schedules from '../../app/report-schedules';
import * as reports from '../../app/reports';
import { sendPage } from '../../pages/layout';
import { websiteReportNotFoundPage, websiteReportPage } from '../../pages/website-report';
import { type HttpDeps, NoContent, noContent, routeGroup, WebsiteQuery } from '../route';

const api = routeGroup({ tag: 'reports', extension: true });

/** Website reports: thin adapters over src/app/reports.ts. */
export const reportRoutes = [
  api.post('/api/v1/reports', {
    summary:
      "Take a report of a website's period (at most 366 days): its numbers are stored now and its report_url shows them to anyone with the link",
    body: reports.CreateReport,
    status: 201,
    answer: ReportAnswer,
    handler: (ctx) => reports.createReport(ctx, ctx.body),
  }),
  api.get('/api/v1/reports', {
    summary: "A website's reports, newest first",
    query: reports.ReportsQuery,
    answer: ReportList,
    handler: (ctx) => reports.listReports(ctx, ctx.query.website_id),
  }),
  api.get('/api/v1/reports/:report_id', {
    summary: 'One report with the numbers its page shows',
    params: reports.ReportParams,
    answer: ReportAnswer,
    handler: (ctx) => reports.getReport(ctx, ctx.params.report_id),
  }),
  api.delete('/api/v1/reports/:report_id', {
    summary: 'Delete a report: its link answers 404 from then on',
    params: reports.ReportParams,
    status: 204,
    answer: NoContent,
    handler: (ctx) => noContent(ctx, reports.deleteReport(ctx, ctx.params.report_id)),
  }),
  api.post('/api/v1/report-schedules', {
    summary: "Schedule a website's report: each week (Monday to Sunday, UTC) or month that ends, its report is made and mailed to 1 to 20 recipients",
    body: CreateReportSchedule,
    status: 201,
    answer: ReportScheduleAnswer,
    handler: (ctx) => schedules.createReportSchedule(ctx, ctx.body),
  }),
  api.get('/api/v1/report-schedules', {
    summary: "A website's report schedules, oldest first, each with the last period it sent",
    query: WebsiteQuery,
    answer: ReportScheduleList,
    handler: (ctx) => schedules.listReportSchedules(ctx, ctx.query.website_id),
  }),
  api.get('/api/v1/report-schedules/:schedule_id', {
    summary: 'One report schedule',
    params: schedules.ReportScheduleParams,
    answer: ReportScheduleAnswer,
    handler: (ctx) => schedules.getReportSchedule(ctx, ctx.params.schedule_id),
  }),
  api.patch('/api/v1/report-schedules/:schedule_id', {
    summary: "Change a report schedule's frequency or recipients (from the next period that ends)",
    params: schedules.ReportScheduleParams,
    body: UpdateReportSchedule,
    answer: ReportScheduleAnswer,
    handler: (ctx) => schedules.updateReportSchedule(ctx, ctx.params.schedule_id, ctx.body),
  }),
  api.delete('/api/v1/report-schedules/:schedule_id', {
    summary: 'Delete a report schedule: no period is mailed from then on (its reports stay)',
    params: schedules.ReportScheduleParams,
    status: 204,
    answer: NoContent,
    handler: (ctx) => noContent(ctx, schedules.deleteReportSchedule(ctx, ctx.params.schedule_id)),
  }),
];

/** The public page at report_url: anyone with the link, no key; HTML, not part of the API document. */
export function registerReportPages(app: FastifyInstance, deps: HttpDeps): void {
  app.get<{ Params: { token: string } }>('/reports/:token', async (req, reply) => {
    const data = await reports.reportPageData(deps, req.params.token);
    if (!data) return sendPage(reply, { ...websiteReportNotFoundPage(), noindex: true, status: 404 });
    return sendPage(reply, { ...websiteReportPage(data), noindex: true });
  });
}
