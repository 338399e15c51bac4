import { type EventsOf, type EventType, exhaustive, isEventOf } from './events';

/**
 * Every kind of job: the event that requests one (opening its stream `<kind>-<job_id>`) and the events from outside
 * that give a waiting job work again (a brief approved). A new kind is one line here: the jobs read model, the bus
 * relay and the kind's workers read it.
 */
export const JOB_KINDS = {
  probe: { requested: 'ProbeRequested' },
  aivalue: { requested: 'AiValueRequested' },
  pillar_research: { requested: 'PillarResearchRequested' },
  seo: { requested: 'SeoRecommendationsRequested' },
  discovery: { requested: 'PromptDiscoveryRequested' },
  pitch: { requested: 'PitchRequested' },
  content: { requested: 'ContentGenerationRequested', resumeOn: ['ContentBriefApproved', 'ContentDeleted'] },
} as const satisfies Record<string, JobKindDefinition>;

export interface JobKindDefinition {
  requested: EventType;
  resumeOn?: readonly EventType[];
}

export type JobKind = keyof typeof JOB_KINDS;
export const jobKind = (k: JobKind): JobKindDefinition => JOB_KINDS[k];
export const jobKinds = (): JobKind[] => Object.keys(JOB_KINDS) as JobKind[];
export const isJobKind = (k: string): k is JobKind => Object.hasOwn(JOB_KINDS, k);

export const jobStream = (kind: JobKind, jobId: string) => `${kind}-${jobId}`;

/** The kind and id of a job stream; null for any other stream. */
export function jobOfStream(streamId: string): { kind: JobKind; jobId: string } | null {
  const dash = streamId.indexOf('-');
  if (dash < 1) return null;
  const kind = streamId.slice(0, dash);
  return isJobKind(kind) ? { kind, jobId: streamId.slice(dash + 1) } : null;
}

export const JOB_LIFECYCLE_TYPES = ['JobStarted', 'JobSucceeded', 'JobFailed'] as const satisfies readonly EventType[];
export type JobLifecycleEvent = EventsOf<typeof JOB_LIFECYCLE_TYPES>;
export const isJobLifecycleEvent = isEventOf(JOB_LIFECYCLE_TYPES);
export const jobRequestTypes = (): EventType[] => jobKinds().map((k) => jobKind(k).requested);
/** What the job workers consume from the bus: requests and resumes. */
export const jobTriggerTypes = (): EventType[] => [...new Set(jobKinds().flatMap((k) => [jobKind(k).requested, ...(jobKind(k).resumeOn ?? [])]))];

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
