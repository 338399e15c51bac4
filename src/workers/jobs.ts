import { hostname } from 'node:os';
import type { Knex } from 'knex';
import { settleAllowance } from '../../commands/allowances/allowance';
import { type Aggregate, type CommandContext, foldEvents, isEventFor } from '../../commands/handle';
import type { Delivery } from '../bus/memory';
import type { Engines } from '../engines/registry';
import type { Outbound } from '../net/safe-fetch';
import type { BusMessage, Consumer } from '../bus/port';
import { isDomainError } from '../domain/errors';
import { type DomainEvent, decodeEvent, type EventData, type EventOf, type EventType, SYSTEM_ACTOR } from '../domain/events';
import { deterministicId } from '../domain/ids';
import {
  evolveLifecycle,
  initialLifecycle,
  isFinished,
  isJobLifecycleEvent,
  JOB_LIFECYCLE_TYPES,
  type JobKind,
  type JobKinds,
  type JobLifecycle,
  type JobLifecycleEvent,
  jobOfStream,
  jobTriggers,
} from '../domain/jobs';
import { type EventStore, WrongExpectedRevisionError } from '../eventstore/port';
import { openedMessage } from '../bus/relay';
import { releaseHolds } from '../limits/holds';
import { admit, heartbeat, release, setState, type SlotPool, type SlotRow, uncapped } from '../limits/slots';
import { type BusWorkerDeps, startWorker } from './worker';
import { problemLog } from '../app/problem';
import { cutText } from '../domain/text';
import { noteUnrecorded, UNRECORDABLE, unrecordableReason } from './unrecorded';

export interface JobDeps extends BusWorkerDeps {
  db: Knex;
  /** every kind of job (the registry's, src/areas/): a stream's kind and its request */
  kinds: JobKinds;
  now?: () => Date;
}

/**
 * What a kind's steps reach besides their job's stream: the read models, the answer engines, the safe outbound
 * fetcher, the deployment's choices.
 */
export interface JobKindDeps {
  db: Knex;
  engines: Engines;
  outbound: Outbound;
  pitchModels: readonly string[];
  contentModel: string;
  now?: () => Date;
}

/** This process, as step events name it. */
export const WORKER_NAME = `${hostname()}:${process.pid}`;

export interface StepContext<S> {
  jobId: string;
  state: S;
  /** for commands a step issues: the system acting for the job's organization and website */
  command: CommandContext;
  /** 1 on the first delivery of the message this step runs under */
  attempt: number;
  /** the read models, for a step that reads what the website has (never to decide a rule: that is the stream's) */
  db: Knex;
}

/** Events a step appends; without an id, one derived from the job, the step and the event's place is given. */
export type StepEvent = DomainEvent & { id?: string };

export type StepOutcome =
  /** progress: the job goes on with its next step */
  { events: StepEvent[] } | { events?: StepEvent[]; succeeded: true } | { events?: StepEvent[]; failed: { error_kind: string; message: string } };

export interface JobStep<S> {
  /** unique within the job: its events' ids derive from it, so a step run twice appends once */
  name: string;
  /** the slow part; throwing makes the bus deliver the job again later (the last delivery fails the job) */
  run(ctx: StepContext<S>): Promise<StepOutcome>;
}

export interface JobSpec<S, E extends DomainEvent = any> {
  kind: JobKind;
  /** the kind's own state from its own events (the worker follows JobStarted/JobSucceeded/JobFailed itself) */
  aggregate: Aggregate<S, E>;
  /** the next step, or null when there is nothing to do until outside input arrives (its kind's resumeOn) */
  next(state: S): JobStep<S> | null;
  /** running caps (default: none) and the scope a job counts in (a website) */
  slots?: { pool: SlotPool; scopeOf(state: S): string };
  /** the allowance reserved at admission (its reservation id is the job id), settled when the job ends */
  reservation?(state: S): { allowance: string; period: string } | null;
  /** messages handled at once per instance (a job holds one for as long as it runs; default 16) */
  concurrency?: number;
  maxDeliver?: number;
  backoffMs?: readonly number[];
}

/** A one-step job's own state: its request, and whether the event that ends its one step is in the stream. */
export interface OneStepState<T extends EventType> {
  requested: EventData<T> | null;
  done: boolean;
}

/** The aggregate of a one-step job: `requestType` carries the request, `doneType` records its one step's outcome. */
export function oneStepAggregate<T extends EventType, D extends EventType>(requestType: T, doneType: D): Aggregate<OneStepState<T>, EventOf<T | D>> {
  return {
    types: [requestType, doneType] as EventOf<T | D>['type'][],
    initial: () => ({ requested: null, done: false }),
    evolve(s, e) {
      if (e.type === requestType) return { ...s, requested: e.data as EventData<T> };
      if (e.type === doneType) return { ...s, done: true };
      return s;
    },
  };
}

/** Running caps counted per website: the request's website. */
export const perWebsite = <S extends { requested: { website_id: string | null } | null }>(pool: SlotPool): JobSpec<S>['slots'] => ({
  pool,
  scopeOf: (s) => s.requested?.website_id ?? '',
});

export interface JobState<S> {
  lifecycle: JobLifecycle;
  area: S;
  /** the stream holds the kind's request: a stream of the kind's prefix without one (a tracked content item) is no job */
  requested: boolean;
}

export interface JobWorkerOptions {
  /** how often this instance says its running jobs are alive (default 10 s) */
  heartbeatMs?: number;
}

export interface JobWorker extends Consumer {
  readonly spec: JobSpec<any>;
  /** advances a job now, as a delivered message would (the sweeper's fallback; tests) */
  advance(msg: BusMessage, delivery?: Delivery): Promise<void>;
}

export const jobWorkerName = (kind: JobKind) => `jobs-${kind}`;
export const poolOf = (spec: JobSpec<any>): SlotPool => spec.slots?.pool ?? uncapped(spec.kind);

/** The job's first events up to its request, sent again to its workers as a message (a promotion, a sweep). */
export async function wakeJobs(
  deps: Pick<JobDeps, 'store' | 'bus' | 'logger' | 'kinds'>,
  rows: readonly Pick<SlotRow, 'job_id' | 'stream_id'>[],
  reason: string,
): Promise<number> {
  const messages: BusMessage[] = [];
  for (const row of rows) {
    const job = jobOfStream(deps.kinds, row.stream_id);
    if (!job) continue;
    const head = await deps.store.readStream(row.stream_id, { maxCount: 4 });
    const requested = head.find((e) => e.type === deps.kinds[job.kind].requested);
    if (!requested) continue;
    messages.push({ ...openedMessage(requested), id: `${requested.id}.${reason}` });
  }
  if (messages.length) await deps.bus.publish(messages);
  return messages.length;
}

/**
 * The workers of one kind of job on this instance: one durable consumer shared by every instance, fed with the kind's
 * request event (and its resumeOn events). A delivery advances the job from what its stream says: it takes a running
 * slot (or leaves the job queued), appends JobStarted, then runs step after step, each appended with ids derived from
 * the job and the step and with the revision it read, until the job ends or waits. A redelivered message, a second
 * instance or a sweep repeats nothing that was appended. A step's events the store refuses on their content end the job
 * as failed (`unrecordable`) at once. When the job ends its slot, its held places and its allowance
 * reservation are settled, and the queued jobs that now fit are woken.
 */
export async function startJobWorker<S, E extends DomainEvent>(
  spec: JobSpec<S, E>,
  deps: JobDeps,
  options: JobWorkerOptions = {},
): Promise<JobWorker> {
  const log = deps.logger.child({ job_kind: spec.kind });
  const pool = poolOf(spec);
  const kind = deps.kinds[spec.kind];
  if (!kind) throw new Error(`job kind ${spec.kind} is in no area's manifest`);
  const requestType = kind.requested;
  // the lifecycle's events, the kind's own and its request; the rest of a job stream (charges, its admission) is neither's
  const agg: Aggregate<JobState<S>, JobLifecycleEvent | E> = {
    types: [...new Set([...JOB_LIFECYCLE_TYPES, ...spec.aggregate.types, requestType])] as (JobLifecycleEvent | E)['type'][],
    initial: () => ({ lifecycle: initialLifecycle(), area: spec.aggregate.initial(), requested: false }),
    evolve: (s, e) => ({
      lifecycle: isJobLifecycleEvent(e) ? evolveLifecycle(s.lifecycle, e) : s.lifecycle,
      area: isEventFor(spec.aggregate, e) ? spec.aggregate.evolve(s.area, e) : s.area,
      requested: s.requested || e.type === requestType,
    }),
  };
  /** jobs with a step under way here: their heartbeats */
  const live = new Set<string>();
  /** one advance per job at a time in this process (a second trigger runs after it, on fresh state) */
  const advancing = new Map<string, Promise<void>>();

  async function finish(jobId: string, state: JobState<S>, ctx: CommandContext): Promise<void> {
    await wakeJobs(deps, await release(deps.db, pool, jobId), 'started');
    await releaseHolds(deps.db, jobId);
    const reservation = spec.reservation?.(state.area);
    if (reservation) {
      const r = await settleAllowance(ctx, {
        ...reservation,
        reservation_id: jobId,
        ended: state.lifecycle.status === 'succeeded' ? 'succeeded' : 'failed',
      });
      if (isDomainError(r)) log.warn({ job_id: jobId, ...reservation, error: r.message }, 'job ended without its allowance reservation');
    }
  }

  async function advance(msg: BusMessage, delivery?: Delivery): Promise<void> {
    const job = jobOfStream(deps.kinds, msg.streamId);
    if (!job || job.kind !== spec.kind) return;
    const stream = msg.streamId;
    const jobId = job.jobId;
    const ctx: CommandContext = {
      store: deps.store,
      organizationId: msg.metadata.organization_id,
      websiteId: msg.metadata.website_id ?? null,
      actor: SYSTEM_ACTOR,
      correlationId: msg.metadata.correlation_id,
      causationId: jobId,
      now: deps.now,
    };
    let state = agg.initial();
    let revision = -1n;
    const refresh = async () => {
      for (const e of await deps.store.readStream(stream, { fromRevision: revision + 1n })) {
        const d = decodeEvent(e.id, e.type, e.data, e.metadata.schema_version);
        if (isEventFor(agg, d)) state = agg.evolve(state, d);
        revision = e.revision;
      }
    };
    /** appends with the revision read; when the stream moved meanwhile, the state is read again instead */
    const append = async (events: (DomainEvent & { id: string })[]): Promise<void> => {
      const metadata = {
        organization_id: ctx.organizationId,
        website_id: ctx.websiteId,
        actor: ctx.actor,
        correlation_id: ctx.correlationId ?? jobId,
        causation_id: jobId,
        time: (deps.now?.() ?? new Date()).toISOString(),
      };
      let r: Awaited<ReturnType<EventStore['append']>>;
      try {
        r = await deps.store.append(
          stream,
          events.map((e) => ({ id: e.id, type: e.type, data: e.data, metadata })),
          revision,
        );
      } catch (err) {
        if (!(err instanceof WrongExpectedRevisionError)) throw err;
        return refresh();
      }
      if (r.noop) {
        await refresh();
      } else {
        // what was appended is what the stream now ends with: no need to read it back
        state = foldEvents(agg, events, state);
        revision = r.revision;
      }
    };

    await refresh();
    if (revision < 0n || !state.requested) return;
    if (isFinished(state.lifecycle)) return finish(jobId, state, ctx);
    const slot = await admit(deps.db, pool, { job_id: jobId, stream_id: stream, scope: spec.slots?.scopeOf(state.area) ?? '' });
    await wakeJobs(deps, slot.promoted, 'started');
    if (slot.state === 'queued') return;
    let waiting = slot.state === 'waiting';
    for (;;) {
      if (isFinished(state.lifecycle)) return finish(jobId, state, ctx);
      if (state.lifecycle.status === 'queued') {
        await append([{ id: deterministicId('job-started', jobId), type: 'JobStarted', data: { job_id: jobId, kind: spec.kind } }]);
        continue;
      }
      const step = spec.next(state.area);
      if (!step) {
        if (!waiting) await setState(deps.db, jobId, 'waiting');
        return;
      }
      if (waiting) {
        await setState(deps.db, jobId, 'running');
        waiting = false;
      }
      let out: StepOutcome;
      live.add(jobId);
      await heartbeat(deps.db, [jobId]);
      try {
        out = await step.run({ jobId, state: state.area, command: ctx, attempt: delivery?.count ?? 1, db: deps.db });
      } catch (err) {
        if (!delivery || delivery.count < delivery.maxDeliver) throw err;
        log.error({ ...problemLog(err), job_id: jobId, step: step.name }, 'job step failed on its last delivery: the job fails');
        out = { failed: { error_kind: 'internal', message: err instanceof Error ? err.message : String(err) } };
      } finally {
        live.delete(jobId);
      }
      const events = (out.events ?? []).map((e, i) => ({ ...e, id: e.id ?? deterministicId('job-step', jobId, step.name, String(i)) }));
      if ('succeeded' in out)
        events.push({ id: deterministicId('job-ended', jobId), type: 'JobSucceeded', data: { job_id: jobId, kind: spec.kind } });
      if ('failed' in out) {
        events.push({
          id: deterministicId('job-ended', jobId),
          type: 'JobFailed',
          data: { job_id: jobId, kind: spec.kind, ...out.failed, message: cutText(out.failed.message, 2000) },
        });
      }
      if (!events.length) throw new Error(`job ${spec.kind} step ${step.name} made no events: it would run forever`);
      try {
        await append(events);
      } catch (err) {
        // refused on its content, the step's outcome would be refused on every delivery: the job fails instead
        const reason = unrecordableReason(err);
        if (!reason) throw err;
        const data = { job_id: jobId, kind: spec.kind, error_kind: UNRECORDABLE, message: reason };
        await append([{ id: deterministicId('job-ended', jobId), type: 'JobFailed', data }]);
        if (state.lifecycle.error_kind === UNRECORDABLE) {
          await noteUnrecorded(
            deps.db,
            log,
            { id: jobId, kind: 'job', organization_id: ctx.organizationId, website_id: ctx.websiteId ?? null, reason },
            err,
          );
        }
      }
    }
  }

  const advanceInTurn = (msg: BusMessage, delivery?: Delivery): Promise<void> => {
    const key = msg.streamId;
    const run = (advancing.get(key) ?? Promise.resolve()).catch(() => undefined).then(() => advance(msg, delivery));
    const tail = run.catch(() => undefined);
    advancing.set(key, tail);
    void tail.then(() => advancing.get(key) === tail && advancing.delete(key));
    return run;
  };

  const consumer = await startWorker({
    bus: deps.bus,
    name: jobWorkerName(spec.kind),
    types: jobTriggers(kind),
    concurrency: spec.concurrency ?? 16,
    maxDeliver: spec.maxDeliver,
    backoffMs: spec.backoffMs,
    logger: deps.logger,
    handle: advanceInTurn,
  });
  const beat = setInterval(() => {
    if (live.size) void heartbeat(deps.db, [...live]).catch((err) => log.warn(problemLog(err), 'job heartbeat failed'));
  }, options.heartbeatMs ?? 10_000);
  beat.unref();
  return {
    spec,
    advance: advanceInTurn,
    async stop() {
      clearInterval(beat);
      await consumer.stop();
    },
  };
}
