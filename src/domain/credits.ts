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
