import type { Knex } from 'knex';
import { z } from 'zod';
import { organizationRow } from '../access';
import { iso, isoOrNull } from '../timestamps';

/** Where an email of the outbox stands (never its recipient or content). */
export const EmailView = z.object({
  email_id: z.string(),
  template: z.string(),
  status: z.enum(['requested', 'sending', 'deferred', 'sent', 'failed']),
  attempts: z.number().int(),
  message_id: z.string().nullable(),
  possible_duplicate: z.boolean(),
  last_error: z.string().nullable(),
  requested_at: z.string(),
  sent_at: z.string().nullable(),
});
export type EmailView = z.infer<typeof EmailView>;

/** An email of the organization, or null (another organization's is null too). */
export async function getEmail(db: Knex, organizationId: string, emailId: string): Promise<EmailView | null> {
  return (await organizationRow(db, 'rm_emails', organizationId, { email_id: emailId }, emailView)) ?? null;
}

const emailView = (r: any): EmailView => ({
  email_id: r.email_id,
  template: r.template,
  status: r.status,
  attempts: r.attempts,
  message_id: r.message_id,
  possible_duplicate: r.possible_duplicate,
  last_error: r.last_error,
  requested_at: iso(r.requested_at),
  sent_at: isoOrNull(r.sent_at),
});

/** Emails still to be sent whose due time is more than `age` (an SQL interval) past, oldest due first. */
export async function overdueEmails(
  db: Knex,
  age: string,
  limit: number,
): Promise<{ email_id: string; organization_id: string; updated_at: Date | string }[]> {
  return db('rm_emails')
    .whereIn('status', ['requested', 'deferred', 'sending'])
    .andWhere('due_at', '<', db.raw('now() - ?::interval', [age]))
    .orderBy('due_at')
    .limit(limit)
    .select('email_id', 'organization_id', 'updated_at');
}
