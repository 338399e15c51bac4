import { z } from 'zod';
import { ComparedEntity } from '../metrics/views';

/** A report's period: its first and last day. */
const ReportPeriod = z.object({ start_date: z.string(), end_date: z.string() });

/** The numbers a report's page shows, taken once at its creation. */
const Interval = z.tuple([z.number(), z.number()]).nullable();
export const ReportSnapshot = z.object({
  website: z.object({ name: z.string(), url: z.string() }),
  previous: ReportPeriod,
  responses: z.number(),
  rates: z.array(
    z.object({ name: z.string(), is_self: z.boolean(), mention_rate: z.number(), ci95: Interval, mentions: z.number(), responses: z.number() }),
  ),
  comparison: z.array(z.object({ name: z.string(), ...ComparedEntity.omit({ p_value: true }).shape })),
  share_of_voice_by_model: z.array(
    z.object({
      model: z.string(),
      responses: z.number(),
      entities: z.array(z.object({ name: z.string(), is_self: z.boolean(), share_of_voice: z.number() })),
    }),
  ),
  trend: z.array(z.object({ date: z.string(), responses: z.number(), mention_rate: z.number().nullable() })),
  sources: z.array(z.object({ domain: z.string(), retrieved: z.number(), cited: z.number() })),
  crawlers: z.array(z.object({ bot: z.string(), operator: z.string(), hits: z.number(), pages: z.number(), last_seen: z.string() })),
  alerts: z.array(z.object({ kind: z.string(), fired_at: z.string(), summary: z.string() })),
});
export type ReportSnapshot = z.infer<typeof ReportSnapshot>;

export const ReportView = z.object({
  id: z.string(),
  website_id: z.string(),
  title: z.string(),
  ...ReportPeriod.shape,
  report_url: z.string(),
  created_at: z.string(),
});
export type ReportView = z.infer<typeof ReportView>;
export const ReportAnswer = z.object({ report: ReportView.extend({ snapshot: ReportSnapshot }) });
export const ReportList = z.object({ reports: z.array(ReportView) });

export interface ReportPage {
  title: string;
  start_date: string;
  end_date: string;
  created_at: string;
  snapshot: ReportSnapshot;
}

export const ReportScheduleView = z.object({
  id: z.string(),
  website_id: z.string(),
  frequency: z.enum(['weekly', 'monthly']),
  recipients: z.array(z.string()),
  created_at: z.string(),
  updated_at: z.string(),
  last_sent: z
    .object({ period: z.string(), report_id: z.string(), sent_at: z.string() })
    .nullable()
    .describe('The last period whose report was made and mailed; null before the first'),
});
export type ReportScheduleView = z.infer<typeof ReportScheduleView>;
export const ReportScheduleAnswer = z.object({ schedule: ReportScheduleView });
export const ReportScheduleList = z.object({ schedules: z.array(ReportScheduleView) });
