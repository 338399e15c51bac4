import { type ChildProcess, spawn } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { createMemoryBus } from '../../src/bus/memory';
import { openedMessage } from '../../src/bus/relay';
import { newId } from '../../src/domain/ids';
import { jobStream } from '../../src/domain/jobs';
import { JOB_KINDS } from '../../src/areas';
import type { Runtime } from '../../src/runtime';
import { startJobWorker } from '../../src/workers/jobs';
import { pitchJob } from '../../src/workers/pitch';
import { EngineError } from '../../src/engines/port';
import type { Engines } from '../../src/engines/registry';
import { natsServerForBlock } from '../support/nats-instances';
import { freshDatabase, onRealPostgres } from '../support/db';
import { gate, jobEnded, openJobRuntime, streamEvents } from '../support/jobs';
import { engines, PITCH_MODELS, stubOutbound, submitPitch } from '../support/pitch-jobs';
import { until } from '../support/until';
import { nodeArgs } from '../support/bundles';

/** What a completed report's stream holds, each step's events once. */
const COMPLETED = [
  'RequestAdmitted',
  'PitchRequested',
  'JobStarted',
  'PitchSiteResearched',
  'PitchPlanWritten',
  ...PITCH_MODELS.flatMap(() => ['PitchAnswersRecorded', 'CreditsCharged']),
  'PitchReportCompiled',
  'JobSucceeded',
];

async function settledReservation(rt: Runtime, pitchId: string) {
  return until('the allowance settled', async () => {
    const r = await rt.database.db('rm_allowance_reservations').where('reservation_id', pitchId).first('state');
    return r?.state !== 'reserved' && r?.state;
  });
}

describe('the pitch job', () => {
  it('given a step delivered at once to two instances, then both run it and each event is appended once; delivered again after the end, nothing is appended', async () => {
    const database = await freshDatabase(10, { serverSchema: true });
    const hold = gate();
    let asked = 0;
    const spec = pitchJob({
      outbound: stubOutbound,
      engines: engines(async (model) => {
        if (model === PITCH_MODELS[0]) asked++;
        await hold.wait();
      }),
    });
    const rt = await openJobRuntime(database, { specs: [spec] });
    const otherBus = createMemoryBus();
    const other = await startJobWorker(spec, { store: rt.store, db: rt.database.db, bus: otherBus, logger: rt.logger, kinds: JOB_KINDS });
    try {
      const id = await submitPitch(rt, newId(), 'twice');
      const [e] = (await rt.store.readStream(jobStream('pitch', id))).filter((x) => x.type === 'PitchRequested');
      const msg = openedMessage(e);
      const twice = other.advance(msg, { count: 2, maxDeliver: 5 });
      // both instances are asking the first model its 20 prompts (5 at a time each)
      await until('both instances in the first model', async () => asked >= 10);
      hold.open();
      await twice;
      expect(await jobEnded(rt, id)).toBe('succeeded');
      const events = await streamEvents(rt, jobStream('pitch', id));
      expect(events.map((x) => x.type)).toEqual(COMPLETED);
      expect(events.filter((x) => x.type === 'PitchAnswersRecorded').map((x) => x.data.model)).toEqual(PITCH_MODELS);
      expect(await settledReservation(rt, id)).toBe('consumed');
      await other.advance(msg, { count: 3, maxDeliver: 5 });
      expect((await rt.store.readStream(jobStream('pitch', id))).length).toBe(events.length);
      const credits = events.filter((x) => x.type === 'CreditsCharged').map((x) => x.data);
      expect(credits.every((c) => c.kind === 'pitch' && c.ref_id === id && c.credits === 20)).toBe(true);
    } finally {
      await other.stop();
      await otherBus.close();
      await rt.close();
    }
  }, 60_000);
});

describe('the pitch job with live engines', () => {
  const prompts = Array.from({ length: 20 }, (_, i) => `Which tool ${i + 1} is best?`);
  /** a live engine's replies: the plan as JSON (prose for nojson.example), answers that name the competitor; refused.example is refused for good */
  const live: Engines = {
    mode: 'live',
    status: () => [],
    engineFor: (model) => ({
      async ask(req) {
        const refused = req.website?.brand.domain === 'refused.example';
        if (refused && model === PITCH_MODELS[2]) throw new EngineError('auth', 'the provider key was refused', { model });
        const text = req.prompt.includes('Answer with JSON only')
          ? req.prompt.includes('nojson.example')
            ? 'Here are some competitors worth considering.'
            : JSON.stringify({ competitors: [{ name: 'Globex', url: 'https://globex.com' }], prompts })
          : 'Globex stands out for customer support. Zentro is a solid choice with good reliability.';
        return { text, citations: ['https://www.g2.com/categories/pm'], products: [], usage: { credits: 1 }, provider_model: model, latency_ms: 1 };
      },
    }),
  };

  it('given a plan in JSON, then the report asks its prompts and charges the plan and each model; a reply without one, or an engine refusing for good, fails the report and keeps the allowance consumed', async () => {
    const database = await freshDatabase(10, { serverSchema: true });
    const rt = await openJobRuntime(database, { specs: [pitchJob({ outbound: stubOutbound, engines: live })] });
    try {
      const org = newId();
      const ok = await submitPitch(rt, org, 'live-ok', 'zentro.example');
      const nojson = await submitPitch(rt, org, 'live-nojson', 'nojson.example');
      const refused = await submitPitch(rt, org, 'live-refused', 'refused.example');
      expect(await jobEnded(rt, ok)).toBe('succeeded');
      const events = await streamEvents(rt, jobStream('pitch', ok));
      const plan = events.find((e) => e.type === 'PitchPlanWritten')!.data as { competitors: { name: string }[]; prompts: { prompt: string }[] };
      expect(plan.competitors.map((c) => c.name)).toEqual(['Globex']);
      expect(plan.prompts.map((p) => p.prompt)).toEqual(prompts);
      const credits = events.filter((e) => e.type === 'CreditsCharged').map((e) => [e.data.model, e.data.credits]);
      expect(credits).toEqual([[PITCH_MODELS[0], 1], ...PITCH_MODELS.map((m) => [m, 20])]);

      expect(await jobEnded(rt, nojson)).toBe('failed');
      const failed = (await streamEvents(rt, jobStream('pitch', nojson))).find((e) => e.type === 'JobFailed')!.data;
      expect(failed).toMatchObject({ error_kind: 'generation_failed', message: 'The answer engine did not return competitors and 20 prompts' });
      expect(await jobEnded(rt, refused)).toBe('failed');
      const refusedEvents = await streamEvents(rt, jobStream('pitch', refused));
      expect(refusedEvents.find((e) => e.type === 'JobFailed')!.data).toMatchObject({ error_kind: 'generation_failed' });
      expect(refusedEvents.filter((e) => e.type === 'PitchAnswersRecorded')).toHaveLength(2);
      for (const id of [nojson, refused]) expect(await settledReservation(rt, id)).toBe('consumed');
    } finally {
      await rt.close();
    }
  }, 60_000);
});

const children = new Set<ChildProcess>();
afterAll(() => {
  for (const c of children) c.kill('SIGKILL');
});

(onRealPostgres ? describe : describe.skip)('a pitch whose instance dies mid-job (Postgres and NATS)', () => {
  const startNats = natsServerForBlock();

  it('given the instance killed while asking the second model, when JetStream delivers the job to another instance, then it resumes there and completes with every event once', async () => {
    const nats = await startNats();
    const database = await freshDatabase(10, { serverSchema: true });
    const child = spawn(process.execPath, nodeArgs('test/support/pitch-child.ts'), {
      // its projection leases last 2 s, not 15: the instance that takes over waits for them to lapse
      env: { ...process.env, DATABASE_URL: database.url!, NATS_URL: nats.url, ACK_WAIT_MS: '2000', PROJECTION_LEASE_S: '2' } as NodeJS.ProcessEnv,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    children.add(child);
    const jobId = await new Promise<string>((resolve, reject) => {
      let out = '';
      const timer = setTimeout(() => reject(new Error(`the child never reached the second model:\n${out}`)), 120_000);
      child.stdout!.on('data', (b: Buffer) => {
        out += b.toString();
        const m = /in-step answers-\S+ (\S+)/.exec(out);
        if (m) {
          clearTimeout(timer);
          resolve(m[1]);
        }
      });
      child.once('exit', (code) => reject(new Error(`the child exited with ${code}:\n${out}`)));
    });
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGKILL');
    await exited;
    children.delete(child);

    const before = (
      await (await openJobRuntime({ ...database, close: async () => {} }, { specs: [], workers: false })).store.readStream(jobStream('pitch', jobId))
    ).map((e) => e.type);
    expect(before).toEqual(COMPLETED.slice(0, 7));

    let rt: Runtime | null = null;
    try {
      rt = await openJobRuntime(database, { specs: [pitchJob({ outbound: stubOutbound, engines: engines() })], natsUrl: nats.url, ackWaitMs: 2000 });
      expect(await jobEnded(rt, jobId, 60_000)).toBe('succeeded');
      expect((await streamEvents(rt, jobStream('pitch', jobId))).map((e) => e.type)).toEqual(COMPLETED);
      expect(await settledReservation(rt, jobId)).toBe('consumed');
      const db = rt.database.db;
      const row = await until('the report read model', async () => {
        const r = await db('rm_pitches').where('id', jobId).first('status', 'metrics', 'answered_models');
        return r?.status === 'completed' && r;
      });
      expect(row.metrics.total_responses).toBe(80);
      expect(row.answered_models).toEqual(PITCH_MODELS);
    } finally {
      await rt?.close();
    }
  }, 180_000);
});
