import type { Knex } from 'knex';
import { organizationRow } from '../access';
import { iso } from '../timestamps';
import type { ReportPage, ReportScheduleView, ReportSnapshot, ReportView } from './views';

interface Row {
  id: string;
  website_id: string;
  title: string;
  start_date: string;
  end_date: string;
  token: string;
  snapshot: ReportSnapshot;
  created_at: Date | string;
}

const view = (r: Row, urlOf: (token: string) => string): ReportView => ({
  id: r.id,
  website_id: r.website_id,
  title: r.title,
  start_date: r.start_date,
  end_date: r.end_date,
  report_url: urlOf(r.token),
  created_at: iso(r.created_at),
});

export const getReport = (db: Knex, organizationId: string, id: string, urlOf: (token: string) => string) =>
  organizationRow(db, 'rm_reports', organizationId, { id }, (r: Row) => ({ ...view(r, urlOf), snapshot: r.snapshot }));

/** A website's reports, newest first. */
export async function listReports(db: Knex, websiteId: string, urlOf: (token: string) => string): Promise<ReportView[]> {
  const rows: Row[] = await db('rm_reports')
    .where({ website_id: websiteId })
    .orderBy([{ column: 'created_at', order: 'desc' }, { column: 'id' }])
    .select('id', 'website_id', 'title', 'start_date', 'end_date', 'token', 'created_at');
  return rows.map((r) => view(r, urlOf));
}

/** The page's report; none once its website is deleted. */
export async function reportByToken(db: Knex, token: string): Promise<ReportPage | undefined> {
  const r: Row | undefined = await db('rm_reports as r')
    .join('rm_websites as w', 'w.id', 'r.website_id')
    .where('r.token', token)
    .whereNot('w.status', 'deleted')
    .first('r.*');
  return r ? { title: r.title, start_date: r.start_date, end_date: r.end_date, created_at: iso(r.created_at), snapshot: r.snapshot } : undefined;
}

interface ScheduleRow {
  id: string;
  organization_id: string;
  website_id: string;
  frequency: 'weekly' | 'monthly';
  recipients: string[];
  created_at: Date | string;
  updated_at: Date | string;
  last_period: string | null;
  last_report_id: string | null;
  last_sent_at: Date | string | null;
}

const scheduleView = (r: ScheduleRow): ReportScheduleView => ({
  id: r.id,
  website_id: r.website_id,
  frequency: r.frequency,
  recipients: r.recipients,
  created_at: iso(r.created_at),
  updated_at: iso(r.updated_at),
  last_sent:
    r.last_period && r.last_report_id && r.last_sent_at ? { period: r.last_period, report_id: r.last_report_id, sent_at: iso(r.last_sent_at) } : null,
});

export const getSchedule = (db: Knex, organizationId: string, id: string): Promise<ReportScheduleView | undefined> =>
  organizationRow(db, 'rm_report_schedules', organizationId, { id }, scheduleView);

/** A website's report schedules, oldest first. */
export async function listSchedules(db: Knex, websiteId: string): Promise<ReportScheduleView[]> {
  const rows: ScheduleRow[] = await db('rm_report_schedules').where({ website_id: websiteId }).orderBy(['created_at', 'id']);
  return rows.map(scheduleView);
}

export type ActiveSchedule = ReportScheduleView & { organization_id: string };

/** Every schedule of an active website (a paused or deleted website's schedules send nothing). */
export async function activeSchedules(db: Knex): Promise<ActiveSchedule[]> {
  const rows: ScheduleRow[] = await db('rm_report_schedules as s')
    .join('rm_websites as w', 'w.id', 's.website_id')
    .where('w.status', 'active')
    .orderBy(['s.created_at', 's.id'])
    .select('s.*');
  return rows.map((r) => ({ ...scheduleView(r), organization_id: r.organization_id }));
}
