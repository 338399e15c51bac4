import { z } from 'zod';
import { type DomainError, notFound } from '../../src/domain/errors';
import { newId } from '../../src/domain/ids';
import { type CommandContext, type Decision, type Handled, handle } from '../handle';
import { Organization, type OrganizationState, organizationStream } from '../organizations/organization';

/** The most one grant may add: far above any plan's year of use, so a typo of a few zeros is refused. */
export const MAX_GRANT_CREDITS = 10_000_000;

export const GrantCredits = z.strictObject({
  credits: z
    .number({ error: 'must be a number' })
    .positive('must be above 0')
    .max(MAX_GRANT_CREDITS, `must be at most ${MAX_GRANT_CREDITS}`)
    .refine((n) => Math.round(n * 1e6) === n * 1e6, 'at most 6 decimals'),
  reason: z.string().trim().min(1, 'must not be empty').max(500, 'must be at most 500 characters').optional(),
});
export type GrantCredits = z.infer<typeof GrantCredits>;

/** A grant needs an organization that exists; it is recorded in the organization's stream. */
export function decideGrantCredits(s: OrganizationState, cmd: GrantCredits & { grant_id: string }): Decision<{ grant_id: string }> | DomainError {
  if (s.id === null) return notFound('Organization not found');
  return {
    events: [{ type: 'CreditsGranted', data: { grant_id: cmd.grant_id, credits: cmd.credits, reason: cmd.reason ?? null } }],
    result: { grant_id: cmd.grant_id },
  };
}

/** One-off credits for the context's organization (operator only: `npm run cli -- credits:grant`). */
export function grantCredits(ctx: CommandContext, input: GrantCredits): Promise<Handled<{ grant_id: string }> | DomainError> {
  const cmd = { ...input, grant_id: newId() };
  return handle(ctx, organizationStream(ctx.organizationId), Organization, (s) => decideGrantCredits(s, cmd));
}
