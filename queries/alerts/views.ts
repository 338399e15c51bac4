import { z } from 'zod';
import { ALERT_KINDS } from '../../src/domain/events';

export const AlertRuleView = z.object({
  id: z.string(),
  website_id: z.string(),
  name: z.string(),
  kind: z.enum(ALERT_KINDS),
  params: z.record(z.string(), z.unknown()),
  webhook_ids: z.array(z.string()),
  emails: z.array(z.string()),
  enabled: z.boolean(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type AlertRuleView = z.infer<typeof AlertRuleView>;
export const AlertRuleAnswer = z.object({ rule: AlertRuleView });
export const AlertRulesView = z.object({ rules: z.array(AlertRuleView) });

export const AlertView = z.object({
  id: z.string(),
  rule_id: z.string(),
  website_id: z.string(),
  kind: z.string(),
  fired_at: z.string(),
  summary: z.string(),
  details: z.record(z.string(), z.unknown()),
  acknowledged_at: z.string().nullable(),
});
export type AlertView = z.infer<typeof AlertView>;
export const AlertAnswer = z.object({ alert: AlertView });
export const AlertsPage = z.object({ alerts: z.array(AlertView), page_num: z.number(), page_size: z.number(), has_more: z.boolean() });
