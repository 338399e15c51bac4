import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { CreateReportSchedule, UpdateReportSchedule } from '../../../commands/reports/schedule';
import { ReportAnswer, ReportList, ReportScheduleAnswer, ReportScheduleList } from '../../../queries/reports/views';
import * as schedules from '../../app/report-schedules';
import * as reports from '../../app/reports';
import { sendPage } from '../../pages/layout';
import { websiteReportNotFoundPage, websiteReportPage } from '../../pages/website-report';
import { type HttpDeps, route } from '../route';

const TAG = 'reports';

/** Website reports: thin adapters over src/app/reports.ts. */
export const reportRoutes = [
  route({
    method: 'POST',
    url: '/api/v1/reports',
    summary:
      "Take a report of a website's period (at most 366 days): its numbers are stored now and its report_url shows them to anyone with the link",
    tag: TAG,
    extension: true,
    body: reports.CreateReport,
    status: 201,
    responses: { 201: ReportAnswer },
    handler: (ctx) => reports.createReport(ctx, ctx.body),
  }),
  route({
    method: 'GET',
    url: '/api/v1/reports',
    summary: "A website's reports, newest first",
    tag: TAG,
    extension: true,
    query: reports.ReportsQuery,
    responses: { 200: ReportList },
    handler: (ctx) => reports.listReports(ctx, ctx.query.website_id),
  }),
  route({
    method: 'GET',
    url: '/api/v1/reports/:report_id',
    summary: 'One report with the numbers its page shows',
    tag: TAG,
    extension: true,
    params: reports.ReportParams,
    responses: { 200: ReportAnswer },
    handler: (ctx) => reports.getReport(ctx, ctx.params.report_id),
  }),
  route({
    method: 'DELETE',
    url: '/api/v1/reports/:report_id',
    summary: 'Delete a report: its link answers 404 from then on',
    tag: TAG,
    extension: true,
    params: reports.ReportParams,
    status: 204,
    responses: { 204: z.null().describe('No content') },
    handler: async (ctx) => {
      await reports.deleteReport(ctx, ctx.params.report_id);
      return ctx.reply.code(204).send();
    },
  }),
  route({
    method: 'POST',
    url: '/api/v1/report-schedules',
    summary: "Schedule a website's report: each week (Monday to Sunday, UTC) or month that ends, its report is made and mailed to 1 to 20 recipients",
    tag: TAG,
    extension: true,
    body: CreateReportSchedule,
    status: 201,
    responses: { 201: ReportScheduleAnswer },
    handler: (ctx) => schedules.createReportSchedule(ctx, ctx.body),
  }),
  route({
    method: 'GET',
    url: '/api/v1/report-schedules',
    summary: "A website's report schedules, oldest first, each with the last period it sent",
    tag: TAG,
    extension: true,
    query: schedules.ReportSchedulesQuery,
    responses: { 200: ReportScheduleList },
    handler: (ctx) => schedules.listReportSchedules(ctx, ctx.query.website_id),
  }),
  route({
    method: 'GET',
    url: '/api/v1/report-schedules/:schedule_id',
    summary: 'One report schedule',
    tag: TAG,
    extension: true,
    params: schedules.ReportScheduleParams,
    responses: { 200: ReportScheduleAnswer },
    handler: (ctx) => schedules.getReportSchedule(ctx, ctx.params.schedule_id),
  }),
  route({
    method: 'PATCH',
    url: '/api/v1/report-schedules/:schedule_id',
    summary: "Change a report schedule's frequency or recipients (from the next period that ends)",
    tag: TAG,
    extension: true,
    params: schedules.ReportScheduleParams,
    body: UpdateReportSchedule,
    responses: { 200: ReportScheduleAnswer },
    handler: (ctx) => schedules.updateReportSchedule(ctx, ctx.params.schedule_id, ctx.body),
  }),
  route({
    method: 'DELETE',
    url: '/api/v1/report-schedules/:schedule_id',
    summary: 'Delete a report schedule: no period is mailed from then on (its reports stay)',
    tag: TAG,
    extension: true,
    params: schedules.ReportScheduleParams,
    status: 204,
    responses: { 204: z.null().describe('No content') },
    handler: async (ctx) => {
      await schedules.deleteReportSchedule(ctx, ctx.params.schedule_id);
      return ctx.reply.code(204).send();
    },
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
