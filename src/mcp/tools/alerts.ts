import { z } from 'zod';
import { AlertAnswer, AlertsPage } from '../../../queries/alerts/views';
import { PageNum, PageSize, Uuid } from '../../domain/schemas';
import * as alerts from '../../app/alerts';
import { READS, tool } from '../tool';

/** Alerts for assistants, with REST's rules (src/app/alerts.ts). */
export const alertTools = [
  tool({
    name: 'list_alerts',
    title: 'List alerts',
    description: "A website's fired alerts, newest first: rule, kind, summary, details and whether acknowledged. Needs a global API key.",
    input: z.strictObject({
      website_id: Uuid.describe('The website'),
      status: z.enum(['open', 'acknowledged']).optional().describe('Only open or only acknowledged alerts (default both)'),
      page_num: PageNum(),
      page_size: PageSize(),
    }),
    output: AlertsPage,
    annotations: READS,
    handler: (ctx, input) => alerts.listAlerts(ctx, input),
  }),
  tool({
    name: 'acknowledge_alert',
    title: 'Acknowledge an alert',
    description: 'Marks a fired alert as acknowledged (again is no change). Needs a global API key.',
    input: z.strictObject({ alert_id: Uuid.describe('The alert') }),
    output: AlertAnswer,
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    handler: (ctx, input) => alerts.acknowledgeAlert(ctx, input.alert_id),
  }),
];
