import type { Knex } from 'knex';
import type { EventOf } from '../src/domain/events';
import type { TypedEvent } from '../src/eventstore/port';
import { type EventHandlers, type Projection, handlerProjection, migrateSql } from '../src/eventstore/projection';

/** A reservation's row key (the table's primary key): the organization, the allowance, its period and the reservation. */
const reservation = (e: TypedEvent<EventOf<'AllowanceReserved' | 'AllowanceSettled'>>) => ({
  organization_id: e.metadata.organization_id,
  allowance: e.data.allowance,
  period: e.data.period,
  reservation_id: e.data.reservation_id,
});

const handlers: EventHandlers<Knex.Transaction> = {
  async AllowanceReserved(e, trx) {
    await trx('rm_allowance_reservations')
      .insert({
        ...reservation(e),
        subject: e.data.subject,
        amount: e.data.amount,
        on_failure: e.data.on_failure,
        state: 'reserved',
        reserved_at: e.metadata.time,
      })
      // a released reservation reserved again (its job admitted again) is open again
      .onConflict(['organization_id', 'allowance', 'period', 'reservation_id'])
      .merge(['subject', 'amount', 'on_failure', 'state', 'reserved_at', 'settled_at']);
  },
  async AllowanceSettled(e, trx) {
    await trx('rm_allowance_reservations').where(reservation(e)).update({ state: e.data.outcome, settled_at: e.metadata.time });
  },
};

/** Allowance reservations and how each was settled: usage per period, and what an operator reconciles. */
export const allowancesProjection: Projection = handlerProjection(
  {
    name: 'allowances',
    version: 2,
    tables: ['rm_allowance_reservations'],
    migrate: migrateSql(`
        create table if not exists rm_allowance_reservations (
          organization_id uuid not null,
          allowance text not null,
          period text not null,
          reservation_id text not null,
          subject text not null,
          amount int not null,
          on_failure text not null,
          state text not null,
          reserved_at timestamptz not null,
          settled_at timestamptz,
          primary key (organization_id, allowance, period, reservation_id)
        );
        create index if not exists rm_allowance_reservations_open on rm_allowance_reservations (reserved_at) where state = 'reserved';`),
  },
  handlers,
);
