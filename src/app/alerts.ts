import { isDeepStrictEqual } from 'node:util';
import type { Knex } from 'knex';
import { z } from 'zod';
import * as ruleCommands from '../../commands/alerts/rule';
import {
  ALERT_NOT_FOUND,
  ALERT_RULE_NOT_FOUND,
  type AlertKind,
  type CreateAlertRule,
  PARAMS,
  type UpdateAlertRule,
} from '../../commands/alerts/rule';
import type { CommandContext } from '../../commands/handle';
import { requestEmail } from '../../commands/email/request-email';
import * as alertQueries from '../../queries/alerts/alerts';
import type { AlertRuleView, AlertView } from '../../queries/alerts/views';
import { resolveSelection } from '../../queries/filters';
import { comparePeriods } from '../../queries/metrics/compare';
import { DomainErrorException, invalid, isDomainError, notFound } from '../domain/errors';
import { SYSTEM_ACTOR } from '../domain/events';
import { type Need, requireGlobal } from '../domain/principal';
import { PageNum, PageSize, Uuid } from '../domain/schemas';
import type { AiAccessReport } from '../analysis/ai-access';
import type { EventStore } from '../eventstore/port';
import { type Caller, commandContextOf, dbOf, type Reads, settled, websiteFor, writeThenRead } from './context';

/**
 * Alert rules and their alerts (CONTRACT.md "Webhooks and alerts"): global keys only. A rule and what it fired share
 * its stream (commands/alerts/rule.ts), so a firing is decided once whoever evaluates.
 */
const READS: Reads = ['alerts'];
const MANAGE: Need = { category: 'api', level: 'manage' };
const VIEW: Need = { category: 'api', level: 'view' };

const bad = (message: string): never => {
  throw new DomainErrorException(invalid(message));
};

/** A kind's params with their defaults; a competitor must be one of the rule's website. */
async function checkParams(db: Knex, websiteId: string, kind: AlertKind, params: Record<string, unknown>): Promise<Record<string, unknown>> {
  const r = PARAMS[kind].safeParse(params);
  if (!r.success) {
    const i = r.error.issues[0];
    const path = ['params', ...i.path.map(String)].join('.');
    bad(`${path}: ${i.code === 'unrecognized_keys' ? `unknown field ${JSON.stringify((i as { keys: string[] }).keys[0])}` : i.message}`);
  }
  const p = r.data as Record<string, unknown>;
  const competitor = kind === 'competitor_overtakes' ? p.competitor_id : kind === 'metric_change' && p.entity !== 'brand' ? p.entity : null;
  if (typeof competitor === 'string') {
    const row = await db('rm_competitors').where({ website_id: websiteId, id: competitor }).whereNull('removed_at').first('id');
    if (!row) bad(`params.${kind === 'competitor_overtakes' ? 'competitor_id' : 'entity'}: ${competitor} is not a competitor of this website`);
  }
  return p;
}

async function checkWebhooks(c: Caller, ids: string[]): Promise<string[]> {
  const list = [...new Set(ids)];
  if (!list.length) return list;
  const rows = await dbOf(c)('rm_webhooks').where('organization_id', c.principal.organizationId).whereIn('id', list).select('id');
  const known = new Set(rows.map((r: { id: string }) => r.id));
  for (const id of list) if (!known.has(id)) bad(`webhook_ids: ${id} is not a webhook of this organization`);
  return list;
}

async function mine(c: Caller, id: string): Promise<AlertRuleView> {
  requireGlobal(c.principal);
  const r = await alertQueries.getRule(dbOf(c), c.principal.organizationId, id);
  if (!r) throw new DomainErrorException(notFound(ALERT_RULE_NOT_FOUND));
  return r;
}

const readRule = (c: Caller, id: string) => () => alertQueries.getRule(dbOf(c), c.principal.organizationId, id);

export async function createAlertRule(c: Caller, input: CreateAlertRule): Promise<{ rule: AlertRuleView }> {
  requireGlobal(c.principal);
  await websiteFor(c, input.website_id, MANAGE);
  const params = await checkParams(dbOf(c), input.website_id, input.kind, input.params);
  const webhook_ids = await checkWebhooks(c, input.webhook_ids);
  const emails = [...new Set(input.emails)];
  const rule = await writeThenRead(
    c,
    ruleCommands.createAlertRule(commandContextOf(c, input.website_id), { ...input, params, webhook_ids, emails }),
    READS,
    ({ id }) => readRule(c, id)(),
  );
  return { rule };
}

export const RulesQuery = z.strictObject({ website_id: Uuid });

export async function listAlertRules(c: Caller, websiteId: string): Promise<{ rules: AlertRuleView[] }> {
  requireGlobal(c.principal);
  await websiteFor(c, websiteId, VIEW);
  return { rules: await alertQueries.listRules(dbOf(c), websiteId) };
}

export async function getAlertRule(c: Caller, id: string): Promise<{ rule: AlertRuleView }> {
  return { rule: await mine(c, id) };
}

export async function updateAlertRule(c: Caller, id: string, input: UpdateAlertRule): Promise<{ rule: AlertRuleView }> {
  const r = await mine(c, id);
  await websiteFor(c, r.website_id, MANAGE, { paused: true });
  const patch = {
    ...input,
    params: input.params === undefined ? undefined : await checkParams(dbOf(c), r.website_id, r.kind, input.params),
    webhook_ids: input.webhook_ids === undefined ? undefined : await checkWebhooks(c, input.webhook_ids),
    emails: input.emails === undefined ? undefined : [...new Set(input.emails)],
  };
  const rule = await writeThenRead(c, ruleCommands.updateAlertRule(commandContextOf(c, r.website_id), id, patch), READS, readRule(c, id));
  return { rule };
}

export async function deleteAlertRule(c: Caller, id: string): Promise<{ success: true }> {
  const r = await mine(c, id);
  await websiteFor(c, r.website_id, MANAGE, { paused: true, deleted: true });
  await settled(c.deps, ruleCommands.deleteAlertRule(commandContextOf(c, r.website_id), id), READS);
  return { success: true };
}

export const AlertsQuery = z.strictObject({
  website_id: Uuid,
  status: z.enum(['open', 'acknowledged'], { error: 'must be open or acknowledged' }).optional(),
  page_num: PageNum(true),
  page_size: PageSize(true),
});
export type AlertsQuery = z.infer<typeof AlertsQuery>;

export async function listAlerts(c: Caller, q: AlertsQuery) {
  requireGlobal(c.principal);
  await websiteFor(c, q.website_id, VIEW, { paused: true });
  return alertQueries.listAlerts(dbOf(c), q.website_id, q);
}

export async function acknowledgeAlert(c: Caller, id: string): Promise<{ alert: AlertView }> {
  requireGlobal(c.principal);
  const a = await alertQueries.getAlert(dbOf(c), c.principal.organizationId, id);
  if (!a) throw new DomainErrorException(notFound(ALERT_NOT_FOUND));
  await websiteFor(c, a.website_id, MANAGE, { paused: true });
  const alert = await writeThenRead(c, ruleCommands.acknowledgeAlert(commandContextOf(c, a.website_id), a.rule_id, id), READS, () =>
    alertQueries.getAlert(dbOf(c), c.principal.organizationId, id),
  );
  return { alert };
}

// ---- evaluation ----

export interface EvaluateDeps {
  db: Knex;
  store: EventStore;
  now?: () => Date;
  /** the AI access check of a domain (through the safe fetcher); without it access_changed is not evaluated */
  checkAccess?: (domain: string) => Promise<Pick<AiAccessReport, 'result'>>;
}

export type Trigger = 'run_ended' | 'import' | 'daily';

const DAY = 86_400_000;
const dayOf = (d: Date) => d.toISOString().slice(0, 10);
const startOfDay = (d: Date) => new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate()));

interface Firing {
  key: string;
  summary: string;
  details: Record<string, unknown>;
}

/** The window ending at the newest answer's UTC day and the same number of days before it; null without answers. */
async function windows(db: Knex, websiteId: string, days: number) {
  const r = await db('rm_responses').where('website_id', websiteId).max('run_at as newest').first();
  if (!r?.newest) return null;
  const endDay = startOfDay(new Date(r.newest));
  const end = new Date(endDay.getTime() + DAY - 1);
  const start = new Date(endDay.getTime() - (days - 1) * DAY);
  return {
    endDay: dayOf(endDay),
    current: { start, end },
    previous: { start: new Date(start.getTime() - days * DAY), end: new Date(start.getTime() - 1) },
  };
}

/** The comparison's row of an entity: the brand's (is_self) or a competitor's (keyed by name, `name (id)` when shared). */
async function rowOf(db: Knex, websiteId: string, data: Record<string, { is_self: boolean }>, entity: string) {
  if (entity === 'brand') return Object.values(data).find((r) => r.is_self);
  const c = await db('rm_competitors').where({ website_id: websiteId, id: entity }).first('name');
  return c ? (data[`${c.name} (${entity})`] ?? data[c.name]) : undefined;
}

type Memo = Map<string, Promise<unknown>>;
const memoized = <T>(memo: Memo, key: string, run: () => Promise<T>): Promise<T> => {
  if (!memo.has(key)) memo.set(key, run());
  return memo.get(key) as Promise<T>;
};

/** The comparison of one metric over one window, shared by the rules of one evaluation (one selection, one newest day). */
async function comparison(db: Knex, memo: Memo, websiteId: string, metric: 'mention_rate' | 'share_of_voice' | 'citation_rate', days: number) {
  const w = await memoized(memo, `w${days}`, () => windows(db, websiteId, days));
  if (!w) return null;
  const sel = await memoized(memo, 'sel', () => resolveSelection(db, websiteId, {}));
  const cmp = await memoized(memo, `c${metric}:${days}`, () => comparePeriods(db, sel, metric, w.current, w.previous));
  return { w, cmp };
}

async function metricChange(db: Knex, memo: Memo, rule: AlertRuleView): Promise<Firing | null> {
  const p = rule.params as { metric: 'mention_rate'; entity: string; window_days: number; min_change_points: number };
  const c = await comparison(db, memo, rule.website_id, p.metric, p.window_days);
  if (!c) return null;
  const { w, cmp } = c;
  const row = (await rowOf(db, rule.website_id, cmp.data, p.entity)) as (typeof cmp.data)[string] | undefined;
  if (!row || (row.verdict !== 'up' && row.verdict !== 'down') || row.change === null || Math.abs(row.change) < p.min_change_points) return null;
  const who = p.entity === 'brand' ? 'the brand' : 'a competitor';
  return {
    key: `${w.endDay}:${row.verdict}`,
    summary: `${p.metric} of ${who} went ${row.verdict} ${Math.abs(row.change)} points over the last ${p.window_days} days (${row.previous} → ${row.current})`,
    details: { metric: p.metric, entity: p.entity, window_end_day: w.endDay, direction: row.verdict, ...row },
  };
}

async function competitorOvertakes(db: Knex, memo: Memo, rule: AlertRuleView): Promise<Firing | null> {
  const p = rule.params as { metric: 'mention_rate'; competitor_id: string; window_days: number };
  const c = await comparison(db, memo, rule.website_id, p.metric, p.window_days);
  if (!c) return null;
  const { w, cmp } = c;
  type Row = (typeof cmp.data)[string];
  const brand = (await rowOf(db, rule.website_id, cmp.data, 'brand')) as Row | undefined;
  const rival = (await rowOf(db, rule.website_id, cmp.data, p.competitor_id)) as Row | undefined;
  if (!brand || !rival || brand.current === null || rival.current === null || brand.previous === null || rival.previous === null) return null;
  const noise = (r: Row) => r.verdict === 'within_noise' || r.verdict === 'insufficient_data';
  // it passes the brand in this window, was not ahead before, and neither side's move is noise
  if (!(rival.current > brand.current && rival.previous <= brand.previous) || noise(brand) || noise(rival)) return null;
  return {
    key: `${w.endDay}:overtaken`,
    summary: `a competitor passed the brand on ${p.metric} over the last ${p.window_days} days (${rival.current} against ${brand.current})`,
    details: { metric: p.metric, competitor_id: p.competitor_id, window_end_day: w.endDay, brand, competitor: rival },
  };
}

async function runFailed(db: Knex, rule: AlertRuleView): Promise<Firing | null> {
  const p = rule.params as { min_failed_percent: number };
  const run = await db('rm_runs')
    .where('website_id', rule.website_id)
    .whereNotNull('finished_at')
    .where('total', '>', 0)
    .orderBy('seq', 'desc')
    .first('id', 'day', 'total', 'failed');
  if (!run) return null;
  const percent = Math.round((10_000 * run.failed) / run.total) / 100;
  if (percent < p.min_failed_percent || run.failed === 0) return null;
  return {
    key: `run:${run.id}:failed`,
    summary: `${run.failed} of ${run.total} answers of the run of ${dayOf(new Date(run.day))} failed (${percent} %)`,
    details: { run_id: run.id, total: run.total, failed: run.failed, failed_percent: percent },
  };
}

/** The access table: the last check's flags per rule (the baseline the next daily check is compared with). */
export async function migrateAlertAccess(db: Knex): Promise<void> {
  await db.raw(`create table if not exists alert_access_checks (rule_id uuid primary key, engines jsonb not null, checked_at timestamptz not null)`);
  await db.raw(`create table if not exists alert_daily_passes (day date primary key)`);
}

/** Each engine's access flags (http and robots); a change of any of them fires (the first check is the baseline). */
async function accessChanged(deps: EvaluateDeps, rule: AlertRuleView): Promise<Firing | null> {
  if (!deps.checkAccess) return null;
  const site = await deps.db('rm_websites').where('id', rule.website_id).first('url');
  if (!site) return null;
  const domain = new URL(site.url).hostname.replace(/^www\./, '');
  const { result } = await deps.checkAccess(domain);
  const engines: Record<string, unknown> = {};
  for (const e of Object.keys(result.http).sort()) engines[e] = { http: result.http[e as never], robots: result.robots[e as never] };
  const before = await deps.db('alert_access_checks').where('rule_id', rule.id).first('engines');
  const now = deps.now?.() ?? new Date();
  await deps
    .db('alert_access_checks')
    .insert({ rule_id: rule.id, engines: JSON.stringify(engines), checked_at: now })
    .onConflict('rule_id')
    .merge();
  if (!before) return null;
  // jsonb orders keys its own way: compare values, not texts
  const changed = Object.keys(engines).filter((e) => !isDeepStrictEqual(engines[e], before.engines[e]));
  if (!changed.length) return null;
  return {
    key: `${dayOf(now)}:changed`,
    summary: `AI access to ${domain} changed for ${changed.join(', ')} (now ${result.status})`,
    details: { domain, status: result.status, changed, before: before.engines, after: engines },
  };
}

const EVALUATORS: Record<AlertKind, (deps: EvaluateDeps, r: AlertRuleView, memo: Memo) => Promise<Firing | null>> = {
  metric_change: (d, r, m) => metricChange(d.db, m, r),
  competitor_overtakes: (d, r, m) => competitorOvertakes(d.db, m, r),
  run_failed: (d, r) => runFailed(d.db, r),
  access_changed: accessChanged,
};

/**
 * Evaluates a website's enabled rules and fires what they find: one AlertFired per (rule, key), decided on the
 * rule's stream (two instances at once fire once), then an email to each of the rule's addresses through the outbox.
 * Returns the alerts this call fired.
 */
export async function evaluateWebsite(deps: EvaluateDeps, websiteId: string, trigger: Trigger, kinds?: AlertKind[]) {
  const rules = await alertQueries.enabledRules(deps.db, websiteId);
  const memo: Memo = new Map();
  const fired: ruleCommands.FiredAlert[] = [];
  for (const rule of rules) {
    if (kinds && !kinds.includes(rule.kind)) continue;
    // the access check fetches the website: once a day, not at every run's end
    if (rule.kind === 'access_changed' && trigger !== 'daily') continue;
    const f = await EVALUATORS[rule.kind](deps, rule, memo);
    if (!f) continue;
    const a = await fire(deps, rule, f, trigger);
    if (a) fired.push(a);
  }
  return fired;
}

/**
 * Fires one finding of a rule (once per key) and mails it. A key fired before is mailed again: the email keys make it
 * a no-op when sent, and it is what delivers the emails of an instance that died between the fire and the mail.
 */
export async function fire(deps: EvaluateDeps, rule: AlertRuleView & { organization_id: string }, f: Firing, trigger: Trigger) {
  const ctx: CommandContext = {
    store: deps.store,
    organizationId: rule.organization_id,
    websiteId: rule.website_id,
    actor: SYSTEM_ACTOR,
    now: deps.now,
  };
  const now = deps.now?.() ?? new Date();
  const r = await ruleCommands.fireAlert(ctx, rule.id, f.key, {
    website_id: rule.website_id,
    kind: rule.kind,
    fired_at: now.toISOString(),
    summary: f.summary,
    details: { ...f.details, trigger, rule_name: rule.name },
    webhook_ids: rule.webhook_ids,
  });
  if (isDomainError(r)) return null;
  const alert = r.result.fired ?? r.result.earlier;
  if (!alert) return null;
  const site = await deps.db('rm_websites').where('id', rule.website_id).first('name');
  for (const to of rule.emails) {
    await requestEmail(ctx, {
      template: 'alert',
      to,
      key: `alert-${alert.id}-${to}`,
      params: { rule: rule.name, website: site?.name ?? 'your website', summary: alert.summary, fired_at: alert.fired_at },
    });
  }
  return r.result.fired;
}
