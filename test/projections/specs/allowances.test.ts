import { randomUUID } from 'node:crypto';
import { describe, it } from 'vitest';
import { allowancesProjection } from '../../../projections/allowances';
import { event, projectionSpec, T0, T1 } from '../../support/projection-spec';

const { org, given } = projectionSpec(allowancesProjection);
const job = randomUUID();

const reserved = (reservation_id: string, meta = {}) =>
  event(
    'AllowanceReserved',
    { allowance: 'pitch', period: '2026-03', reservation_id, subject: `pitch-${reservation_id}`, amount: 1, limit: 5, on_failure: 'released' },
    { meta },
  );
const settled = (outcome: 'consumed' | 'released', meta = {}) =>
  event('AllowanceSettled', { allowance: 'pitch', period: '2026-03', reservation_id: job, outcome }, { meta });

describe('allowances read model: reservations of an allowance and how each was settled', () => {
  it('given nothing, when a job reserves an allowance, then an open reservation of the organization is counted in its period', async () => {
    await given()
      .when(reserved(job))
      .then({
        rm_allowance_reservations: [
          {
            organization_id: org,
            allowance: 'pitch',
            period: '2026-03',
            reservation_id: job,
            amount: 1,
            on_failure: 'released',
            state: 'reserved',
            reserved_at: T0,
            settled_at: null,
          },
        ],
      });
  });

  it('given a reservation, when it is settled, then it shows the outcome and when', async () => {
    await given(reserved(job))
      .when(settled('consumed', { time: T1 }))
      .then({ rm_allowance_reservations: [{ reservation_id: job, state: 'consumed', settled_at: T1 }] });
  });

  it('given a released reservation, when the job reserves again, then it is open again', async () => {
    await given(reserved(job), settled('released'))
      .when(reserved(job, { time: T1 }))
      .then({ rm_allowance_reservations: [{ reservation_id: job, state: 'reserved', reserved_at: T1, settled_at: null }] });
  });

  it('given two organizations reserving the same job id, when one settles, then the other reservation stays open', async () => {
    const theirs = randomUUID();
    await given(reserved(job), reserved(job, { organization_id: theirs }))
      .when(settled('consumed'))
      .then({
        rm_allowance_reservations: {
          columns: ['state'],
          where: { organization_id: theirs },
          rows: [{ state: 'reserved' }],
        },
      });
  });
});
