import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RequestProbe, requestProbe } from '../../commands/probe/request-probe';
import { getJob, JobView } from '../../queries/jobs/jobs';
import type { BusMessage } from '../../src/bus/port';
import { openedMessage } from '../../src/bus/relay';
import { isDomainError } from '../../src/domain/errors';
import { SYSTEM_ACTOR } from '../../src/domain/events';
import { newId } from '../../src/domain/ids';
import { jobStream } from '../../src/domain/jobs';
import { JOB_KINDS } from '../../src/areas';
import { heldCount } from '../../src/limits/holds';
import type { Runtime } from '../../src/runtime';
import { type JobWorker, startJobWorker } from '../../src/workers/jobs';
import { probeJob } from '../../src/workers/probe';
import { freshDatabase, type TestDatabase } from '../support/db';
import { gate, jobEnded, openJobRuntime, PROBE_OF_THREE_SUCCEEDED, slotsLetGo, streamEvents } from '../support/jobs';
import { until } from '../support/until';

const ORG = newId();
const probe = (over: Partial<RequestProbe> = {}): RequestProbe => ({ website_id: newId(), steps: 3, step_ms: 0, fail_at_step: null, ...over });

async function submit(rt: Runtime, input: RequestProbe): Promise<string> {
  const r = await requestProbe({ store: rt.store, organizationId: ORG, actor: SYSTEM_ACTOR }, input);
  if (isDomainError(r)) throw new Error(r.message);
  return r.job_id;
}

/** The message the relay carries for a job's request, as a worker receives it. */
async function requestMessage(rt: Runtime, jobId: string): Promise<BusMessage> {
  const [e] = (await rt.store.readStream(jobStream('probe', jobId))).filter((x) => x.type === 'ProbeRequested');
  return openedMessage(e);
}

describe('jobs: a probe through the job workers', () => {
  let database: TestDatabase;
  let rt: Runtime;
  let ran: { step: number; job: string }[] = [];
  let hold: ReturnType<typeof gate> | null = null;
  let throws = 0;
  const spec = probeJob({
    async work(step, r) {
      ran.push({ step, job: r.job_id });
      if (throws > 0) {
        throws--;
        throw new Error('the engine is down');
      }
      if (hold && step === 1) await hold.wait();
    },
  });
  beforeAll(async () => {
    database = await freshDatabase(10, { serverSchema: true });
    rt = await openJobRuntime(database, { specs: [{ ...spec, backoffMs: [10], maxDeliver: 3 }] });
  });
  afterAll(async () => {
    await rt?.close();
  });

  it('given a probe of three steps, when its worker runs it, then each step, its start and its end are recorded once, in order', async () => {
    const id = await submit(rt, probe());
    expect(await jobEnded(rt, id)).toBe('succeeded');
    const events = await streamEvents(rt, jobStream('probe', id));
    expect(events.map((e) => e.type)).toEqual(PROBE_OF_THREE_SUCCEEDED);
    expect(events.filter((e) => e.type === 'ProbeStepCompleted').map((e) => e.data.step)).toEqual([1, 2, 3]);
    const view = JobView.parse(await getJob(rt.database.db, ORG, 'probe', id));
    expect(view).toMatchObject({ job_id: id, kind: 'probe', status: 'succeeded', error: null });
    expect(view.started_at! <= view.finished_at!).toBe(true);
    expect(await getJob(rt.database.db, newId(), 'probe', id)).toBeNull();
    // its slot is free again
    await slotsLetGo(rt.database.db, id);
    expect(await rt.database.db('aivis_job_slots').where('job_id', id).first()).toBeUndefined();
  });

  it('given a step delivered twice at once to two instances, then both run it and it is recorded once; delivered again after the end, nothing is appended', async () => {
    // a second instance's worker on the same store and database (its own in-process bus carries nothing)
    const { createMemoryBus } = await import('../../src/bus/memory');
    const otherBus = createMemoryBus();
    const other: JobWorker = await startJobWorker(spec, { store: rt.store, db: rt.database.db, bus: otherBus, logger: rt.logger, kinds: JOB_KINDS });
    try {
      hold = gate();
      ran = [];
      const id = await submit(rt, probe({ steps: 2 }));
      const msg = await requestMessage(rt, id);
      // the relay's delivery to this instance, and the same message redelivered to the other one
      const twice = other.advance(msg, { count: 2, maxDeliver: 5 });
      await until('both instances in step 1', async () => ran.filter((r) => r.job === id && r.step === 1).length === 2);
      hold.open();
      await twice;
      expect(await jobEnded(rt, id)).toBe('succeeded');
      const events = await streamEvents(rt, jobStream('probe', id));
      expect(events.map((e) => e.type)).toEqual(['ProbeRequested', 'JobStarted', 'ProbeStepCompleted', 'ProbeStepCompleted', 'JobSucceeded']);

      const before = await rt.store.readStream(jobStream('probe', id));
      await other.advance(msg, { count: 3, maxDeliver: 5 });
      expect((await rt.store.readStream(jobStream('probe', id))).length).toBe(before.length);
    } finally {
      hold = null;
      await other.stop();
      await otherBus.close();
    }
  });

  it('given a step that throws, then the bus delivers the job again and it goes on; one that throws on every delivery fails the job with its reason', async () => {
    throws = 1;
    const once = await submit(rt, probe({ steps: 1 }));
    expect(await jobEnded(rt, once)).toBe('succeeded');

    throws = 3;
    const always = await submit(rt, probe({ steps: 1 }));
    expect(await jobEnded(rt, always)).toBe('failed');
    const row = await rt.database.db('rm_jobs').where('id', always).first();
    expect(row).toMatchObject({ status: 'failed', error_kind: 'internal', error: 'the engine is down' });
    expect((await streamEvents(rt, jobStream('probe', always))).map((e) => e.type)).toEqual(['ProbeRequested', 'JobStarted', 'JobFailed']);
  });

  it('given a probe asked to fail at its second step, then it fails with its reason after one step', async () => {
    const id = await submit(rt, probe({ fail_at_step: 2 }));
    expect(await jobEnded(rt, id)).toBe('failed');
    expect(await rt.database.db('rm_jobs').where('id', id).first('error_kind', 'error')).toEqual({
      error_kind: 'probe_failed',
      error: 'step 2 failed as the probe asked',
    });
    expect((await streamEvents(rt, jobStream('probe', id))).map((e) => e.type)).toEqual([
      'ProbeRequested',
      'JobStarted',
      'ProbeStepCompleted',
      'JobFailed',
    ]);
  });
});

describe('jobs: what the sweeper recovers', () => {
  it('given a probe requested while its instance had no job worker and then died (its in-process bus with it), then the next instance sweeps it up and runs it', async () => {
    const database = await freshDatabase(10, { serverSchema: true });
    const first = await openJobRuntime(database, { specs: [probeJob()], workers: false, keepDatabase: true });
    const id = await submit(first, probe());
    await until(
      'the request in the jobs read model',
      async () => (await first.database.db('rm_jobs').where('id', id).first('status'))?.status === 'queued',
    );
    await first.close();
    const next = await openJobRuntime(database, { specs: [probeJob()], staleMs: 500, sweepEveryMs: 200 });
    try {
      expect(await jobEnded(next, id)).toBe('succeeded');
      expect((await streamEvents(next, jobStream('probe', id))).filter((e) => e.type === 'ProbeStepCompleted')).toHaveLength(3);
    } finally {
      await next.close();
    }
  });

  it('given a probe whose step never returns and whose heartbeat stopped, then after too many wakes it fails as abandoned, never left running', async () => {
    const database = await freshDatabase(10, { serverSchema: true });
    const stuck = gate();
    // heartbeats far apart: the held step looks dead to the sweeper, as a dying instance's would
    const rt = await openJobRuntime(database, {
      specs: [probeJob({ work: () => stuck.wait() })],
      heartbeatMs: 600_000,
      staleMs: 300,
      sweepEveryMs: 150,
      maxWakes: 2,
    });
    try {
      const id = await submit(rt, probe({ steps: 1 }));
      expect(await jobEnded(rt, id)).toBe('failed');
      expect(await rt.database.db('rm_jobs').where('id', id).first('error_kind')).toEqual({ error_kind: 'abandoned' });
      const wakes = await rt.database.db('aivis_job_wakes').where('job_id', id).first('count');
      expect(Number(wakes.count)).toBeGreaterThan(2);
      // the step finally returns: its outcome is refused (the job ended), and the job's slot is given back
      stuck.open();
      await until('the slot given back', async () => !(await rt.database.db('aivis_job_slots').where('job_id', id).first()));
      expect((await streamEvents(rt, jobStream('probe', id))).map((e) => e.type)).toEqual(['ProbeRequested', 'JobStarted', 'JobFailed']);
    } finally {
      stuck.open();
      await rt.close();
    }
  });

  it("given a probe holding a place among its organization's probes in progress, then its end gives the place back", async () => {
    const database = await freshDatabase(10, { serverSchema: true });
    const hold = gate();
    const rt = await openJobRuntime(database, { specs: [probeJob({ work: () => hold.wait() })] });
    try {
      const limit = { name: 'probe-processing', limit: 1, retryAfterSeconds: 10 };
      const org = newId();
      const ctx = { store: rt.store, organizationId: org, actor: SYSTEM_ACTOR };
      const r = await requestProbe(ctx, probe({ steps: 1 }), { concurrent: { db: rt.database.db, limit } });
      if (isDomainError(r)) throw new Error(r.message);
      expect(await requestProbe(ctx, probe({ steps: 1 }), { concurrent: { db: rt.database.db, limit } })).toEqual({
        kind: 'rate_limited',
        message: 'Rate limit exceeded',
        retryAfterSeconds: 10,
      });
      hold.open();
      expect(await jobEnded(rt, r.job_id)).toBe('succeeded');
      await until('the place given back', async () => (await heldCount(rt.database.db, limit.name, org)) === 0);
      expect(isDomainError(await requestProbe(ctx, probe({ steps: 1 }), { concurrent: { db: rt.database.db, limit } }))).toBe(false);
    } finally {
      hold.open();
      await rt.close();
    }
  });
});
