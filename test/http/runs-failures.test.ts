import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MODEL_IDS } from '../../src/domain/models';
import { EngineError } from '../../src/engines/port';
import { buildSite, finishedRun } from '../support/answers';
import { aUnit } from '../support/events';
import { holdSwitch, simulatedEnginesWith } from '../support/engines';
import { call, startServer, type TestServer } from '../support/server';
import { responseIdOf, responseStream } from '../../commands/responses/record-outcome';
import { SYSTEM_ACTOR } from '../../src/domain/events';
import { newId } from '../../src/domain/ids';
import { silentLogger } from '../../src/logger';
import { answerUnit } from '../../src/workers/responses';

/** Simulated engines, except: one model always rate-limited, and every ask held while `hold` is set. */
function testEngines(failing: string) {
  const gate = holdSwitch();
  const engines = simulatedEnginesWith(async (model, _req, simulated) => {
    await gate.wait();
    if (model === failing) throw new EngineError('rate_limited', 'provider said 429 four times', { attempts: 4, model });
    return simulated();
  });
  return { engines, hold: gate.hold, release: gate.release };
}

describe('runs whose units fail or are still going', () => {
  const t = testEngines(MODEL_IDS[5]);
  let s: TestServer;
  let key: string;
  beforeAll(async () => {
    s = await startServer({}, {}, undefined, { engines: t.engines });
    key = (await s.org('Failing')).key;
  });
  afterAll(async () => s?.close());

  it('given a model whose calls keep failing, then its units are recorded as failures with the reason and the rest as answers', async () => {
    const site = await buildSite(s, key, { prompts: [{ text: 'a' }, { text: 'b' }] });
    const start = await call(s, 'POST', '/api/v1/response-streaming/start', { key, body: { website_id: site.id } });
    expect(start.status).toBe(202);
    const run = await finishedRun(s, key, site.id, start.body.run_id);
    expect(run).toMatchObject({
      status: 'completed_with_failures',
      total: 2 * MODEL_IDS.length,
      recorded: 2 * (MODEL_IDS.length - 1),
      failed: 2,
      pending: 0,
    });
    expect(run.failures).toHaveLength(2);
    for (const f of run.failures) {
      expect(f).toMatchObject({ model: MODEL_IDS[5], error_kind: 'rate_limited', error: 'provider said 429 four times', attempts: 4 });
    }
    // no credits for a failed call
    const credits = await s.rt.database
      .db('aivis_events')
      .where('type', 'CreditsUsed')
      .whereRaw("data->>'run_id' = ?", [start.body.run_id])
      .count<{ n: string }[]>('* as n');
    expect(Number(credits[0].n)).toBe(2 * (MODEL_IDS.length - 1));
  });

  it('given a run still going, when the same schedule is started again, then 409 with the run in progress', async () => {
    const site = await buildSite(s, key);
    t.hold();
    try {
      const first = await call(s, 'POST', '/api/v1/response-streaming/start', { key, body: { website_id: site.id } });
      expect(first.status).toBe(202);
      // the first run's workers keep writing (its prompt's first-answer marker): count what a start would write
      const runEvents = async () =>
        Number(
          (
            await s.rt.database
              .db('aivis_events')
              .whereIn('type', ['RunStarted', 'ResponseRequested'])
              .whereRaw("metadata->>'website_id' = ?", [site.id])
              .count<{ n: string }[]>('* as n')
          )[0].n,
        );
      const before = await runEvents();
      const again = await call(s, 'POST', '/api/v1/response-streaming/start', { key, body: { website_id: site.id, schedule_id: 'default' } });
      expect(again.status).toBe(409);
      expect(again.body).toMatchObject({
        error: 'A run of this schedule is already in progress',
        run: { run_id: first.body.run_id, status: 'running' },
      });
      expect(await runEvents()).toBe(before);
      expect(before).toBe(1 + MODEL_IDS.length);
      const going = await call(s, 'GET', `/api/v1/response-streaming/runs/${first.body.run_id}`, { key, query: { website_id: site.id } });
      expect(going.body).toMatchObject({ status: 'running', pending: MODEL_IDS.length, finished_at: null });
      t.release();
      await finishedRun(s, key, site.id, first.body.run_id);
      // finished: a new run may start
      const third = await call(s, 'POST', '/api/v1/response-streaming/start', { key, body: { website_id: site.id } });
      expect(third.status).toBe(202);
      await finishedRun(s, key, site.id, third.body.run_id);
    } finally {
      t.release();
    }
  });

  it('given a prompt hard-deleted after its run started, when its unit is answered, then it fails as prompt_not_found and no answer is recorded', async () => {
    const site = await buildSite(s, key, { prompts: [{ text: 'drop' }] });
    const del = await call(s, 'DELETE', `/api/v1/prompts/${site.prompts[0].id}`, { key, query: { website_id: site.id } });
    expect(del.body).toEqual({ success: true, soft_deleted: false });
    const req = aUnit({ request_id: newId(), run_id: newId(), website_id: site.id, prompt_id: site.prompts[0].id });
    const org = (await s.rt.database.db('rm_websites').where('id', site.id).first('organization_id')).organization_id;
    const metadata = {
      organization_id: org,
      website_id: site.id,
      actor: SYSTEM_ACTOR,
      correlation_id: req.run_id,
      causation_id: null,
      time: new Date().toISOString(),
    };
    const deps = { store: s.rt.store, db: s.rt.database.db, bus: s.rt.bus, engines: t.engines, logger: silentLogger() };
    expect(await answerUnit(deps, { id: req.request_id, data: req, metadata })).toBe('failed');
    const stream = await s.rt.store.readStream(responseStream(responseIdOf(req.request_id)));
    expect(stream.map((e) => [e.type, (e.data as { error_kind: string }).error_kind])).toEqual([['ResponseFailed', 'prompt_not_found']]);
    // delivered again: one outcome per unit
    expect(await answerUnit(deps, { id: req.request_id, data: req, metadata })).toBe('skipped');
    expect(await s.rt.store.readStream(responseStream(responseIdOf(req.request_id)))).toHaveLength(1);
  });
});
