import type { Knex } from 'knex';
import { iso } from '../timestamps';
import type { ReportPage, ReportSnapshot, ReportView } from './views';

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

export async function getReport(db: Knex, organizationId: string, id: string, urlOf: (token: string) => string) {
  const r: Row | undefined = await db('rm_reports').where({ organization_id: organizationId, id }).first();
  return r ? { ...view(r, urlOf), snapshot: r.snapshot } : undefined;
}

/** A website's reports, newest first. */
export async function listReports(db: Knex, websiteId: string, urlOf: (token: string) => string): Promise<ReportView[]> {
  const rows: Row[] = await db('rm_reports')
    .where({ website_id: websiteId })
    .orderBy([{ column: 'created_at', order: 'desc' }, { column: 'id' }])
    .select('id', 'website_id', 'title', 'start_date', 'end_date', 'token', 'created_at');
  return rows.map((r) => view(r, urlOf));
}

export async function reportByToken(db: Knex, token: string): Promise<ReportPage | undefined> {
  const r: Row | undefined = await db('rm_reports').where({ token }).first();
  return r ? { title: r.title, start_date: r.start_date, end_date: r.end_date, created_at: iso(r.created_at), snapshot: r.snapshot } : undefined;
}
