import { catalogue, type EventData } from './events';
import { deterministicId } from './ids';

export type CreditKind = EventData<'CreditsCharged'>['kind'];

/**
 * The one way an area records credits for a paid step: append this beside the step's outcome in the job's stream.
 * The id is derived from the job and the step, so a redelivered or resumed step never charges twice. The credit-usage
 * read model sums these with the engines' `CreditsUsed` (kinds `response`, `observation_judge`).
 */
export function creditsCharged(input: {
  kind: CreditKind;
  credits: number;
  website_id: string | null;
  ref_id: string;
  step: string;
  model?: string | null;
}) {
  return {
    id: deterministicId('credits-charged', input.kind, input.ref_id, input.step),
    type: 'CreditsCharged' as const,
    data: { kind: input.kind, credits: input.credits, website_id: input.website_id, ref_id: input.ref_id, model: input.model ?? null },
  };
}

/**
 * The one catalogue of credit kinds: the engines' `CreditsUsed` purposes, then every kind `CreditsCharged` takes (read
 * from its schema, so a kind added there is listed here). Usage answers list them in this order.
 */
export const CREDIT_KINDS = ['response', 'observation_judge', ...catalogue.CreditsCharged.shape.kind.options] as const;
export type AnyCreditKind = (typeof CREDIT_KINDS)[number];

/** Monthly credit allowance per plan (CONTRACT.md, credits): it resets at 00:00 UTC on the first of each month. */
export const MONTHLY_CREDITS: Record<'free' | 'pro' | 'enterprise', number> = { free: 1_000, pro: 25_000, enterprise: 250_000 };

/** The first instant of the UTC month after `at`: when the monthly allowance resets. */
export const nextMonthlyReset = (at: Date): Date => new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 1));
/** The first instant of `at`'s UTC month. */
export const monthStart = (at: Date): Date => new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1));

/** One UTC month of an organization's credits: the one-off credits granted in it and all the credits it used. */
export interface CreditMonth {
  granted: number;
  used: number;
}

/**
 * The one-off balance after `months` (oldest first, consecutive, the current month last): each month's grants are
 * added, then what the month used past the plan's monthly allowance is drawn from the balance, which never goes below
 * zero (use past both is not carried into a later grant). Rounded to micro-credits, as every credit figure.
 */
export function oneOffBalance(months: readonly CreditMonth[], allowance: number): number {
  let balance = 0;
  for (const m of months) {
    balance += m.granted;
    balance = Math.max(0, balance - Math.max(0, m.used - allowance));
  }
  return Math.round(balance * 1e6) / 1e6;
}
