import { conflict, type DomainError } from '../../src/domain/errors';
import { type DomainEvent, type EventsOf, exhaustive } from '../../src/domain/events';
import { eventTypeList } from '../../src/domain/event-lists';
import { deterministicId } from '../../src/domain/ids';
import { type Aggregate, type CommandContext, type Decision, handle } from '../handle';

export const RUN_IN_PROGRESS = 'A run of this schedule is already in progress';

/**
 * How long a run may hold its schedule's slot. A run whose end is never recorded (its units lost for good, a crash
 * between taking the slot and writing the run) stops blocking its schedule then; no healthy run lasts this long.
 */
export const RUN_SLOT_HOLD_MS = 12 * 3_600_000;

/**
 * One stream per website and schedule selection (`default` for none): only the starts and ends of that schedule's
 * runs are written there, so concurrent starts conflict with each other and with nothing else.
 */
export const runSlotStream = (websiteId: string, scheduleId: string | null) => `runslot-${websiteId}-${scheduleId ?? 'default'}`;

export interface RunSlotState {
  /** the run in progress, and when its hold runs out */
  holder: { run_id: string; expires_at: string } | null;
  /** the runs that held the slot and ended */
  ended: ReadonlySet<string>;
}

export const RUN_SLOT_EVENT_TYPES = eventTypeList('RunSlotTaken', 'RunEnded');
export type RunSlotEvent = EventsOf<typeof RUN_SLOT_EVENT_TYPES>;

function fold(s: RunSlotState, e: RunSlotEvent, owned: boolean): RunSlotState {
  switch (e.type) {
    case 'RunSlotTaken': {
      const holder = { run_id: e.data.run_id, expires_at: e.data.expires_at };
      return owned ? Object.assign(s, { holder }) : { ...s, holder };
    }
    case 'RunEnded': {
      const holder = s.holder?.run_id === e.data.run_id ? null : s.holder;
      if (owned) {
        (s.ended as Set<string>).add(e.data.run_id);
        return Object.assign(s, { holder });
      }
      return { holder, ended: new Set(s.ended).add(e.data.run_id) };
    }
    default:
      return exhaustive(e, s);
  }
}

export const RunSlot: Aggregate<RunSlotState, RunSlotEvent> = {
  types: RUN_SLOT_EVENT_TYPES,
  initial: () => ({ holder: null, ended: new Set() }),
  evolve: (s, e) => fold(s, e, false),
  replay: { own: (s) => ({ holder: s.holder, ended: new Set(s.ended) }), apply: (s, e) => fold(s, e, true) },
};

export interface SlotRef {
  website_id: string;
  /** null: the default schedule */
  schedule_id: string | null;
}

/** taken: the run holds the slot now; held: it held it already (a retried start); ended: it ran and ended before */
export type SlotTaken = 'taken' | 'held' | 'ended';

const runEnded = (ref: SlotRef, runId: string, reason: 'finished' | 'expired'): DomainEvent & { id: string } => ({
  id: deterministicId('run-ended', runId),
  type: 'RunEnded',
  data: { run_id: runId, website_id: ref.website_id, schedule_id: ref.schedule_id, reason },
});

/**
 * One run in progress per schedule: the slot is taken unless another run holds it (409 naming that run). A hold past
 * its expiry is ended as expired and the slot taken over. `now` is an ISO timestamp.
 */
export function decideTakeRunSlot(s: RunSlotState, cmd: SlotRef & { run_id: string; now: string }): Decision<SlotTaken> | DomainError {
  if (s.ended.has(cmd.run_id)) return { events: [], result: 'ended' };
  const h = s.holder;
  if (h?.run_id === cmd.run_id) return { events: [], result: 'held' };
  const events: (DomainEvent & { id: string })[] = [];
  if (h) {
    if (cmd.now < h.expires_at) return conflict(RUN_IN_PROGRESS, { run: { run_id: h.run_id } });
    events.push(runEnded(cmd, h.run_id, 'expired'));
  }
  const expires_at = new Date(Date.parse(cmd.now) + RUN_SLOT_HOLD_MS).toISOString();
  events.push({
    id: deterministicId('run-slot-taken', cmd.run_id),
    type: 'RunSlotTaken',
    data: { run_id: cmd.run_id, website_id: cmd.website_id, schedule_id: cmd.schedule_id, expires_at },
  });
  return { events, result: 'taken' };
}

/**
 * Records the end of the run holding the slot, which frees it: finished (the caller saw every unit's outcome), or
 * expired (only once its hold ran out). Anything else (another run holds the slot, the end is already recorded)
 * appends nothing, so any number of instances may record the same end.
 */
export function decideEndRun(s: RunSlotState, cmd: SlotRef & { run_id: string; reason: 'finished' | 'expired'; now: string }): Decision<boolean> {
  const h = s.holder;
  if (!h || h.run_id !== cmd.run_id) return { events: [], result: false };
  if (cmd.reason === 'expired' && cmd.now < h.expires_at) return { events: [], result: false };
  return { events: [runEnded(cmd, h.run_id, cmd.reason)], result: true };
}

const nowOf = (ctx: CommandContext) => (ctx.now?.() ?? new Date()).toISOString();

export function takeRunSlot(ctx: CommandContext, ref: SlotRef, runId: string) {
  const now = nowOf(ctx);
  return handle({ ...ctx, websiteId: ref.website_id }, runSlotStream(ref.website_id, ref.schedule_id), RunSlot, (s) =>
    decideTakeRunSlot(s, { ...ref, run_id: runId, now }),
  );
}

export function endRun(ctx: CommandContext, ref: SlotRef, runId: string, reason: 'finished' | 'expired') {
  const now = nowOf(ctx);
  return handle({ ...ctx, websiteId: ref.website_id }, runSlotStream(ref.website_id, ref.schedule_id), RunSlot, (s) =>
    decideEndRun(s, { ...ref, run_id: runId, reason, now }),
  );
}
