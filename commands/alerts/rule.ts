import { z } from 'zod';
import { notFound } from '../../src/domain/errors';
import { ALERT_KINDS, type EventData, type EventsOf, exhaustive, alertRuleEvents } from '../../src/domain/events';
import { typesOf } from '../../src/domain/event-lists';
import { newId } from '../../src/domain/ids';
import { boundedString, EmailAddress, textProblem, Uuid } from '../../src/domain/schemas';
import { type Aggregate, type CommandContext, handle, handleLive, handleNew } from '../handle';

/** One alert rule and the alerts it fired, folded from its stream `alert-rule-<id>`. */
export const alertRuleStream = (ruleId: string) => `alert-rule-${ruleId}`;

export const ALERT_RULE_EVENT_TYPES = typesOf(alertRuleEvents);
type AlertRuleEvent = EventsOf<typeof ALERT_RULE_EVENT_TYPES>;

export const ALERT_RULE_NOT_FOUND = 'Alert rule not found';
export const ALERT_NOT_FOUND = 'Alert not found';

export type AlertKind = EventData<'AlertRuleCreated'>['kind'];
export type FiredAlert = EventData<'AlertFired'>['alert'];

export interface AlertRuleState {
  status: 'none' | 'live' | 'deleted';
  /** the alert fired for each (window end day, direction) key */
  fired: Map<string, FiredAlert>;
  /** alert id -> acknowledged */
  alerts: Map<string, boolean>;
}

export const AlertRule: Aggregate<AlertRuleState, AlertRuleEvent> = {
  types: ALERT_RULE_EVENT_TYPES,
  initial: () => ({ status: 'none', fired: new Map(), alerts: new Map() }),
  evolve(s, e) {
    switch (e.type) {
      case 'AlertRuleCreated':
        return { ...s, status: 'live' };
      case 'AlertRuleUpdated':
        return s;
      case 'AlertRuleDeleted':
        return { ...s, status: 'deleted' };
      case 'AlertFired':
        return { ...s, fired: new Map([...s.fired, [e.data.key, e.data.alert]]), alerts: new Map([...s.alerts, [e.data.alert.id, false]]) };
      case 'AlertAcknowledged':
        return { ...s, alerts: new Map([...s.alerts, [e.data.alert_id, true]]) };
    }
    return exhaustive(e, s);
  },
};

export const METRICS = ['mention_rate', 'share_of_voice', 'citation_rate'] as const;
const Metric = z.enum(METRICS, { error: 'must be mention_rate, share_of_voice or citation_rate' });
const WindowDays = z
  .number({ error: 'must be a number' })
  .int('must be a whole number')
  .min(1, 'must be 1 to 90')
  .max(90, 'must be 1 to 90')
  .default(7);
const Percent = z.number({ error: 'must be a number' }).min(0, 'must be at least 0').max(100, 'must be at most 100');

/** Each kind's params with their defaults (CONTRACT "Webhooks and alerts"). */
export const PARAMS = {
  metric_change: z.strictObject({
    metric: Metric,
    entity: z.union([z.literal('brand'), Uuid], { error: 'must be "brand" or a competitor id' }).default('brand'),
    window_days: WindowDays,
    min_change_points: Percent.default(5),
  }),
  competitor_overtakes: z.strictObject({
    competitor_id: Uuid,
    metric: Metric.default('mention_rate'),
    window_days: WindowDays,
  }),
  access_changed: z.strictObject({}),
  run_failed: z.strictObject({
    min_failed_percent: Percent.default(10),
  }),
} as const;

const Emails = z.array(EmailAddress, { error: 'must be a list of email addresses' }).max(20, 'must list at most 20 emails');
const WebhookIds = z.array(Uuid, { error: 'must be a list of webhook ids' }).max(100);
const Name = boundedString(200);
/** A kind's params: checked against the kind when the rule's website is known; text in them is valid text first. */
const Params = z.record(z.string(), z.unknown(), { error: 'must be an object' }).superRefine((p, ctx) => {
  for (const [k, v] of Object.entries(p)) {
    const problem = typeof v === 'string' ? textProblem(v) : null;
    if (problem) ctx.addIssue({ code: 'custom', path: [k], message: problem });
  }
});

export const CreateAlertRule = z.strictObject({
  website_id: Uuid,
  name: Name,
  kind: z.enum(ALERT_KINDS, {
    error: 'must be metric_change, competitor_overtakes, access_changed or run_failed',
  }),
  params: Params.default({}),
  webhook_ids: WebhookIds.default([]),
  emails: Emails.default([]),
});
export type CreateAlertRule = z.infer<typeof CreateAlertRule>;

export const UpdateAlertRule = z.strictObject({
  name: Name.optional(),
  params: Params.optional(),
  webhook_ids: WebhookIds.optional(),
  emails: Emails.optional(),
  enabled: z.boolean({ error: 'must be true or false' }).optional(),
});
export type UpdateAlertRule = z.infer<typeof UpdateAlertRule>;

export function createAlertRule(ctx: CommandContext, input: Omit<CreateAlertRule, 'params'> & { params: Record<string, unknown> }) {
  return handleNew(ctx, alertRuleStream, AlertRule, (id) => ({ type: 'AlertRuleCreated', data: { rule_id: id, ...input } }));
}

export function updateAlertRule(ctx: CommandContext, id: string, patch: UpdateAlertRule) {
  return handleLive(ctx, alertRuleStream(id), AlertRule, ALERT_RULE_NOT_FOUND, () => {
    const data = Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined));
    return Object.keys(data).length === 0
      ? { events: [], result: { id } }
      : { events: [{ type: 'AlertRuleUpdated' as const, data: { rule_id: id, ...data } }], result: { id } };
  });
}

export function deleteAlertRule(ctx: CommandContext, id: string) {
  return handleLive(ctx, alertRuleStream(id), AlertRule, ALERT_RULE_NOT_FOUND, () => ({
    events: [{ type: 'AlertRuleDeleted' as const, data: { rule_id: id } }],
    result: { id },
  }));
}

/** Fires once per key: a second evaluation (this instance or another) of the same key appends nothing and names the alert fired before. */
export function fireAlert(ctx: CommandContext, ruleId: string, key: string, alert: Omit<FiredAlert, 'id' | 'rule_id'>) {
  return handle(ctx, alertRuleStream(ruleId), AlertRule, (s) => {
    const none = { fired: null as FiredAlert | null, earlier: s.fired.get(key) ?? null };
    if (s.status !== 'live' || none.earlier) return { events: [], result: none };
    const full: FiredAlert = { id: newId(), rule_id: ruleId, ...alert };
    return { events: [{ type: 'AlertFired' as const, data: { key, alert: full } }], result: { fired: full, earlier: null } };
  });
}

export function acknowledgeAlert(ctx: CommandContext, ruleId: string, alertId: string) {
  return handle(ctx, alertRuleStream(ruleId), AlertRule, (s) => {
    const acked = s.alerts.get(alertId);
    if (acked === undefined) return notFound(ALERT_NOT_FOUND);
    return acked
      ? { events: [], result: { id: alertId } }
      : { events: [{ type: 'AlertAcknowledged' as const, data: { alert_id: alertId, rule_id: ruleId } }], result: { id: alertId } };
  });
}
