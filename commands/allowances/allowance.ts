import { type DomainError, notFound } from '../../src/domain/errors';
import { type DomainEvent, type EventData, type EventsOf, exhaustive, allowanceEvents } from '../../src/domain/events';
import { typesOf } from '../../src/domain/event-lists';
import { deterministicId } from '../../src/domain/ids';
import { type Aggregate, type CommandContext, type Decision, handle } from '../handle';

/** One period of one allowance of an organization: every reservation and settlement of it, decided here. */
export const allowanceStream = (organizationId: string, allowance: string, period: string) => `allowance-${organizationId}-${allowance}-${period}`;

/** The UTC calendar month of a time, `YYYY-MM`: the period of monthly allowances. */
export const monthOf = (at: Date) => at.toISOString().slice(0, 7);

export interface Reservation {
  amount: number;
  subject: string;
  on_failure: 'consumed' | 'released';
  /** reserved: the job is under way; then how it was settled */
  state: 'reserved' | 'consumed' | 'released';
  /** how many times it was reserved: a released reservation is reserved again when its job is admitted again */
  round: number;
}

export interface AllowanceState {
  reservations: Map<string, Reservation>;
  /** reserved and consumed: what counts against the allowance */
  used: number;
}

export const ALLOWANCE_EVENT_TYPES = typesOf(allowanceEvents);
export type AllowanceEvent = EventsOf<typeof ALLOWANCE_EVENT_TYPES>;

export const Allowance: Aggregate<AllowanceState, AllowanceEvent> = {
  types: ALLOWANCE_EVENT_TYPES,
  initial: () => ({ reservations: new Map(), used: 0 }),
  evolve(s, e) {
    switch (e.type) {
      case 'AllowanceReserved': {
        const reservations = new Map(s.reservations);
        const round = (s.reservations.get(e.data.reservation_id)?.round ?? 0) + 1;
        reservations.set(e.data.reservation_id, {
          amount: e.data.amount,
          subject: e.data.subject,
          on_failure: e.data.on_failure,
          state: 'reserved',
          round,
        });
        return { reservations, used: s.used + e.data.amount };
      }
      case 'AllowanceSettled': {
        const r = s.reservations.get(e.data.reservation_id);
        if (r?.state !== 'reserved') return s;
        const reservations = new Map(s.reservations);
        reservations.set(e.data.reservation_id, { ...r, state: e.data.outcome });
        return { reservations, used: e.data.outcome === 'released' ? s.used - r.amount : s.used };
      }
      default:
        return exhaustive(e, s);
    }
  },
};

export interface Reserve {
  allowance: string;
  period: string;
  /** the job's id: a second reservation with it is the first one again */
  reservation_id: string;
  subject: string;
  amount?: number;
  /** the period's allowance (the organization's plan says) */
  limit: number;
  on_failure: 'consumed' | 'released';
  /** the area's refusal when the allowance is spent (pitches: 403 `Pitch allowance exhausted`) */
  exhausted: DomainError;
}

export interface Reserved {
  /** false: this reservation existed already */
  reserved: boolean;
  used: number;
  limit: number;
}

/** A reservation's events keep their first ids in its first round; a later round's events carry the round. */
const roundId = (kind: string, cmd: { allowance: string; period: string; reservation_id: string }, round: number) =>
  round <= 1
    ? deterministicId(kind, cmd.allowance, cmd.period, cmd.reservation_id)
    : deterministicId(kind, cmd.allowance, cmd.period, cmd.reservation_id, `round-${round}`);

/**
 * A job's reservation, once: admitted again while reserved or consumed, nothing more is reserved. A released
 * reservation (its job never came to be, and an operator settled it so) is reserved again when the job is admitted
 * again (a retried Idempotency-Key): the job then runs, so it is charged like any other.
 */
export function decideReserve(s: AllowanceState, cmd: Reserve): Decision<Reserved> | DomainError {
  const before = s.reservations.get(cmd.reservation_id);
  if (before && before.state !== 'released') return { events: [], result: { reserved: false, used: s.used, limit: cmd.limit } };
  const amount = cmd.amount ?? 1;
  if (s.used + amount > cmd.limit) return cmd.exhausted;
  const event: DomainEvent & { id: string } = {
    id: roundId('allowance-reserved', cmd, (before?.round ?? 0) + 1),
    type: 'AllowanceReserved',
    data: {
      allowance: cmd.allowance,
      period: cmd.period,
      reservation_id: cmd.reservation_id,
      subject: cmd.subject,
      amount,
      limit: cmd.limit,
      on_failure: cmd.on_failure,
    },
  };
  return { events: [event], result: { reserved: true, used: s.used + amount, limit: cmd.limit } };
}

export interface Settle {
  allowance: string;
  period: string;
  reservation_id: string;
  /** how the job ended (the reservation's on_failure says what a failure does), or `gone`: it never came to be */
  ended: 'succeeded' | 'failed' | 'gone';
}

export type Settled = { outcome: 'consumed' | 'released'; settled: boolean };

export function decideSettle(s: AllowanceState, cmd: Settle): Decision<Settled> | DomainError {
  const r = s.reservations.get(cmd.reservation_id);
  if (!r) return notFound('Reservation not found');
  if (r.state !== 'reserved') return { events: [], result: { outcome: r.state, settled: false } };
  const outcome = cmd.ended === 'succeeded' ? 'consumed' : cmd.ended === 'gone' ? 'released' : r.on_failure;
  const data: EventData<'AllowanceSettled'> = { allowance: cmd.allowance, period: cmd.period, reservation_id: cmd.reservation_id, outcome };
  return {
    events: [{ id: roundId('allowance-settled', cmd, r.round), type: 'AllowanceSettled', data }],
    result: { outcome, settled: true },
  };
}

/** Reserves at admission, on the period's stream with its expected revision: racing admissions never pass the limit. */
export const reserveAllowance = (ctx: CommandContext, cmd: Reserve) =>
  handle(ctx, allowanceStream(ctx.organizationId, cmd.allowance, cmd.period), Allowance, (s) => decideReserve(s, cmd));

/** Settles when the job ends (or an operator finds it gone); a second settlement changes nothing. */
export const settleAllowance = (ctx: CommandContext, cmd: Settle) =>
  handle(ctx, allowanceStream(ctx.organizationId, cmd.allowance, cmd.period), Allowance, (s) => decideSettle(s, cmd));
