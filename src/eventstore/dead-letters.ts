import type { Knex } from 'knex';
import { type Position, positionToString, type RecordedEvent, type TypedEvent } from './port';
import { cutText } from '../domain/text';

/**
 * Events a projection set aside, per website (one website's bad event never stops the others): the event it could not
 * apply (`failed`, with the error) and that website's later events (`held`: they would be wrong without the earlier
 * one). `seq` keeps the log's order; a retry or a rebuild applies them again.
 */
export const DEAD_LETTERS = 'aivis_dead_letters';

export async function migrateDeadLetters(trx: Knex.Transaction): Promise<void> {
  await trx.raw(`
    create table if not exists ${DEAD_LETTERS} (
      seq bigserial not null,
      projection text not null,
      website_id text not null,
      event_id text not null,
      stream_id text not null,
      revision bigint not null,
      position text not null,
      type text not null,
      state text not null check (state in ('failed', 'held')),
      error text,
      recorded_at timestamptz not null default now(),
      primary key (projection, event_id)
    );
    create index if not exists ${DEAD_LETTERS}_site on ${DEAD_LETTERS} (website_id, projection);`);
}

/** An event a projection cannot read (its payload does not match the catalogue). */
export interface Unreadable {
  unreadable: RecordedEvent;
  reason: string;
}

/** What a batch holds once decoded: events to apply, and unreadable ones in their place in the log. */
export type Item = TypedEvent | Unreadable;

export const isUnreadable = (i: Item): i is Unreadable => 'unreadable' in i;

/** The website an event belongs to (its metadata's, else its payload's website_id); null for organization-level events. */
export function websiteOf(e: Pick<RecordedEvent, 'metadata' | 'data'>): string | null {
  if (e.metadata?.website_id) return e.metadata.website_id;
  const w = (e.data as { website_id?: unknown } | null)?.website_id;
  return typeof w === 'string' && w !== '' ? w : null;
}

/**
 * True when the error comes from the event's content and would come again (a value the read model cannot hold, a
 * broken constraint, a limit, a throw of the projection's own code on that data); false when the database or the
 * connection failed, which a retry of the same batch can get past.
 */
export function isPoison(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) return /^(22|23|54)/.test(code);
  return err instanceof TypeError || err instanceof RangeError || err instanceof SyntaxError;
}

/**
 * An error as recorded and shown (/readyz): a database error as its code and the database's own message, without the
 * statement and its values (an answer's text) that knex puts before it.
 */
export function errorText(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code !== 'string' || !/^[0-9A-Z]{5}$/.test(code)) return cutText(message, 500);
  const i = message.lastIndexOf(' - ');
  return cutText(`${code}: ${i >= 0 ? message.slice(i + 3) : message}`, 500);
}

/** An organization-level event (no website to set aside) that a projection cannot apply: the projection stops on it. */
export class PoisonEventError extends Error {
  constructor(
    readonly eventId: string,
    readonly eventType: string,
    readonly reason: string,
  ) {
    super(`event ${eventId} of type ${eventType} cannot be applied: ${reason}`);
  }
}

export interface Letter {
  event: RecordedEvent;
  state: 'failed' | 'held';
  error: string | null;
}

/** Records set-aside events (a repeat of one already recorded is ignored). */
export async function recordLetters(trx: Knex.Transaction, table: string, projection: string, letters: Letter[]): Promise<void> {
  for (let i = 0; i < letters.length; i += 500) {
    await trx(table)
      .insert(
        letters.slice(i, i + 500).map(({ event: e, state, error }) => ({
          projection,
          website_id: websiteOf(e),
          event_id: e.id,
          stream_id: e.streamId,
          revision: e.revision.toString(),
          position: positionToString(e.position as Position),
          type: e.type,
          state,
          error,
        })),
      )
      .onConflict(['projection', 'event_id'])
      .ignore();
  }
}
