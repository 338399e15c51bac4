import { createHash } from 'node:crypto';
import MailComposer from 'nodemailer/lib/mail-composer';
import { domainOfAddress, parseMailbox } from './address';
import type { RenderedEmail } from './templates';

/** The Message-ID of an email: its id at the sender's domain, the same on every attempt. */
export function messageIdFor(emailId: string, from: string): string {
  const mailbox = parseMailbox(from);
  if (!mailbox) throw new Error('MAIL_FROM is not one address');
  return `<${emailId}@${domainOfAddress(mailbox.address)}>`;
}

export interface Composed {
  emailId: string;
  from: string;
  to: string;
  /** when it was requested: the Date header, the same on every attempt */
  date: Date;
  rendered: RenderedEmail;
}

/**
 * The RFC 5322 message, byte for byte the same on every attempt (Message-ID, Date and MIME boundaries derive from the
 * email), so a copy delivered twice is the same message and mail systems that drop repeated Message-IDs drop it.
 */
export function composeMessage(c: Composed): Promise<Buffer> {
  const mail = new MailComposer({
    from: c.from,
    to: c.to,
    subject: c.rendered.subject,
    text: c.rendered.text,
    html: c.rendered.html,
    messageId: messageIdFor(c.emailId, c.from),
    date: c.date,
    baseBoundary: createHash('sha256').update(`boundary:${c.emailId}`).digest('hex').slice(0, 16),
    headers: { 'Auto-Submitted': 'auto-generated', 'X-Auto-Response-Suppress': 'All' },
  });
  return mail.compile().build();
}
