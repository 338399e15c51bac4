import { z } from 'zod';
import { CREDIT_KINDS } from '../../src/domain/credits';

/** A scope's credits (CONTRACT.md): what is left this month of the plan's allowance, and of one-off credits. */
export const CreditsView = z.object({
  credits: z.object({
    total: z.number(),
    monthly: z.object({ balance: z.number(), next_reset_at: z.string() }),
    one_off: z.object({ balance: z.number() }),
    /** extension: credits this scope (the organization, the website, the group's websites) used this month */
    used_this_month: z.number(),
  }),
});
export type CreditsView = z.infer<typeof CreditsView>;

export const CreditRange = z.enum(['24h', '7d', '30d', '90d', 'all']);
export type CreditRange = z.infer<typeof CreditRange>;

/** MCP get_credit_usage: totals by kind over a range (every kind of the catalogue, in its order). */
export const CreditUsageView = z.object({
  range: CreditRange,
  start_at_utc: z.string().nullable(),
  end_at_utc: z.string(),
  total_credits: z.number(),
  by_kind: z.array(z.object({ kind: z.enum(CREDIT_KINDS), credits: z.number(), events: z.number().int() })),
});
export type CreditUsageView = z.infer<typeof CreditUsageView>;

export const CreditEventView = z.object({
  id: z.string(),
  occurred_at: z.string(),
  kind: z.enum(CREDIT_KINDS),
  credits: z.number(),
  website_id: z.string().nullable(),
  ref_id: z.string(),
});

/** MCP get_credit_usage_events: newest first; `next_offset` continues after the page's last event, null at the end. */
export const CreditEventsView = z.object({
  events: z.array(CreditEventView),
  next_offset: z.string().nullable().describe('Reads the next page; null at the end. Events recorded meanwhile never shift a later page'),
});
export type CreditEventsView = z.infer<typeof CreditEventsView>;
