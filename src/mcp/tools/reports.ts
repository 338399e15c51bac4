import { ReportAnswer, ReportList } from '../../../queries/reports/views';
import * as reports from '../../app/reports';
import { ADDS, READS, tool } from '../tool';

/** Website reports for assistants, with REST's rules (src/app/reports.ts). */
export const reportTools = [
  tool({
    name: 'create_report',
    title: 'Create a website report',
    description:
      "Snapshot a website's period (at most 366 days): rates with intervals, change from the period before, sources, crawlers; answers a shareable report_url.",
    input: reports.CreateReport,
    output: ReportAnswer,
    annotations: ADDS,
    handler: (ctx, input) => reports.createReport(ctx, input),
  }),
  tool({
    name: 'list_reports',
    title: 'List website reports',
    description: "A website's reports, newest first, each with its shareable report_url.",
    input: reports.ReportsQuery,
    output: ReportList,
    annotations: READS,
    handler: (ctx, input) => reports.listReports(ctx, input.website_id),
  }),
];
