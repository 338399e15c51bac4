import { afterAll, beforeAll, expect, it } from 'vitest';
import { MODEL_IDS } from '../../src/domain/models';
import { startNatsServer, type NatsServerProcess } from '../bus/nats-server';
import { buildSite, creditsOfRun, finishedRun } from '../support/answers';
import { simulatedEnginesWith } from '../support/engines';
import { call, startServer, type TestServer } from '../support/server';
import { until } from '../support/until';
import { onPostgresServer } from '../support/suites';

// Two instances over one database and a private nats-server: needs a real Postgres server.
const suite = onPostgresServer('answers pipeline over NATS', 'two instances need a shared server');

/** Simulated answers that take `ms` each, counting every engine call. */
function slowEngines(ms: number) {
  const calls = { n: 0 };
  const engines = simulatedEnginesWith(async (_model, _req, simulated) => {
    calls.n++;
    await new Promise((r) => setTimeout(r, ms));
    return simulated();
  });
  return { engines, calls };
}

suite('answers pipeline over NATS JetStream, two instances', () => {
  let nats: NatsServerProcess;
  let a: TestServer;
  let b: TestServer | null;
  const slow = slowEngines(40);
  beforeAll(async () => {
    nats = await startNatsServer();
    // units the stopped instance held come back after JetStream's ack wait: 2 s here, not the deployment's 30
    const bus = { natsUrl: nats.url, nats: { ackWaitMs: 2000 }, engines: slow.engines };
    a = await startServer({ WORKER_CONCURRENCY: '4' }, {}, undefined, bus);
    b = await startServer({ WORKER_CONCURRENCY: '4' }, {}, a, bus);
  }, 60_000);
  afterAll(async () => {
    await b?.close();
    await a?.close();
    await nats?.dispose();
  });

  it('given NATS killed and an instance stopped mid-run, when they come back, then every unit is answered exactly once', async () => {
    const key = (await a.org('Pipeline')).key;
    const site = await buildSite(a, key, {
      prompts: [{ text: 'one' }, { text: 'two' }, { text: 'three' }],
      locations: [
        { location: 'Lyon', country: 'France' },
        { location: 'Oslo', country: 'Norway' },
      ],
    });
    const total = 3 * MODEL_IDS.length * 2;
    const start = await call(a, 'POST', '/api/v1/response-streaming/start', { key, body: { website_id: site.id } });
    expect(start.body.total).toBe(total);
    const runId = start.body.run_id;
    const recorded = async () =>
      Number((await a.rt.database.db('rm_run_units').where({ run_id: runId }).whereNot('status', 'pending').count<{ n: string }[]>('* as n'))[0].n);

    // both instances take units from the one durable consumer
    await until('some answers', async () => (await recorded()) >= 10, 30_000);
    await nats.kill('SIGKILL');
    await new Promise((r) => setTimeout(r, 1500));
    await nats.start();
    await until('more answers after NATS came back', async () => (await recorded()) >= total / 2, 60_000);
    // one instance goes away with units in hand: they go back to the queue and the other instance answers them
    await b!.close();
    b = null;
    const run = await finishedRun(a, key, site.id, runId, 120_000);
    expect(run).toMatchObject({ status: 'completed', recorded: total, failed: 0 });

    const db = a.rt.database.db;
    const answers = await db('rm_responses').where({ run_id: runId }).select('prompt_id', 'model', 'location_id');
    expect(answers).toHaveLength(total);
    expect(
      new Set(answers.map((x: { prompt_id: string; model: string; location_id: string }) => `${x.prompt_id}/${x.model}/${x.location_id}`)).size,
    ).toBe(total);
    const outcomes = await db('aivis_events')
      .whereIn('type', ['ResponseRecorded', 'ResponseFailed'])
      .whereRaw("data->>'run_id' = ?", [runId])
      .count<{ n: string }[]>('* as n');
    expect(Number(outcomes[0].n)).toBe(total);
    expect(await creditsOfRun(db, runId)).toBe(total);
    // an engine call may repeat when its instance went away before recording it, never the recorded answer
    expect(slow.calls.n).toBeGreaterThanOrEqual(total);
  }, 180_000);
});
