import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryBus } from '../../src/bus/memory';
import type { BusMessage } from '../../src/bus/port';
import { MODEL_IDS } from '../../src/domain/models';
import { silentLogger } from '../../src/logger';
import { RESPONSE_WORKER } from '../../src/workers/responses';
import { sweepLostUnits } from '../../src/workers/sweeper';
import { buildSite, finishedRun } from '../support/answers';
import { holdSwitch, simulatedEnginesWith } from '../support/engines';
import { call, startServer, type TestServer } from '../support/server';
import { until } from '../support/until';

describe('lost units of work', () => {
  let s: TestServer;
  let key: string;
  const gate = holdSwitch();
  const engines = simulatedEnginesWith(async (_model, _req, simulated) => {
    await gate.wait();
    return simulated();
  });
  beforeAll(async () => {
    s = await startServer({}, {}, undefined, { engines });
    key = (await s.org('Sweeper')).key;
  });
  afterAll(async () => {
    gate.release();
    await s?.close();
  });

  it('given units pending while the queue holds work, then nothing is sent; with an empty queue, each is sent again once per period', async () => {
    const site = await buildSite(s, key);
    gate.hold();
    const start = await call(s, 'POST', '/api/v1/response-streaming/start', { key, body: { website_id: site.id } });
    const db = s.rt.database.db;
    await until(
      'units pending',
      async () =>
        Number((await db('rm_run_units').where({ run_id: start.body.run_id, status: 'pending' }).count<{ n: string }[]>('* as n'))[0].n) ===
        MODEL_IDS.length,
    );

    // the server's own workers hold the units: its queue is not empty, so nothing counts as lost
    await until('units in the workers hands', async () => (await s.rt.bus.backlog(RESPONSE_WORKER)) > 0);
    expect(await sweepLostUnits({ db, bus: s.rt.bus, logger: silentLogger(), minAgeMs: 0 })).toBe(0);

    // a bus that lost them (an in-process bus after a restart): every pending unit goes out again, once
    const fresh = createMemoryBus();
    const got: BusMessage[] = [];
    const consumer = await fresh.consume({ durable: RESPONSE_WORKER, types: ['ResponseRequested'], handler: async (m) => void got.push(m) });
    await consumer.stop();
    expect(await sweepLostUnits({ db, bus: fresh, logger: silentLogger(), minAgeMs: 0 })).toBe(MODEL_IDS.length);
    expect(await sweepLostUnits({ db, bus: fresh, logger: silentLogger(), minAgeMs: 60_000 })).toBe(0);
    const again = await fresh.consume({ durable: RESPONSE_WORKER, types: ['ResponseRequested'], handler: async (m) => void got.push(m) });
    await until('the units sent again', async () => got.length === MODEL_IDS.length);
    await again.stop();
    const original = await db('rm_run_units').where({ run_id: start.body.run_id }).select('request_id', 'prompt_id', 'model');
    expect(got.map((m) => (m.data as { request_id: string }).request_id).sort()).toEqual(
      original.map((u: { request_id: string }) => u.request_id).sort(),
    );
    for (const m of got) {
      const u = original.find((x: { request_id: string }) => x.request_id === (m.data as { request_id: string }).request_id)!;
      expect(m.data).toMatchObject({
        run_id: start.body.run_id,
        website_id: site.id,
        prompt_id: u.prompt_id,
        model: u.model,
        schedule_id: null,
        run_at: null,
      });
      expect(m.metadata.organization_id).toBeTruthy();
    }
    await fresh.close();

    gate.release();
    const run = await finishedRun(s, key, site.id, start.body.run_id);
    expect(run).toMatchObject({ status: 'completed', recorded: MODEL_IDS.length });
  });
});
