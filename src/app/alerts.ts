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
import { getCompetitor } from '../../queries/catalog/competitors';
import { webhookIdsOf } from '../../queries/webhooks/webhooks';
import { websiteById } from '../../queries/websites/websites';
import type { LastRun } from '../../queries/alerts/alerts';
import type { AlertRuleView, AlertView } from '../../queries/alerts/views';
import { selectionOf } from '../../queries/filters';
import { type ComparisonRow, comparedRange, comparisonRows, type Period, periodCounts, readsOf } from '../../queries/metrics/compare';
import { daysOf, type SiteFacts } from '../../queries/metrics/facts/layout';
import { factsCache, type MetricEntity } from '../../queries/metrics/metrics';
import type { Counts, Reads as CountReads } from '../../queries/metrics/scan';
import { type MetricsRead, readForMetrics } from '../../queries/metrics/request';
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
    if (!(await getCompetitor(db, websiteId, competitor)))
      bad(`params.${kind === 'competitor_overtakes' ? 'competitor_id' : 'entity'}: ${competitor} is not a competitor of this website`);
  }
  return p;
}

async function checkWebhooks(c: Caller, ids: string[]): Promise<string[]> {
  const list = [...new Set(ids)];
  if (!list.length) return list;
  const known = await webhookIdsOf(dbOf(c), c.principal.organizationId, list);
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

interface Windows {
  endDay: string;
  current: Period;
  previous: Period;
}

/** The window ending at the newest answer's UTC day and the same number of days before it. */
function windowsOf(newest: Date, days: number): Windows {
  const endDay = startOfDay(newest);
  const end = new Date(endDay.getTime() + DAY - 1);
  const start = new Date(endDay.getTime() - (days - 1) * DAY);
  return {
    endDay: dayOf(endDay),
    current: { start, end },
    previous: { start: new Date(start.getTime() - days * DAY), end: new Date(start.getTime() - 1) },
  };
}

type WindowMetric = 'mention_rate' | 'share_of_voice' | 'citation_rate';

/**
 * What the rules of one evaluation share, read once: the newest answer's time and the last finished run (read with
 * the rules, rulesToEvaluate); for the metric rules the website's metrics read (catalogue, tracked entities, facts
 * head: readForMetrics, one statement), its facts of the widest window loaded once (only those days: an evaluation
 * does not start loading the rest of its history), and per window length one scan of each period counting what its
 * rules' metrics read, each (metric, window) comparison computed once.
 */
class Shared {
  private read: Promise<{ read: MetricsRead; site: SiteFacts }> | null = null;
  private readonly counts = new Map<number, [Counts, Counts]>();
  private readonly compared = new Map<string, ComparisonRow[]>();
  private readonly widest: number;
  /** per window length, the counts its rules' metrics read */
  private readonly reads = new Map<number, CountReads>();

  constructor(
    private readonly db: Knex,
    private readonly websiteId: string,
    private readonly newest: Date | null,
    readonly lastRun: LastRun | undefined,
    rules: AlertRuleView[],
  ) {
    let widest = 0;
    for (const r of rules) {
      if (r.kind !== 'metric_change' && r.kind !== 'competitor_overtakes') continue;
      const p = r.params as { metric: WindowMetric; window_days: number };
      widest = Math.max(widest, p.window_days);
      const had = this.reads.get(p.window_days);
      const wants = readsOf(p.metric);
      this.reads.set(p.window_days, had === undefined || had === wants ? wants : 'all');
    }
    this.widest = widest;
  }

  /** The entities compared (brand first) and each one's row of the metric over the window; null without answers. */
  async comparison(metric: WindowMetric, days: number): Promise<{ w: Windows; entities: MetricEntity[]; rows: ComparisonRow[] } | null> {
    if (!this.newest) return null;
    const w = windowsOf(this.newest, days);
    this.read ??= this.load(this.newest);
    const { read, site } = await this.read;
    const key = `${metric}:${days}`;
    let rows = this.compared.get(key);
    if (!rows) {
      let counts = this.counts.get(days);
      if (!counts) {
        const sel = selectionOf(this.websiteId, {}, read.catalogue);
        const ids = read.entities.map((e) => e.id);
        const reads = this.reads.get(days) ?? readsOf(metric);
        counts = [periodCounts(site, ids, sel, w.current, reads), periodCounts(site, ids, sel, w.previous, reads)];
        this.counts.set(days, counts);
      }
      rows = comparisonRows(metric, read.entities, counts[0], counts[1]);
      this.compared.set(key, rows);
    }
    return { w, entities: read.entities, rows };
  }

  private async load(newest: Date) {
    const read = await readForMetrics(this.db, this.websiteId, { locations: false, competitors: false, schedule: null }, []);
    const widest = windowsOf(newest, this.widest);
    const days = daysOf(comparedRange(widest.current, widest.previous));
    const site = await factsCache(this.db).get(this.db, this.websiteId, days, read.head, { fill: false });
    return { read, site };
  }
}

/** The row of an entity: the brand's (is_self) or a competitor's, by its id. */
function rowOf(c: { entities: MetricEntity[]; rows: ComparisonRow[] }, entity: string): ComparisonRow | undefined {
  const j = entity === 'brand' ? c.entities.findIndex((e) => e.is_self) : c.entities.findIndex((e) => e.id === entity);
  return j < 0 ? undefined : c.rows[j];
}

async function metricChange(shared: Shared, rule: AlertRuleView): Promise<Firing | null> {
  const p = rule.params as { metric: WindowMetric; entity: string; window_days: number; min_change_points: number };
  const c = await shared.comparison(p.metric, p.window_days);
  if (!c) return null;
  const { w } = c;
  const row = rowOf(c, p.entity);
  if (!row || (row.verdict !== 'up' && row.verdict !== 'down') || row.change === null || Math.abs(row.change) < p.min_change_points) return null;
  const who = p.entity === 'brand' ? 'the brand' : 'a competitor';
  return {
    key: `${w.endDay}:${row.verdict}`,
    summary: `${p.metric} of ${who} went ${row.verdict} ${Math.abs(row.change)} points over the last ${p.window_days} days (${row.previous} → ${row.current})`,
    details: { metric: p.metric, entity: p.entity, window_end_day: w.endDay, direction: row.verdict, ...row },
  };
}

async function competitorOvertakes(shared: Shared, rule: AlertRuleView): Promise<Firing | null> {
  const p = rule.params as { metric: WindowMetric; competitor_id: string; window_days: number };
  const c = await shared.comparison(p.metric, p.window_days);
  if (!c) return null;
  const { w } = c;
  const brand = rowOf(c, 'brand');
  const rival = rowOf(c, p.competitor_id);
  if (!brand || !rival || brand.current === null || rival.current === null || brand.previous === null || rival.previous === null) return null;
  const noise = (r: ComparisonRow) => r.verdict === 'within_noise' || r.verdict === 'insufficient_data';
  // it passes the brand in this window, was not ahead before, and neither side's move is noise
  if (!(rival.current > brand.current && rival.previous <= brand.previous) || noise(brand) || noise(rival)) return null;
  return {
    key: `${w.endDay}:overtaken`,
    summary: `a competitor passed the brand on ${p.metric} over the last ${p.window_days} days (${rival.current} against ${brand.current})`,
    details: { metric: p.metric, competitor_id: p.competitor_id, window_end_day: w.endDay, brand, competitor: rival },
  };
}

async function runFailed(shared: Shared, rule: AlertRuleView): Promise<Firing | null> {
  const p = rule.params as { min_failed_percent: number };
  const run = shared.lastRun;
  if (!run) return null;
  const percent = Math.round((10_000 * run.failed) / run.total) / 100;
  if (percent < p.min_failed_percent || run.failed === 0) return null;
  return {
    key: `run:${run.id}:failed`,
    summary: `${run.failed} of ${run.total} answers of the run of ${dayOf(new Date(run.day))} failed (${percent} %)`,
    details: { run_id: run.id, total: run.total, failed: run.failed, failed_percent: percent },
  };
}

/**
 * The access table: the last check's flags per rule (the baseline the next daily check is compared with); and the
 * daily pass's claims, one per (UTC day, website) with a lease (src/workers/alerts.ts). The claims replace the older
 * per-day table `alert_daily_passes`, left as it is (an instance of the version before still writes it).
 */
export async function migrateAlertAccess(db: Knex): Promise<void> {
  await db.raw(`create table if not exists alert_access_checks (rule_id uuid primary key, engines jsonb not null, checked_at timestamptz not null)`);
  await db.raw(`create table if not exists alert_daily_claims (
    day date not null, website_id uuid not null, lease_until timestamptz not null, done_at timestamptz, primary key (day, website_id))`);
}

/** Each engine's access flags (http and robots); a change of any of them fires (the first check is the baseline). */
async function accessChanged(deps: EvaluateDeps, rule: AlertRuleView): Promise<Firing | null> {
  if (!deps.checkAccess) return null;
  const site = await websiteById(deps.db, rule.website_id);
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

const EVALUATORS: Record<AlertKind, (deps: EvaluateDeps, r: AlertRuleView, shared: Shared) => Promise<Firing | null>> = {
  metric_change: (_, r, sh) => metricChange(sh, r),
  competitor_overtakes: (_, r, sh) => competitorOvertakes(sh, r),
  run_failed: (_, r, sh) => runFailed(sh, r),
  access_changed: accessChanged,
};

/**
 * Evaluates a website's enabled rules and fires what they find: one AlertFired per (rule, key), decided on the
 * rule's stream (two instances at once fire once), then an email to each of the rule's addresses through the outbox.
 * Returns the alerts this call fired.
 */
export async function evaluateWebsite(deps: EvaluateDeps, websiteId: string, trigger: Trigger, kinds?: AlertKind[]) {
  const read = await alertQueries.rulesToEvaluate(deps.db, websiteId);
  const rules = read.rules.filter(
    // the access check fetches the website: once a day, not at every run's end
    (rule) => (!kinds || kinds.includes(rule.kind)) && (rule.kind !== 'access_changed' || trigger === 'daily'),
  );
  const fired: ruleCommands.FiredAlert[] = [];
  if (!rules.length) return fired;
  const shared = new Shared(deps.db, websiteId, read.newest, read.lastRun, rules);
  for (const rule of rules) {
    const f = await EVALUATORS[rule.kind](deps, rule, shared);
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
  const site = await websiteById(deps.db, rule.website_id);
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
