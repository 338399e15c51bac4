import type { Knex } from 'knex';
import { EMAIL_STREAM_PREFIX } from '../src/domain/events';
import { type EventHandlers, type Projection, handlerProjection, migrateSql } from '../src/eventstore/projection';

const handlers: EventHandlers<Knex.Transaction> = {
  async EmailRequested(e, trx) {
    await trx('rm_emails')
      .insert({
        email_id: e.data.email_id,
        organization_id: e.metadata.organization_id,
        template: e.data.template,
        status: 'requested',
        requested_at: e.data.requested_at,
        due_at: e.data.requested_at,
        updated_at: e.metadata.time,
      })
      .onConflict('email_id')
      .ignore();
  },
  async EmailSending(e, trx) {
    await trx('rm_emails').where('email_id', e.data.email_id).update({
      status: 'sending',
      attempts: e.data.attempt,
      message_id: e.data.message_id,
      due_at: e.data.lease_until,
      updated_at: e.metadata.time,
    });
  },
  async EmailDeferred(e, trx) {
    await trx('rm_emails')
      .where('email_id', e.data.email_id)
      .update({ status: 'deferred', last_error: e.data.reason, due_at: e.data.retry_at, updated_at: e.metadata.time });
  },
  async EmailSent(e, trx) {
    const at = e.metadata.time;
    await trx('rm_emails')
      .where('email_id', e.data.email_id)
      .update({
        status: 'sent',
        // a worker that lost its claim to a takeover may record its own, earlier attempt
        attempts: trx.raw('greatest(attempts, ?)', [e.data.attempt]),
        message_id: e.data.message_id,
        possible_duplicate: e.data.possible_duplicate,
        due_at: null,
        sent_at: at,
        updated_at: at,
      });
  },
  async EmailFailed(e, trx) {
    await trx('rm_emails')
      .where('email_id', e.data.email_id)
      .update({ status: 'failed', last_error: e.data.reason, due_at: null, updated_at: e.metadata.time });
  },
};

/**
 * The outbox: one row per email with where it stands, never its recipient or content (those stay in the log, where
 * erasure can seal them). due_at is when a worker should have moved it on: the sweeper sends an email whose due_at
 * has long passed to the workers again (a message lost with an in-process bus, a claim whose worker died).
 */
export const emailsProjection: Projection = handlerProjection(
  {
    name: 'emails',
    version: 1,
    tables: ['rm_emails'],
    migrate: migrateSql(`
        create table if not exists rm_emails (
          email_id uuid primary key,
          organization_id uuid not null,
          template text not null,
          status text not null,
          attempts int not null default 0,
          message_id text,
          possible_duplicate boolean not null default false,
          last_error text,
          requested_at timestamptz not null,
          due_at timestamptz,
          sent_at timestamptz,
          updated_at timestamptz not null
        );
        create index if not exists rm_emails_due on rm_emails (due_at) where due_at is not null;`),
  },
  handlers,
  (e) => e.streamId.startsWith(EMAIL_STREAM_PREFIX),
);
