import { afterAll, describe, expect, it } from 'vitest';
import type { EventData } from '../../src/domain/events';
import { responseIdOf, responseStream } from '../../commands/responses/record-outcome';
import { runStream } from '../../commands/responses/start-run';
import { silentLogger } from '../../src/logger';
import { answerUnit } from '../../src/workers/responses';
import { type NatsServerProcess, startNatsServer } from '../bus/nats-server';
import { buildSite, creditsOfRun, finishedRun } from '../support/answers';
import { onRealPostgres } from '../support/db';
import { holdSwitch, simulatedEnginesWith } from '../support/engines';
import { refusedWithoutWrite } from '../support/http';
import { call, startServer, type TestServer } from '../support/server';
import { useWorld, type World } from '../support/tenancy';

let nats: NatsServerProcess | null = null;
afterAll(async () => {
  await nats?.dispose();
});

/** The simulated engines, each ask held while `gate` is held (a run kept going while a test looks at it). */
const gate = holdSwitch();
const engines = simulatedEnginesWith(async (_model, _req, simulated) => {
  await gate.wait();
  return simulated();
});

/** The server over real Postgres and NATS JetStream: the units travel to the response workers over the bus. */
async function start(): Promise<TestServer> {
  if (onRealPostgres) nats = await startNatsServer();
  return startServer({}, {}, undefined, { natsUrl: nats?.url, engines });
}

let s: TestServer;
let w: World;
useWorld((ctx) => ({ s, w } = ctx), start);

const post = (path: string, body: unknown) => call(s, 'POST', path, { key: w.a.key, body });
type Listed = { id: string; prompt_id: string; model: string; sample_index: number; response: string };

async function answersOf(websiteId: string, scheduleId: string): Promise<Listed[]> {
  const r = await call(s, 'GET', '/api/v1/responses', { key: w.a.key, query: { website_id: websiteId, schedule_id: scheduleId, page_size: 100 } });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.responses;
}

describe('samples_per_prompt', () => {
  it('given a schedule asking each prompt 3 times, when a run goes through the workers, then 3 answers per unit, each counted and charged', async () => {
    const site = await buildSite(s, w.a.key, { prompts: [{ text: 'Which CRM is best?' }, { text: 'Which CRM is cheapest?' }] });
    const sched = await post('/api/v1/prompt-schedules', {
      website_id: site.id,
      name: 'Thrice',
      models: ['chatgpt', 'claude'],
      frequency: 'daily',
      samples_per_prompt: 3,
    });
    expect(sched.status, JSON.stringify(sched.body)).toBe(201);
    expect(sched.body.schedule.samples_per_prompt).toBe(3);
    const scheduleId = sched.body.schedule.id as string;

    // the engines held, so the run is still going when it is started again (a fast host answers 12 units at once)
    gate.hold();
    let started: Awaited<ReturnType<typeof post>>;
    try {
      started = await post('/api/v1/response-streaming/start', { website_id: site.id, schedule_id: scheduleId });
      expect(started.status, JSON.stringify(started.body)).toBe(202);
      expect(started.body.total).toBe(12); // 2 prompts x 2 models x 3 samples
      // one run per schedule at a time, whatever its size
      expect((await post('/api/v1/response-streaming/start', { website_id: site.id, schedule_id: scheduleId })).status).toBe(409);
    } finally {
      gate.release();
    }
    const run = await finishedRun(s, w.a.key, site.id, started.body.run_id);
    expect(run).toMatchObject({ status: 'completed', total: 12, recorded: 12, failed: 0, pending: 0 });

    const answers = await answersOf(site.id, scheduleId);
    expect(answers).toHaveLength(12);
    const byUnit = new Map<string, Listed[]>();
    for (const a of answers) byUnit.set(`${a.prompt_id}/${a.model}`, [...(byUnit.get(`${a.prompt_id}/${a.model}`) ?? []), a]);
    expect(byUnit.size).toBe(4);
    for (const samples of byUnit.values()) expect(samples.map((a) => a.sample_index).sort()).toEqual([0, 1, 2]);
    // a later sample is another draw of the engine, not a copy of the first
    expect([...byUnit.values()].some((samples) => new Set(samples.map((a) => a.response)).size > 1)).toBe(true);

    expect(await creditsOfRun(s.rt.database.db, started.body.run_id)).toBe(12);
    const rate = await post('/api/v1/metrics/mention-rate/cumulative', { website_id: site.id, filters: { schedule_id: scheduleId } });
    expect(rate.body.responses).toBe(12);

    // a unit delivered again appends nothing: one outcome per sample
    const units = (await s.rt.store.readStream(runStream(started.body.run_id))).filter((e) => e.type === 'ResponseRequested');
    expect(units.map((e) => (e.data as EventData<'ResponseRequested'>).sample_index).sort()).toEqual([0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2]);
    const unit = units.find((e) => (e.data as EventData<'ResponseRequested'>).sample_index === 2)!;
    const req = unit.data as EventData<'ResponseRequested'>;
    const deps = { store: s.rt.store, db: s.rt.database.db, bus: s.rt.bus, engines: s.rt.engines, logger: silentLogger() };
    expect(await answerUnit(deps, { id: req.request_id, data: req, metadata: unit.metadata })).toBe('skipped');
    expect(await s.rt.store.readStream(responseStream(responseIdOf(req.request_id)))).toHaveLength(2); // the answer and its credits
    expect(await answersOf(site.id, scheduleId)).toHaveLength(12);

    // fewer samples from the next run on
    const patched = await call(s, 'PATCH', `/api/v1/prompt-schedules/${scheduleId}`, {
      key: w.a.key,
      body: { website_id: site.id, samples_per_prompt: 1 },
    });
    expect(patched.body.schedule.samples_per_prompt).toBe(1);
    const next = await post('/api/v1/response-streaming/start', { website_id: site.id, schedule_id: scheduleId });
    expect(next.body.total).toBe(4);
    await finishedRun(s, w.a.key, site.id, next.body.run_id);
  });

  it('given no samples_per_prompt, then 1; out of range, then 400 naming it and nothing written', async () => {
    const site = await buildSite(s, w.a.key);
    const plain = await post('/api/v1/prompt-schedules', { website_id: site.id, name: 'Once', models: ['chatgpt'], frequency: 'daily' });
    expect(plain.body.schedule.samples_per_prompt).toBe(1);
    const listed = await call(s, 'GET', '/api/v1/prompt-schedules', { key: w.a.key, query: { website_id: site.id } });
    expect(listed.body.data.map((x: { samples_per_prompt: number }) => x.samples_per_prompt)).toEqual([1, 1]);
    const base = { website_id: site.id, name: 'Bad', models: ['chatgpt'], frequency: 'daily' };
    const error = 'samples_per_prompt: must be an integer from 1 to 10';
    const path = `/api/v1/prompt-schedules/${plain.body.schedule.id}`;
    await refusedWithoutWrite(s, w.a.key, [
      ...[0, 11, 2.5, '3', null].map((v) => ({
        method: 'POST',
        path: '/api/v1/prompt-schedules',
        body: { ...base, samples_per_prompt: v },
        status: 400,
        error,
      })),
      ...[0, 11].map((v) => ({ method: 'PATCH', path, body: { website_id: site.id, samples_per_prompt: v }, status: 400, error })),
    ]);
  });
});
