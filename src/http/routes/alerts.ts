import { z } from 'zod';
import { CreateAlertRule, UpdateAlertRule } from '../../../commands/alerts/rule';
import { AlertAnswer, AlertRuleAnswer, AlertRulesView, AlertsPage } from '../../../queries/alerts/views';
import { DeletedAnswer } from '../../../queries/webhooks/views';
import * as alerts from '../../app/alerts';
import { routeGroup, Uuid, WebsiteQuery } from '../route';

const api = routeGroup({ tag: 'alerts', extension: true });
const Params = z.object({ rule_id: Uuid });

/** Alert rules and alerts (global keys only): thin adapters over src/app/alerts.ts. */
export const alertRoutes = [
  api.post('/api/v1/alert-rules', {
    summary: 'Create an alert rule of a website',
    body: CreateAlertRule,
    status: 201,
    answer: AlertRuleAnswer,
    handler: (ctx) => alerts.createAlertRule(ctx, ctx.body),
  }),
  api.get('/api/v1/alert-rules', {
    summary: "A website's alert rules, oldest first",
    query: WebsiteQuery,
    answer: AlertRulesView,
    handler: (ctx) => alerts.listAlertRules(ctx, ctx.query.website_id),
  }),
  api.get('/api/v1/alert-rules/:rule_id', {
    summary: 'One alert rule',
    params: Params,
    answer: AlertRuleAnswer,
    handler: (ctx) => alerts.getAlertRule(ctx, ctx.params.rule_id),
  }),
  api.patch('/api/v1/alert-rules/:rule_id', {
    summary: "Change a rule's name, params, webhooks, emails or enabled (only the fields given)",
    params: Params,
    body: UpdateAlertRule,
    answer: AlertRuleAnswer,
    handler: (ctx) => alerts.updateAlertRule(ctx, ctx.params.rule_id, ctx.body),
  }),
  api.delete('/api/v1/alert-rules/:rule_id', {
    summary: 'Delete an alert rule (its alerts stay listed)',
    params: Params,
    answer: DeletedAnswer,
    handler: (ctx) => alerts.deleteAlertRule(ctx, ctx.params.rule_id),
  }),
  api.get('/api/v1/alerts', {
    summary: "A page of a website's alerts, newest first",
    query: alerts.AlertsQuery,
    answer: AlertsPage,
    handler: (ctx) => alerts.listAlerts(ctx, ctx.query),
  }),
  api.post('/api/v1/alerts/:alert_id/acknowledge', {
    summary: 'Acknowledge an alert',
    params: z.object({ alert_id: Uuid }),
    answer: AlertAnswer,
    handler: (ctx) => alerts.acknowledgeAlert(ctx, ctx.params.alert_id),
  }),
];
