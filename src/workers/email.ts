import type { Knex } from 'knex';
import {
  type ClaimResult,
  claimEmail,
  Email,
  emailStream,
  giveUpEmail,
  isHeld,
  isSettled,
  type Outcome,
  recordEmailOutcome,
} from '../../commands/email/email';
import { type CommandContext, type Handled, load } from '../../commands/handle';
import { backoffFor } from '../bus/memory';
import type { Bus, BusMessage, Consumer } from '../bus/port';
import { type DomainError, isDomainError } from '../domain/errors';
import { type EventType, SYSTEM_ACTOR } from '../domain/events';
import { composeMessage, messageIdFor } from '../email/message';
import { renderEmail } from '../email/templates';
import { classifySendError, type MailTransport } from '../email/transport';
import type { Logger } from '../logger';
import { systemContext } from './context';
import { type BusWorkerDeps, startWorker } from './worker';
import { sweepEvery } from './every';
import { overdueEmails } from '../../queries/email/emails';

export const EMAIL_WORKER = 'email-workers';
export const EMAIL_WORKER_TYPES: readonly EventType[] = ['EmailRequested'];

export const EMAIL_DEFAULTS = {
  maxAttempts: 5,
  backoffMs: [30_000, 120_000, 600_000, 1_800_000] as readonly number[],
  sendTimeoutMs: 60_000,
  leaseMarginMs: 30_000,
  concurrency: 4,
};

export interface EmailWorkerDeps extends BusWorkerDeps {
  transport: MailTransport;
  /** MAIL_FROM */
  from: string;
  now?: () => Date;
  /** attempts before an email is given up (default 5) */
  maxAttempts?: number;
  /** waits before the next attempt after a failed one (default 30 s, 2 min, 10 min, 30 min) */
  backoffMs?: readonly number[];
  /** one attempt's limit: the connection is closed after it (default 60 s) */
  sendTimeoutMs?: number;
  /** how much longer than an attempt's limit a claim holds, for clocks that differ between instances (default 30 s) */
  leaseMarginMs?: number;
  concurrency?: number;
}

export type Delivery = 'sent' | 'deferred' | 'failed' | 'settled' | 'held' | 'unknown';

/** A deferral: the bus delivers the message again after its backoff. */
export class EmailDeferredError extends Error {}

const MARK_TRIES = 5;

/** Records an attempt's outcome; the message went out, so a passing store failure must not lose that: tried again. */
async function record(
  ctx: CommandContext,
  command: (ctx: CommandContext) => Promise<Handled<{ recorded: boolean }> | DomainError>,
): Promise<boolean> {
  for (let i = 1; ; i++) {
    try {
      const r = await command(ctx);
      return !isDomainError(r) && r.result.recorded;
    } catch (err) {
      if (i >= MARK_TRIES) throw err;
      await new Promise((r) => setTimeout(r, 100 * 2 ** (i - 1)));
    }
  }
}

/**
 * One email, from its stream: claims an attempt (record), sends (send), records the outcome (mark). A crash between
 * send and mark leaves a claim whose lease passes; the next attempt (the sweeper sends the email again) takes it over
 * and sends again with the same Message-ID, or, with the file transport, finds the file and sends nothing.
 */
export async function deliverEmail(deps: EmailWorkerDeps, msg: Pick<BusMessage, 'id' | 'data' | 'metadata'>): Promise<Delivery> {
  const emailId = (msg.data as { email_id?: unknown }).email_id;
  if (typeof emailId !== 'string') return 'unknown';
  const now = () => deps.now?.() ?? new Date();
  const log = deps.logger.child({ worker: EMAIL_WORKER, email_id: emailId });
  const ctx = systemContext(deps.store, msg, deps.now);
  const { state } = await load(deps.store, emailStream(emailId), Email);
  if (state.status === 'none') return 'unknown';
  if (isSettled(state)) return 'settled';
  if (isHeld(state, now())) return 'held';

  const rendered =
    state.to && state.params && state.template
      ? renderEmail(state.template, state.params)
      : { error: 'the recipient or the content was erased before it was sent' };
  if ('error' in rendered) {
    const recorded = await record(ctx, (c) => giveUpEmail(c, { email_id: emailId, reason: rendered.error, now: now() }));
    if (recorded) log.error({ template: state.template, reason: rendered.error }, 'email failed: nothing to send');
    return recorded ? 'failed' : 'settled';
  }

  const message_id = messageIdFor(emailId, deps.from);
  const sendTimeoutMs = deps.sendTimeoutMs ?? EMAIL_DEFAULTS.sendTimeoutMs;
  const claimed = await claimEmail(ctx, {
    email_id: emailId,
    message_id,
    now: now(),
    lease_ms: sendTimeoutMs + (deps.leaseMarginMs ?? EMAIL_DEFAULTS.leaseMarginMs),
  });
  if (isDomainError(claimed)) return 'unknown';
  const claim: ClaimResult = claimed.result;
  if (!claim.claimed) return claim.why === 'held' ? 'held' : claim.why;
  const { attempt } = claim;
  let uncertain = claim.uncertain;
  if (uncertain) log.warn({ attempt }, 'an earlier attempt of this email ended without an answer from the server');

  let outcome: Outcome | null = null;
  if (uncertain && deps.transport.delivered) {
    // a transport that can look tells whether the interrupted attempt finished: either way nothing is sent twice
    if (await deps.transport.delivered(emailId))
      outcome = { kind: 'sent', message_id, transport: deps.transport.kind, response: 'delivered by an earlier attempt' };
    uncertain = false;
  }
  if (!outcome) {
    try {
      const raw = await composeMessage({ emailId, from: deps.from, to: state.to!, date: new Date(state.requested_at!), rendered });
      const { response } = await deps.transport.send({ emailId, from: deps.from, to: state.to!, raw, signal: AbortSignal.timeout(sendTimeoutMs) });
      outcome = { kind: 'sent', message_id, transport: deps.transport.kind, response };
    } catch (err) {
      const f = classifySendError(err);
      const maxAttempts = deps.maxAttempts ?? EMAIL_DEFAULTS.maxAttempts;
      if (f.permanent || attempt >= maxAttempts) {
        outcome = { kind: 'failed', reason: f.permanent ? f.reason : `${attempt} attempts, the last: ${f.reason}`, permanent: f.permanent };
      } else {
        const wait = backoffFor(deps.backoffMs ?? EMAIL_DEFAULTS.backoffMs, attempt);
        outcome = { kind: 'deferred', reason: f.reason, retry_at: new Date(now().getTime() + wait).toISOString(), ambiguous: f.ambiguous };
      }
    }
  }

  await record(ctx, (c) => recordEmailOutcome(c, { email_id: emailId, attempt, outcome, uncertain }));
  const fields = { template: state.template, attempt, transport: deps.transport.kind };
  switch (outcome.kind) {
    case 'sent':
      log.info({ ...fields, message_id, possible_duplicate: uncertain }, 'email sent');
      return 'sent';
    case 'deferred':
      log.warn({ ...fields, reason: outcome.reason, retry_at: outcome.retry_at }, 'email deferred');
      return 'deferred';
    case 'failed':
      log.error({ ...fields, reason: outcome.reason, permanent: outcome.permanent }, 'email failed');
      return 'failed';
  }
}

/** The email workers of this instance: one durable consumer shared with every other instance. */
export function startEmailWorkers(deps: EmailWorkerDeps): Promise<Consumer> {
  const maxAttempts = deps.maxAttempts ?? EMAIL_DEFAULTS.maxAttempts;
  return startWorker({
    bus: deps.bus,
    name: EMAIL_WORKER,
    types: EMAIL_WORKER_TYPES,
    concurrency: deps.concurrency ?? EMAIL_DEFAULTS.concurrency,
    backoffMs: deps.backoffMs ?? EMAIL_DEFAULTS.backoffMs,
    // room for deliveries that find the email held or settled; beyond them the sweeper sends it again
    maxDeliver: maxAttempts + 3,
    logger: deps.logger,
    handle: async (msg) => {
      if ((await deliverEmail(deps, msg)) === 'deferred') throw new EmailDeferredError('email deferred: it is tried again after its backoff');
    },
  });
}

export interface EmailSweeperDeps {
  db: Knex;
  bus: Bus;
  logger: Logger;
  /** how long past its due time an email waits before it counts as lost (default 60 s) */
  minAgeMs?: number;
  limit?: number;
}

/**
 * Emails a worker should have moved on long ago (requested or deferred with no message on its way, a claim whose
 * worker died) are sent to the workers again. The message id derives from the email's last change: one message per
 * state, however many instances sweep (the bus drops repeated ids).
 */
export async function sweepEmails(deps: EmailSweeperDeps): Promise<number> {
  const age = `${Math.max(0, Math.round(deps.minAgeMs ?? 60_000))} milliseconds`;
  const rows = await overdueEmails(deps.db, age, deps.limit ?? 500);
  if (!rows.length) return 0;
  const time = new Date().toISOString();
  await deps.bus.publish(
    rows.map((r) => ({
      id: `${r.email_id}.due.${new Date(r.updated_at).getTime()}`,
      type: 'EmailRequested',
      // the worker reads the email from its stream: the id is all a message needs to carry
      data: { email_id: r.email_id },
      metadata: { organization_id: r.organization_id, website_id: null, actor: SYSTEM_ACTOR, correlation_id: r.email_id, causation_id: null, time },
      streamId: emailStream(r.email_id),
      position: '0:0',
    })),
  );
  deps.logger.warn({ emails: rows.length }, 'emails overdue sent to the workers again');
  return rows.length;
}

export function startEmailSweeper(deps: EmailSweeperDeps & { everyMs?: number }): { stop(): Promise<void> } {
  return sweepEvery(deps.everyMs ?? 30_000, deps.logger, 'sweep of overdue emails failed', () => sweepEmails(deps));
}
