import type { Knex } from 'knex';
import * as usageQueries from '../../queries/credits/usage';
import { type CreditScope, creditEvents, creditMonths, creditTotals, decodeOffset } from '../../queries/credits/usage';
import type { CreditEventsView, CreditRange, CreditsView, CreditUsageView } from '../../queries/credits/views';
import { groupWebsiteIds } from '../../queries/team/groups';
import { MONTHLY_CREDITS, monthStart, nextMonthlyReset, oneOffBalance } from '../domain/credits';
import { DomainErrorException, invalid, notFound } from '../domain/errors';
import { authorize, isUser, requireGlobal } from '../domain/principal';
import { type Caller, dbOf, websiteFor } from './context';

/**
 * Credits (spec, Remote tool server; CONTRACT.md "SEO recommendations, credits, prompt discovery"): the balances of an
 * organization, a website or a group, and the detailed usage tools. Every paid step records its credits as an event
 * (`CreditsUsed` of the engines, `CreditsCharged` of the jobs); the credits read model sums them.
 */

const BILLING_VIEW = { category: 'billing', level: 'view' } as const;

/** Organization-wide credit reads: a global key, or a signed-in user with billing view. */
function organizationWide(c: Caller): void {
  if (isUser(c.principal)) authorize(c.principal, BILLING_VIEW);
  else requireGlobal(c.principal);
}

/** An organization's one-off balance at `now`: its grants less what months used past the plan's allowance. */
export async function oneOffCredits(db: Knex, organizationId: string, plan: keyof typeof MONTHLY_CREDITS, now: Date): Promise<number> {
  return oneOffBalance(await creditMonths(db, organizationId, now), MONTHLY_CREDITS[plan]);
}

/** The balance every scope draws from is the organization's: the plan's monthly allowance, then one-off credits. */
async function balances(c: Caller, scope: CreditScope): Promise<CreditsView> {
  const now = new Date();
  const from = monthStart(now);
  const sum = async (s: CreditScope) => [...(await creditTotals(dbOf(c), s, from, now)).values()].reduce((a, t) => a + t.credits, 0);
  const orgUsed = await sum({ organizationId: c.principal.organizationId, websiteIds: null });
  const scopeUsed = scope.websiteIds === null ? orgUsed : await sum(scope);
  const allowance = MONTHLY_CREDITS[c.principal.plan];
  const monthly = Math.max(0, allowance - orgUsed);
  // one-off credits (operator grants) are drawn once a month has used its allowance
  const oneOff = await oneOffCredits(dbOf(c), c.principal.organizationId, c.principal.plan, now);
  const r = (n: number) => Math.round(n * 1e6) / 1e6;
  return {
    credits: {
      total: r(monthly + oneOff),
      monthly: { balance: r(monthly), next_reset_at: nextMonthlyReset(now).toISOString() },
      one_off: { balance: oneOff },
      used_this_month: r(scopeUsed),
    },
  };
}

export async function organizationCredits(c: Caller): Promise<CreditsView> {
  organizationWide(c);
  return balances(c, { organizationId: c.principal.organizationId, websiteIds: null });
}

export async function websiteCredits(c: Caller, websiteId: string): Promise<CreditsView> {
  const w = await websiteFor(c, websiteId, BILLING_VIEW);
  return balances(c, { organizationId: c.principal.organizationId, websiteIds: [w.id] });
}

/** A group's credits: its websites' (group management is global-only, and so is this). */
export async function groupCredits(c: Caller, groupId: string): Promise<CreditsView> {
  organizationWide(c);
  const sites = await groupWebsiteIds(dbOf(c), c.principal.organizationId, groupId);
  if (!sites) throw new DomainErrorException(notFound('Group not found'));
  return balances(c, { organizationId: c.principal.organizationId, websiteIds: sites });
}

const RANGE_MS: Record<Exclude<CreditRange, 'all'>, number> = {
  '24h': 86_400_000,
  '7d': 7 * 86_400_000,
  '30d': 30 * 86_400_000,
  '90d': 90 * 86_400_000,
};

export interface CreditWindow {
  website_id?: string;
  range: CreditRange;
  /** explicit bounds win over the range */
  start_at_utc?: Date;
  end_at_utc?: Date;
}

/** The detailed tools: a global key (spec, Authentication 4); website_id narrows to one website of the organization. */
async function windowOf(c: Caller, input: CreditWindow): Promise<{ scope: CreditScope; start: Date | null; end: Date }> {
  organizationWide(c);
  const scope: CreditScope = { organizationId: c.principal.organizationId, websiteIds: null };
  if (input.website_id) scope.websiteIds = [(await websiteFor(c, input.website_id, BILLING_VIEW)).id];
  const end = input.end_at_utc ?? new Date();
  const start = input.start_at_utc ?? (input.range === 'all' ? null : new Date(end.getTime() - RANGE_MS[input.range]));
  if (start && end.getTime() < start.getTime())
    throw new DomainErrorException(invalid(`end_at_utc (${end.toISOString()}) is before start_at_utc (${start.toISOString()})`));
  return { scope, start, end };
}

export async function creditUsage(c: Caller, input: CreditWindow): Promise<CreditUsageView> {
  const w = await windowOf(c, input);
  return usageQueries.creditUsage(dbOf(c), w.scope, { range: input.range, start: w.start, end: w.end });
}

export async function creditUsageEvents(c: Caller, input: CreditWindow & { page_size: number; next_offset?: string }): Promise<CreditEventsView> {
  const w = await windowOf(c, input);
  const after = input.next_offset === undefined ? null : decodeOffset(input.next_offset);
  if (input.next_offset !== undefined && !after) throw new DomainErrorException(invalid('next_offset: not an offset this tool gave'));
  return creditEvents(dbOf(c), w.scope, { start: w.start, end: w.end, after, pageSize: input.page_size });
}
