import { z } from 'zod';
import { catalogue } from '../../src/domain/events';

export const AlertRuleView = z.object({
  id: z.string(),
  ...catalogue.AlertRuleCreated.omit({ rule_id: true }).shape,
  // sealed in the log (null once erased); a rule the read model holds is not erased
  emails: z.array(z.string()),
  enabled: z.boolean(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type AlertRuleView = z.infer<typeof AlertRuleView>;
export const AlertRuleAnswer = z.object({ rule: AlertRuleView });
export const AlertRulesView = z.object({ rules: z.array(AlertRuleView) });

export const AlertView = z.object({
  ...catalogue.AlertFired.shape.alert.omit({ webhook_ids: true }).shape,
  acknowledged_at: z.string().nullable(),
});
export type AlertView = z.infer<typeof AlertView>;
export const AlertAnswer = z.object({ alert: AlertView });
export const AlertsPage = z.object({ alerts: z.array(AlertView), page_num: z.number(), page_size: z.number(), has_more: z.boolean() });
