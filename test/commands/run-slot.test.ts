import { describe, expect, it } from 'vitest';
import { decideEndRun, decideTakeRunSlot, RUN_IN_PROGRESS, RUN_SLOT_HOLD_MS, RunSlot } from '../../commands/responses/run-slot';
import type { DomainEvent } from '../../src/domain/events';
import { given } from '../support/given';
import { W } from './catalog-events';

const T0 = '2026-03-01T08:00:00.000Z';
const later = (ms: number) => new Date(Date.parse(T0) + ms).toISOString();
const slot = { website_id: W, schedule_id: null };
const taken = (run_id: string, at = T0): DomainEvent => ({
  type: 'RunSlotTaken',
  data: { run_id, ...slot, expires_at: later(RUN_SLOT_HOLD_MS + Date.parse(at) - Date.parse(T0)) },
});
const ended = (run_id: string, reason: 'finished' | 'expired' = 'finished'): DomainEvent => ({ type: 'RunEnded', data: { run_id, ...slot, reason } });

describe('one run in progress per schedule', () => {
  it('given a free slot, when a run starts, then it takes the slot until its hold runs out', () => {
    given(RunSlot)
      .when((s) => decideTakeRunSlot(s, { ...slot, run_id: 'r1', now: T0 }))
      .then([taken('r1')]);
    given(RunSlot, taken('r1'), ended('r1'))
      .when((s) => decideTakeRunSlot(s, { ...slot, run_id: 'r2', now: later(60_000) }))
      .then([taken('r2', later(60_000))]);
  });

  it('given a run holding the slot, when another starts, then 409 naming the run in progress', () => {
    given(RunSlot, taken('r1'))
      .when((s) => decideTakeRunSlot(s, { ...slot, run_id: 'r2', now: later(RUN_SLOT_HOLD_MS - 1) }))
      .then({ kind: 'conflict', message: RUN_IN_PROGRESS, details: { run: { run_id: 'r1' } } });
  });

  it('given the run holding the slot, when the same run starts again (a retried scheduler pass), then it holds it already', () => {
    const { result } = given(RunSlot, taken('r1'))
      .when((s) => decideTakeRunSlot(s, { ...slot, run_id: 'r1', now: later(1000) }))
      .then([]);
    expect(result).toBe('held');
  });

  it('given a run that ended, when it starts again, then nothing is written: it ran already', () => {
    const { result } = given(RunSlot, taken('r1'), ended('r1'))
      .when((s) => decideTakeRunSlot(s, { ...slot, run_id: 'r1', now: later(1000) }))
      .then([]);
    expect(result).toBe('ended');
  });

  it('given a hold that ran out, when another run starts, then the old run ends as expired and the new one takes the slot', () => {
    given(RunSlot, taken('r1'))
      .when((s) => decideTakeRunSlot(s, { ...slot, run_id: 'r2', now: later(RUN_SLOT_HOLD_MS) }))
      .then([ended('r1', 'expired'), taken('r2', later(RUN_SLOT_HOLD_MS))]);
  });
});

describe('the end of a run', () => {
  it('given the run holding the slot, when it finished, then its end frees the slot', () => {
    given(RunSlot, taken('r1'))
      .when((s) => decideEndRun(s, { ...slot, run_id: 'r1', reason: 'finished', now: later(5000) }))
      .then([ended('r1')]);
  });

  it('given its end recorded already, or another run holding the slot, then nothing is written (two instances may both try)', () => {
    given(RunSlot, taken('r1'), ended('r1'))
      .when((s) => decideEndRun(s, { ...slot, run_id: 'r1', reason: 'finished', now: later(5000) }))
      .then([]);
    given(RunSlot, taken('r1'), ended('r1', 'expired'), taken('r2'))
      .when((s) => decideEndRun(s, { ...slot, run_id: 'r1', reason: 'finished', now: later(5000) }))
      .then([]);
    given(RunSlot)
      .when((s) => decideEndRun(s, { ...slot, run_id: 'r9', reason: 'finished', now: T0 }))
      .then([]);
  });

  it('given a hold, then it expires only once its time has run out', () => {
    given(RunSlot, taken('r1'))
      .when((s) => decideEndRun(s, { ...slot, run_id: 'r1', reason: 'expired', now: later(RUN_SLOT_HOLD_MS - 1) }))
      .then([]);
    given(RunSlot, taken('r1'))
      .when((s) => decideEndRun(s, { ...slot, run_id: 'r1', reason: 'expired', now: later(RUN_SLOT_HOLD_MS) }))
      .then([ended('r1', 'expired')]);
  });
});
