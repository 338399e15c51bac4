import { EMAIL_STREAM_PREFIX, type EventsOf, exhaustive, emailEvents } from '../../src/domain/events';
import { typesOf } from '../../src/domain/event-lists';
import { type Aggregate, type CommandContext, type Decision, handle } from '../handle';

/**
 * One email of the outbox, stream `email-<email_id>`:
 * requested → (sending → deferred)* → sending → sent | failed. A `sending` whose lease has passed is an attempt that
 * died mid-send (a crash): the next attempt takes it over.
 */
export interface EmailState {
  status: 'none' | 'requested' | 'sending' | 'deferred' | 'sent' | 'failed';
  email_id: string | null;
  template: string | null;
  /** the recipient and the template's parameters: null when the request is absent or they were erased */
  to: string | null;
  params: Record<string, unknown> | null;
  requested_at: string | null;
  /** attempts claimed so far */
  attempts: number;
  /** while sending: until when the attempt's worker holds it */
  lease_until: string | null;
  /** an earlier attempt ended without the server's answer, or was interrupted: it may have been delivered */
  uncertain: boolean;
}

export const emailStream = (emailId: string) => `${EMAIL_STREAM_PREFIX}${emailId}`;

export const EMAIL_EVENT_TYPES = typesOf(emailEvents);
export type EmailEvent = EventsOf<typeof EMAIL_EVENT_TYPES>;

export const Email: Aggregate<EmailState, EmailEvent> = {
  types: EMAIL_EVENT_TYPES,
  initial: () => ({
    status: 'none',
    email_id: null,
    template: null,
    to: null,
    params: null,
    requested_at: null,
    attempts: 0,
    lease_until: null,
    uncertain: false,
  }),
  evolve(s, e): EmailState {
    switch (e.type) {
      case 'EmailRequested':
        return {
          ...s,
          status: 'requested',
          email_id: e.data.email_id,
          template: e.data.template,
          to: e.data.to,
          params: e.data.params,
          requested_at: e.data.requested_at,
        };
      case 'EmailSending':
        // a claim over a claim: the earlier attempt died while sending
        return {
          ...s,
          status: 'sending',
          attempts: e.data.attempt,
          lease_until: e.data.lease_until,
          uncertain: s.uncertain || s.status === 'sending',
        };
      case 'EmailDeferred':
        return { ...s, status: 'deferred', lease_until: null, uncertain: s.uncertain || e.data.ambiguous };
      case 'EmailSent':
        return { ...s, status: 'sent', lease_until: null };
      case 'EmailFailed':
        return { ...s, status: 'failed', lease_until: null };
      default:
        return exhaustive(e, s);
    }
  },
};

export const isSettled = (s: EmailState) => s.status === 'sent' || s.status === 'failed';

/** The claim is held by a live worker: its lease has not passed. */
export const isHeld = (s: EmailState, now: Date) => s.status === 'sending' && s.lease_until !== null && Date.parse(s.lease_until) > now.getTime();

export type ClaimResult = { claimed: true; attempt: number; uncertain: boolean } | { claimed: false; why: 'unknown' | 'settled' | 'held' };

/**
 * Claims the next attempt: refused when the email is unknown, settled, or held by a live claim. The append's expected
 * revision makes one of two racing workers win; the other decides again and finds the claim held.
 */
export function decideClaim(s: EmailState, o: { message_id: string; now: Date; leaseMs: number }): Decision<ClaimResult> {
  if (s.status === 'none') return { events: [], result: { claimed: false, why: 'unknown' } };
  if (isSettled(s)) return { events: [], result: { claimed: false, why: 'settled' } };
  if (isHeld(s, o.now)) return { events: [], result: { claimed: false, why: 'held' } };
  const attempt = s.attempts + 1;
  const lease_until = new Date(o.now.getTime() + o.leaseMs).toISOString();
  return {
    events: [{ type: 'EmailSending', data: { email_id: s.email_id!, attempt, message_id: o.message_id, lease_until } }],
    // taking over a claim whose lease passed: that attempt may have reached the server
    result: { claimed: true, attempt, uncertain: s.uncertain || s.status === 'sending' },
  };
}

export type Outcome =
  | { kind: 'sent'; message_id: string; transport: 'smtp' | 'file'; response: string | null }
  | { kind: 'deferred'; reason: string; retry_at: string; ambiguous: boolean }
  | { kind: 'failed'; reason: string; permanent: boolean };

/**
 * The outcome of an attempt. A delivery is recorded unless the email is settled already (a worker that lost its claim
 * to a takeover still sent its copy); a deferral or a failure only by the attempt that holds the claim.
 */
export function decideOutcome(s: EmailState, attempt: number, o: Outcome, uncertain: boolean): Decision<{ recorded: boolean }> {
  const none = { events: [], result: { recorded: false } };
  if (s.status === 'none' || isSettled(s)) return none;
  const email_id = s.email_id!;
  if (o.kind === 'sent') {
    return {
      events: [
        {
          type: 'EmailSent',
          data: { email_id, attempt, message_id: o.message_id, transport: o.transport, response: o.response, possible_duplicate: uncertain },
        },
      ],
      result: { recorded: true },
    };
  }
  if (s.status !== 'sending' || s.attempts !== attempt) return none;
  if (o.kind === 'deferred') {
    return {
      events: [{ type: 'EmailDeferred', data: { email_id, attempt, reason: o.reason, retry_at: o.retry_at, ambiguous: o.ambiguous } }],
      result: { recorded: true },
    };
  }
  return {
    events: [{ type: 'EmailFailed', data: { email_id, attempts: attempt, reason: o.reason, permanent: o.permanent } }],
    result: { recorded: true },
  };
}

/** Gives up on an email that has nothing to send (erased, or its template no longer renders it) before any attempt. */
export function decideGiveUp(s: EmailState, reason: string, now: Date): Decision<{ recorded: boolean }> {
  if (s.status === 'none' || isSettled(s) || isHeld(s, now)) return { events: [], result: { recorded: false } };
  return {
    events: [{ type: 'EmailFailed', data: { email_id: s.email_id!, attempts: s.attempts, reason, permanent: true } }],
    result: { recorded: true },
  };
}

/** Claims an email's next attempt (the email worker, before it sends). */
export const claimEmail = (ctx: CommandContext, input: { email_id: string; message_id: string; now: Date; lease_ms: number }) =>
  handle(ctx, emailStream(input.email_id), Email, (s) => decideClaim(s, { message_id: input.message_id, now: input.now, leaseMs: input.lease_ms }));

/** Records what an attempt did: sent, deferred or failed. */
export const recordEmailOutcome = (ctx: CommandContext, input: { email_id: string; attempt: number; outcome: Outcome; uncertain: boolean }) =>
  handle(ctx, emailStream(input.email_id), Email, (s) => decideOutcome(s, input.attempt, input.outcome, input.uncertain));

/** Gives up on an email with nothing to send. */
export const giveUpEmail = (ctx: CommandContext, input: { email_id: string; reason: string; now: Date }) =>
  handle(ctx, emailStream(input.email_id), Email, (s) => decideGiveUp(s, input.reason, input.now));
