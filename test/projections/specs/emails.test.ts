import { describe, it } from 'vitest';
import { emailsProjection } from '../../../projections/emails';
import { projectionSpec, streamOf, T1 } from '../../support/projection-spec';

const { org, given } = projectionSpec(emailsProjection);
const email = streamOf('email');
const id = email.id;

const requested = email.on('EmailRequested', {
  email_id: id,
  template: 'invite',
  to: 'a@example.com',
  params: {},
  requested_at: '2026-03-01T00:00:00.000Z',
});
const sending = (attempt: number) =>
  email.on('EmailSending', { email_id: id, attempt, message_id: `<m${attempt}@x>`, lease_until: '2026-03-01T00:05:00.000Z' });

describe('emails read model: the outbox, where each email stands', () => {
  it('given nothing, when an email is requested, then it is due now and holds no recipient', async () => {
    await given()
      .when(requested)
      .then({
        rm_emails: [
          {
            email_id: id,
            organization_id: org,
            template: 'invite',
            status: 'requested',
            attempts: 0,
            requested_at: '2026-03-01T00:00:00.000Z',
            due_at: '2026-03-01T00:00:00.000Z',
          },
        ],
      });
  });

  it('given an email being sent, when the transport takes it, then it is sent, not due, with the attempt and when', async () => {
    await given(requested, sending(1))
      .when(
        email.on(
          'EmailSent',
          { email_id: id, attempt: 1, message_id: '<m1@x>', transport: 'smtp', response: '250 ok', possible_duplicate: false },
          T1,
        ),
      )
      .then({ rm_emails: [{ email_id: id, status: 'sent', attempts: 1, message_id: '<m1@x>', due_at: null, sent_at: T1 }] });
  });

  it('given a second attempt under way, when the first attempt reports sent late, then the attempts stay 2', async () => {
    await given(requested, sending(1), sending(2))
      .when(email.on('EmailSent', { email_id: id, attempt: 1, message_id: '<m1@x>', transport: 'smtp', response: null, possible_duplicate: true }))
      .then({ rm_emails: [{ email_id: id, status: 'sent', attempts: 2, possible_duplicate: true }] });
  });

  it('given an attempt, when it is deferred, then it is due at the retry with the reason; failed for good, then due never', async () => {
    await given(requested, sending(1))
      .when(email.on('EmailDeferred', { email_id: id, attempt: 1, reason: '421 busy', retry_at: '2026-03-01T01:00:00.000Z', ambiguous: false }))
      .then({ rm_emails: [{ status: 'deferred', last_error: '421 busy', due_at: '2026-03-01T01:00:00.000Z' }] });
    await given(requested, sending(1))
      .when(email.on('EmailFailed', { email_id: id, attempts: 1, reason: '550 no such user', permanent: true }))
      .then({ rm_emails: [{ status: 'failed', last_error: '550 no such user', due_at: null }] });
  });

  it('given an email event on a stream that is not an email stream, then the outbox ignores it', async () => {
    await given()
      .when({ ...requested, stream: `import-${id}` })
      .then({ rm_emails: [] });
  });
});
