import type { Knex } from 'knex';
import { onePageAndMore, type PageRequest, pageInfo, pageRows } from '../paging';
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

export async function listRules(db: Knex, websiteId: string): Promise<AlertRuleView[]> {
  const rows = await db('rm_alert_rules')
    .where('website_id', websiteId)
    .orderBy([{ column: 'created_at' }, { column: 'id' }]);
  return rows.map(ruleView);
}

/** The enabled rules of a website (what an evaluation runs). */
export async function enabledRules(db: Knex, websiteId: string): Promise<(AlertRuleView & { organization_id: string })[]> {
  const rows = await db('rm_alert_rules')
    .where({ website_id: websiteId, enabled: true })
    .orderBy([{ column: 'created_at' }, { column: 'id' }]);
  return rows.map((r: any) => ({ ...ruleView(r), organization_id: r.organization_id }));
}

/** One rule of the organization (another organization's is undefined, as an unknown one). */
export async function getRule(db: Knex, organizationId: string, id: string): Promise<AlertRuleView | undefined> {
  const r = await db('rm_alert_rules').where({ organization_id: organizationId, id }).first();
  return r ? ruleView(r) : undefined;
}

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
  const rows = await onePageAndMore(
    q.orderBy([
      { column: 'fired_at', order: 'desc' },
      { column: 'id', order: 'desc' },
    ]),
    f,
  );
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

export async function getAlert(db: Knex, organizationId: string, id: string): Promise<AlertView | undefined> {
  const r = await db('rm_alerts').where({ organization_id: organizationId, id }).first();
  return r ? alertView(r) : undefined;
}
