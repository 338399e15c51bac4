import { z } from 'zod';
import { type DomainError, invalid } from '../../src/domain/errors';
import { deterministicId, newId } from '../../src/domain/ids';
import { parseMailbox } from '../../src/email/address';
import { checkParams, TEMPLATE_NAMES, type TemplateName, type TemplateParams } from '../../src/email/templates';
import { type CommandContext, type Handled, handle } from '../handle';
import { Email, type EmailEvent, type EmailState, emailStream } from './email';

export const RequestEmail = z.object({
  template: z.enum(TEMPLATE_NAMES),
  /** one address, no display name */
  to: z
    .string()
    .max(254)
    .refine((s) => parseMailbox(s)?.address === s, 'must be one email address'),
  params: z.record(z.string(), z.unknown()),
  /**
   * Makes the request idempotent: the same key (within the organization) is the same email, requested once and sent
   * once however often it is asked for (e.g. `invite-<invite id>`).
   */
  key: z.string().min(1).max(200).optional(),
});

/** A request typed by its template: `{ template: 'invitation', to, params: { inviter, organization, … } }`. */
export type EmailRequest = { [T in TemplateName]: { template: T; to: string; params: TemplateParams<T>; key?: string } }[TemplateName];

/** The id of the email a key names: a caller can find its email again (and its status) from the key alone. */
export const emailIdForKey = (organizationId: string, key: string) => deterministicId('email', organizationId, key);

/**
 * Records an email to send (the outbox's only entry): checks the recipient and the template's parameters, then
 * appends EmailRequested on the email's own stream. The email worker sends it; the caller never waits for SMTP.
 * Another request with the same key answers the first one's id and appends nothing.
 */
export async function requestEmail(
  ctx: CommandContext,
  request: EmailRequest,
): Promise<Handled<{ email_id: string; requested: boolean }> | DomainError> {
  const parsed = RequestEmail.safeParse(request);
  if (!parsed.success) {
    const i = parsed.error.issues[0];
    return invalid(`${i.path.join('.')} ${i.message}`);
  }
  const input = parsed.data;
  const params = checkParams(input.template, input.params);
  if (!params.ok) return invalid(params.message);
  const email_id = input.key ? emailIdForKey(ctx.organizationId, input.key) : newId();
  const requested_at = (ctx.now?.() ?? new Date()).toISOString();
  return handle<EmailState, { email_id: string; requested: boolean }, EmailEvent>(ctx, emailStream(email_id), Email, (s) =>
    s.status !== 'none'
      ? { events: [], result: { email_id, requested: false } }
      : {
          events: [
            {
              id: deterministicId('email-requested', email_id),
              type: 'EmailRequested',
              data: { email_id, template: input.template, to: input.to, params: params.params, requested_at },
            },
          ],
          result: { email_id, requested: true },
        },
  );
}
