import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RequestProbe, requestProbe } from '../../commands/probe/request-probe';
import { monthOf } from '../../commands/allowances/allowance';
import { allowanceUsage } from '../../queries/allowances/usage';
import { unrecordedEnds } from '../../queries/health/unrecorded';
import { isDomainError } from '../../src/domain/errors';
import { SYSTEM_ACTOR } from '../../src/domain/events';
import { newId } from '../../src/domain/ids';
import { jobStream } from '../../src/domain/jobs';
import { heldCount } from '../../src/limits/holds';
import type { Runtime } from '../../src/runtime';
import type { JobSpec } from '../../src/workers/jobs';
import { PROBE_SLOTS, type ProbeState, probeJob } from '../../src/workers/probe';
import { freshDatabase, type TestDatabase } from '../support/db';
import { jobEnded, openJobRuntime, streamEvents } from '../support/jobs';
import { until } from '../support/until';

const REASON = 'outcome could not be recorded: invalid text (22P02)';

/** The probe, except that a probe of step_ms 1 records its steps with a lone surrogate, text Postgres refuses in jsonb. */
function probeWithUnrecordableSteps(runs: Map<string, number>): JobSpec<ProbeState> {
  const probe = probeJob({ work: async () => {} });
  return {
    ...probe,
    backoffMs: [10],
    maxDeliver: 3,
    next(s) {
      const step = probe.next(s);
      if (!step || s.requested?.step_ms !== 1) return step;
      return {
        name: step.name,
        async run(ctx) {
          runs.set(ctx.jobId, (runs.get(ctx.jobId) ?? 0) + 1);
          const out = await step.run(ctx);
          if (!out.events) return out;
          return { ...out, events: out.events.map((e) => ({ ...e, data: { ...e.data, worker: 'host \ud800' } }) as unknown as typeof e) };
        },
      };
    },
  };
}

describe('jobs whose step outcome cannot be recorded', () => {
  let database: TestDatabase;
  let rt: Runtime;
  const runs = new Map<string, number>();
  beforeAll(async () => {
    database = await freshDatabase(10, { serverSchema: true });
    rt = await openJobRuntime(database, { specs: [probeWithUnrecordableSteps(runs)] });
  });
  afterAll(async () => {
    await rt?.close();
  });

  it("given five such probes filling a website's running slots, then each fails as unrecordable on its first delivery, gives back its slot, place and allowance, and the next probe runs", async () => {
    const org = newId();
    const website_id = newId();
    const ctx = { store: rt.store, organizationId: org, actor: SYSTEM_ACTOR };
    const admission = {
      concurrent: { db: rt.database.db, limit: { name: 'probe-processing', limit: 10, retryAfterSeconds: 10 } },
      allowance: { name: 'probes', limit: 10, on_failure: 'released' as const },
    };
    const submit = async (input: Partial<RequestProbe>) => {
      const r = await requestProbe(ctx, { website_id, steps: 2, step_ms: 0, fail_at_step: null, ...input }, admission);
      if (isDomainError(r)) throw new Error(r.message);
      return r.job_id;
    };
    const bad: string[] = [];
    for (let i = 0; i <= PROBE_SLOTS.perScope; i++) bad.push(await submit({ step_ms: 1 }));
    const good = await submit({ steps: 1 });

    for (const id of bad) {
      expect(await jobEnded(rt, id, 20_000)).toBe('failed');
      expect(await rt.database.db('rm_jobs').where('id', id).first('error_kind', 'error')).toEqual({ error_kind: 'unrecordable', error: REASON });
      expect((await streamEvents(rt, jobStream('probe', id))).map((e) => e.type)).toEqual(['ProbeRequested', 'JobStarted', 'JobFailed']);
      expect(runs.get(id)).toBe(1);
    }
    expect(await jobEnded(rt, good, 20_000)).toBe('succeeded');
    await until('the slots given back', async () => (await rt.database.db('aivis_job_slots').whereIn('job_id', [...bad, good])).length === 0);
    await until('the places given back', async () => (await heldCount(rt.database.db, 'probe-processing', org)) === 0);
    await until('the allowance settled', async () => (await allowanceUsage(rt.database.db, org, 'probes', monthOf(new Date()))).reserved === 0);
    expect(await allowanceUsage(rt.database.db, org, 'probes', monthOf(new Date()))).toEqual({ used: 1, reserved: 0, consumed: 1 });

    const ends = (await unrecordedEnds(rt.database.db)).filter((e) => e.organization_id === org);
    expect(ends.map((e) => e.id).sort()).toEqual([...bad].sort());
    for (const e of ends) expect(e).toMatchObject({ kind: 'job', website_id, reason: REASON });
  });
});
