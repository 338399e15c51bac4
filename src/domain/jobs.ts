import { type EventsOf, type EventType, exhaustive, isEventOf } from './events';
import { eventTypeList } from './event-lists';

/**
 * A kind of job: the event that requests one (opening its stream `<kind>-<job_id>`) and the events from outside that
 * give a waiting job work again (a brief approved). An area's manifest declares its kinds (src/areas/); the registry
 * hands the table of every kind (`JobKinds`) to the jobs read model, the bus relay and the workers.
 */
export interface JobKindDefinition {
  requested: EventType;
  resumeOn?: readonly EventType[];
}

/** A kind's name: its streams' prefix. */
export type JobKind = string;
/** Every kind of job by its name, as the registry composes it from the areas' manifests. */
export type JobKinds = Readonly<Record<JobKind, JobKindDefinition>>;

export const jobStream = (kind: JobKind, jobId: string) => `${kind}-${jobId}`;

/** The kind and id of a job stream; null for any other stream. */
export function jobOfStream(kinds: JobKinds, streamId: string): { kind: JobKind; jobId: string } | null {
  const dash = streamId.indexOf('-');
  if (dash < 1) return null;
  const kind = streamId.slice(0, dash);
  return Object.hasOwn(kinds, kind) ? { kind, jobId: streamId.slice(dash + 1) } : null;
}

export const JOB_LIFECYCLE_TYPES = eventTypeList('JobStarted', 'JobSucceeded', 'JobFailed');
export type JobLifecycleEvent = EventsOf<typeof JOB_LIFECYCLE_TYPES>;
export const isJobLifecycleEvent = isEventOf(JOB_LIFECYCLE_TYPES);
export const jobRequestTypes = (kinds: JobKinds): EventType[] => Object.values(kinds).map((k) => k.requested);
/** What a kind's workers consume from the bus: its requests and resumes. */
export const jobTriggers = (k: JobKindDefinition): EventType[] => [k.requested, ...(k.resumeOn ?? [])];
/** What the job workers consume from the bus: requests and resumes. */
export const jobTriggerTypes = (kinds: JobKinds): EventType[] => [...new Set(Object.values(kinds).flatMap(jobTriggers))];

/** queued: requested, waiting for a slot or a worker; running: started; then one of the two ends. */
export type JobStatus = 'queued' | 'running' | 'succeeded' | 'failed';

export interface JobLifecycle {
  status: JobStatus;
  error_kind: string | null;
  error: string | null;
}

export const initialLifecycle = (): JobLifecycle => ({ status: 'queued', error_kind: null, error: null });

/** A job's lifecycle from its stream's lifecycle events (the kind's own events are its spec's). */
export function evolveLifecycle(s: JobLifecycle, e: JobLifecycleEvent): JobLifecycle {
  switch (e.type) {
    case 'JobStarted':
      return s.status === 'queued' ? { ...s, status: 'running' } : s;
    case 'JobSucceeded':
      return { ...s, status: 'succeeded' };
    case 'JobFailed':
      return { status: 'failed', error_kind: e.data.error_kind, error: e.data.message };
    default:
      return exhaustive(e, s);
  }
}

export const isFinished = (s: JobLifecycle) => s.status === 'succeeded' || s.status === 'failed';
