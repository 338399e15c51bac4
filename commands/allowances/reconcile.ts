import type { Knex } from 'knex';
import { isDomainError } from '../../src/domain/errors';
import { decodeEvent } from '../../src/domain/events';
import { evolveLifecycle, initialLifecycle, isJobLifecycleEvent } from '../../src/domain/jobs';
import type { EventStore, Position } from '../../src/eventstore/port';
import type { CommandContext } from '../handle';
import { settleAllowance } from './allowance';

export interface OpenReservation {
  organization_id: string;
  allowance: string;
  period: string;
  reservation_id: string;
  /** the job's stream */
  subject: string;
  amount: number;
  reserved_at: string;
  /** what became of the job: never created (its admission died after reserving), still under way, or ended */
  job: 'gone' | 'queued' | 'running' | 'succeeded' | 'failed';
}

/**
 * Reservations still open after `olderThanMs` (default 10 minutes), each with what its job's stream says: an operator's
 * list of billing operations to reconcile (`npm run cli -- allowances:reconcile`).
 */
export async function openReservations(
  db: Knex,
  store: EventStore,
  options: { allowance?: string; olderThanMs?: number } = {},
): Promise<OpenReservation[]> {
  const q = db('rm_allowance_reservations')
    .where('state', 'reserved')
    .where('reserved_at', '<', new Date(Date.now() - (options.olderThanMs ?? 10 * 60_000)))
    .orderBy('reserved_at')
    .select('organization_id', 'allowance', 'period', 'reservation_id', 'subject', 'amount', 'reserved_at');
  if (options.allowance) q.where('allowance', options.allowance);
  const out: OpenReservation[] = [];
  for (const r of await q) {
    const events = await store.readStream(r.subject);
    const lifecycle = events
      .map((e) => decodeEvent(e.id, e.type, e.data, e.metadata.schema_version))
      .filter(isJobLifecycleEvent)
      .reduce(evolveLifecycle, initialLifecycle());
    out.push({ ...r, amount: Number(r.amount), reserved_at: new Date(r.reserved_at).toISOString(), job: events.length ? lifecycle.status : 'gone' });
  }
  return out;
}

/** Settles what can be: an ended job's reservation as the job's end says, a gone job's released; running ones stay. */
export async function settleOpenReservations(
  ctx: Pick<CommandContext, 'store' | 'actor'>,
  input: { open: readonly OpenReservation[] },
): Promise<{ result: { reservation_id: string; outcome: string }[]; position: Position | null }> {
  const settled: { reservation_id: string; outcome: string }[] = [];
  let position: Position | null = null;
  for (const r of input.open) {
    if (r.job === 'queued' || r.job === 'running') continue;
    const s = await settleAllowance(
      { ...ctx, organizationId: r.organization_id },
      { allowance: r.allowance, period: r.period, reservation_id: r.reservation_id, ended: r.job },
    );
    if (isDomainError(s) || !s.result.settled) continue;
    settled.push({ reservation_id: r.reservation_id, outcome: s.result.outcome });
    position = s.position ?? position;
  }
  return { result: settled, position };
}
