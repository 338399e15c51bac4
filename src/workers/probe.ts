import { type EventData, type EventOf, exhaustive } from '../domain/events';
import type { SlotPool } from '../limits/slots';
import { type JobSpec, perWebsite, WORKER_NAME } from './jobs';

/** The probe's running caps: SEO jobs' (4 per website, 16 in all), so a probe run shows caps at work. */
export const PROBE_SLOTS: SlotPool = { name: 'probe', perScope: 4, overall: 16 };

export interface ProbeState {
  requested: EventData<'ProbeRequested'> | null;
  /** steps completed */
  done: number;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export interface ProbeOptions {
  /** the step's work: waits step_ms (tests hold a step here) */
  work?: (step: number, requested: EventData<'ProbeRequested'>) => Promise<void>;
  slots?: SlotPool;
}

/**
 * The reference job: `steps` steps of `step_ms` each, every one recorded with the worker that did it, the last one
 * ending the job (or the step `fail_at_step` failing it). It exercises what every job relies on: caps, redelivery,
 * crash recovery, allowance settlement.
 */
type ProbeEvent = EventOf<'ProbeRequested' | 'ProbeStepCompleted'>;

export function probeJob(options: ProbeOptions = {}): JobSpec<ProbeState, ProbeEvent> {
  const work = options.work ?? ((_step, r) => sleep(r.step_ms));
  return {
    kind: 'probe',
    aggregate: {
      types: ['ProbeRequested', 'ProbeStepCompleted'],
      initial: () => ({ requested: null, done: 0 }),
      evolve(s, e) {
        switch (e.type) {
          case 'ProbeRequested':
            return { ...s, requested: e.data };
          case 'ProbeStepCompleted':
            return { ...s, done: Math.max(s.done, e.data.step) };
          default:
            return exhaustive(e, s);
        }
      },
    },
    slots: perWebsite(options.slots ?? PROBE_SLOTS),
    reservation: (s) => (s.requested?.allowance ? { allowance: s.requested.allowance.name, period: s.requested.allowance.period } : null),
    next(s) {
      const r = s.requested;
      if (!r || s.done >= r.steps) return null;
      const step = s.done + 1;
      return {
        name: `step-${step}`,
        async run({ jobId }) {
          await work(step, r);
          if (r.fail_at_step === step) return { failed: { error_kind: 'probe_failed', message: `step ${step} failed as the probe asked` } };
          const events = [{ type: 'ProbeStepCompleted' as const, data: { job_id: jobId, step, worker: WORKER_NAME } }];
          return step === r.steps ? { events, succeeded: true as const } : { events };
        },
      };
    },
  };
}
