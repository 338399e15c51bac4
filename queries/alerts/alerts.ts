import type { Knex } from 'knex';
import { organizationRow } from '../access';
import { newestFirst, oldestFirst, onePageAndMore, type PageRequest, pageInfo, pageRows } from '../paging';
import { iso, isoOrNull } from '../timestamps';
import type { AlertRuleView, AlertView } from './views';

const ruleView = (r: any): AlertRuleView => ({
  id: r.id,
  website_id: r.website_id,
  name: r.name,
  kind: r.kind,
  params: r.params,
  webhook_ids: r.webhook_ids,
  emails: r.emails,
  enabled: r.enabled,
  created_at: iso(r.created_at),
  updated_at: iso(r.updated_at),
});

export const listRules = (db: Knex, websiteId: string): Promise<AlertRuleView[]> =>
  oldestFirst(db, 'rm_alert_rules', { website_id: websiteId }, ruleView);

/** The websites with at least one enabled rule, in id order (the daily pass's list). */
export async function websitesWithEnabledRules(db: Knex): Promise<string[]> {
  const rows: { website_id: string }[] = await db('rm_alert_rules').where('enabled', true).distinct('website_id').orderBy('website_id');
  return rows.map((r) => r.website_id);
}

/** A website's last finished run with answers (what run_failed looks at). */
export interface LastRun {
  id: string;
  day: Date;
  total: number;
  failed: number;
}

/**
 * What an evaluation reads first, in one statement: the website's enabled rules (in their order), its newest answer's
 * time (the metric rules' windows end on its day; null without answers) and its last finished run with answers; no
 * enabled rule, nothing else.
 */
export async function rulesToEvaluate(
  db: Knex,
  websiteId: string,
): Promise<{ rules: (AlertRuleView & { organization_id: string })[]; newest: Date | null; lastRun: LastRun | undefined }> {
  const { rows } = await db.raw(
    `with newest as (select max(x.run_at) as at from rm_responses x where x.website_id = :site),
          last_run as (select u.id, u.day, u.total, u.failed from rm_runs u
                        where u.website_id = :site and u.finished_at is not null and u.total > 0 order by u.seq desc limit 1)
     select a.*, n.at as newest_answer, l.id as last_run_id, l.day as last_run_day, l.total as last_run_total, l.failed as last_run_failed
       from rm_alert_rules a cross join newest n left join last_run l on true
      where a.website_id = :site and a.enabled
      order by a.created_at, a.id`,
    { site: websiteId },
  );
  const first = rows[0];
  return {
    rules: rows.map((r: any) => ({ ...ruleView(r), organization_id: r.organization_id })),
    newest: first?.newest_answer ? new Date(first.newest_answer) : null,
    lastRun: first?.last_run_id
      ? { id: first.last_run_id, day: first.last_run_day, total: first.last_run_total, failed: first.last_run_failed }
      : undefined,
  };
}

/** One rule of the organization (another organization's is undefined, as an unknown one). */
export const getRule = (db: Knex, organizationId: string, id: string): Promise<AlertRuleView | undefined> =>
  organizationRow(db, 'rm_alert_rules', organizationId, { id }, ruleView);

const alertView = (r: any): AlertView => ({
  id: r.id,
  rule_id: r.rule_id,
  website_id: r.website_id,
  kind: r.kind,
  fired_at: iso(r.fired_at),
  summary: r.summary,
  details: r.details,
  acknowledged_at: isoOrNull(r.acknowledged_at),
});

/** A page of a website's alerts, newest first. */
export async function listAlerts(db: Knex, websiteId: string, f: PageRequest & { status?: 'open' | 'acknowledged' }) {
  const q = db('rm_alerts').where('website_id', websiteId);
  if (f.status === 'open') q.whereNull('acknowledged_at');
  if (f.status === 'acknowledged') q.whereNotNull('acknowledged_at');
  const rows = await onePageAndMore(q.orderBy(newestFirst('fired_at', 'id')), f);
  return { alerts: pageRows(rows, f).map(alertView), ...pageInfo(rows, f) };
}

/** The alerts a website fired in [start, end], oldest first (a report's section). */
export async function alertsFiredIn(db: Knex, websiteId: string, start: Date, end: Date): Promise<AlertView[]> {
  const rows = await db('rm_alerts')
    .where('website_id', websiteId)
    .whereBetween('fired_at', [start, end])
    .orderBy([
      { column: 'fired_at', order: 'asc' },
      { column: 'id', order: 'asc' },
    ]);
  return rows.map(alertView);
}

export const getAlert = (db: Knex, organizationId: string, id: string): Promise<AlertView | undefined> =>
  organizationRow(db, 'rm_alerts', organizationId, { id }, alertView);
