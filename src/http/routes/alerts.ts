import { z } from 'zod';
import { CreateAlertRule, UpdateAlertRule } from '../../../commands/alerts/rule';
import { AlertAnswer, AlertRuleAnswer, AlertRulesView, AlertsPage } from '../../../queries/alerts/views';
import { DeletedAnswer } from '../../../queries/webhooks/views';
import * as alerts from '../../app/alerts';
import { route, Uuid } from '../route';

const TAG = 'alerts';
const Params = z.object({ rule_id: Uuid });

/** Alert rules and alerts (global keys only): thin adapters over src/app/alerts.ts. */
export const alertRoutes = [
  route({
    method: 'POST',
    url: '/api/v1/alert-rules',
    summary: 'Create an alert rule of a website',
    tag: TAG,
    extension: true,
    body: CreateAlertRule,
    status: 201,
    responses: { 201: AlertRuleAnswer },
    handler: (ctx) => alerts.createAlertRule(ctx, ctx.body),
  }),
  route({
    method: 'GET',
    url: '/api/v1/alert-rules',
    summary: "A website's alert rules, oldest first",
    tag: TAG,
    extension: true,
    query: alerts.RulesQuery,
    responses: { 200: AlertRulesView },
    handler: (ctx) => alerts.listAlertRules(ctx, ctx.query.website_id),
  }),
  route({
    method: 'GET',
    url: '/api/v1/alert-rules/:rule_id',
    summary: 'One alert rule',
    tag: TAG,
    extension: true,
    params: Params,
    responses: { 200: AlertRuleAnswer },
    handler: (ctx) => alerts.getAlertRule(ctx, ctx.params.rule_id),
  }),
  route({
    method: 'PATCH',
    url: '/api/v1/alert-rules/:rule_id',
    summary: "Change a rule's name, params, webhooks, emails or enabled (only the fields given)",
    tag: TAG,
    extension: true,
    params: Params,
    body: UpdateAlertRule,
    responses: { 200: AlertRuleAnswer },
    handler: (ctx) => alerts.updateAlertRule(ctx, ctx.params.rule_id, ctx.body),
  }),
  route({
    method: 'DELETE',
    url: '/api/v1/alert-rules/:rule_id',
    summary: 'Delete an alert rule (its alerts stay listed)',
    tag: TAG,
    extension: true,
    params: Params,
    responses: { 200: DeletedAnswer },
    handler: (ctx) => alerts.deleteAlertRule(ctx, ctx.params.rule_id),
  }),
  route({
    method: 'GET',
    url: '/api/v1/alerts',
    summary: "A page of a website's alerts, newest first",
    tag: TAG,
    extension: true,
    query: alerts.AlertsQuery,
    responses: { 200: AlertsPage },
    handler: (ctx) => alerts.listAlerts(ctx, ctx.query),
  }),
  route({
    method: 'POST',
    url: '/api/v1/alerts/:alert_id/acknowledge',
    summary: 'Acknowledge an alert',
    tag: TAG,
    extension: true,
    params: z.object({ alert_id: Uuid }),
    responses: { 200: AlertAnswer },
    handler: (ctx) => alerts.acknowledgeAlert(ctx, ctx.params.alert_id),
  }),
];
