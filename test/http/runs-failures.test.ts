import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MODEL_IDS } from '../../src/domain/models';
import { EngineError } from '../../src/engines/port';
import { buildSite, creditsOfRun, everyListedAnswer, finishedRun } from '../support/answers';
import { aUnit } from '../support/events';
import { holdSwitch, simulatedEnginesWith } from '../support/engines';
import { call, startServer, type TestServer } from '../support/server';
import { until } from '../support/until';
import { responseIdOf, responseStream } from '../../commands/responses/record-outcome';
import { SYSTEM_ACTOR } from '../../src/domain/events';
import { newId } from '../../src/domain/ids';
import { silentLogger } from '../../src/logger';
import { answerUnit, outcomeBatcher } from '../../src/workers/responses';
import type { EventStore } from '../../src/eventstore/port';

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

/** The organization of a website, as its read model holds it. */
const organizationOf = async (s: TestServer, websiteId: string): Promise<string> =>
  (await s.rt.database.db('rm_websites').where('id', websiteId).first('organization_id')).organization_id;

/** A unit of the site's first prompt as the run queue delivers it: a new request and run, the system as its actor. */
function deliveredUnit(organizationId: string, site: { id: string; prompts: { id: string }[] }, model = MODEL_IDS[0]) {
  const data = { ...aUnit({ request_id: newId(), run_id: newId(), website_id: site.id, prompt_id: site.prompts[0].id }), model };
  const metadata = {
    organization_id: organizationId,
    website_id: site.id,
    actor: SYSTEM_ACTOR,
    correlation_id: data.run_id,
    causation_id: null,
    time: new Date().toISOString(),
  };
  return { id: data.request_id, data, metadata };
}

/**
 * Given a website of two prompts, when a run goes, then it ends completed_with_failures: the one failing model's two
 * units failed, every other unit recorded.
 */
async function runWithOneModelFailing(s: TestServer, key: string) {
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
  return { site, run, runId: start.body.run_id as string };
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
    const { run, runId } = await runWithOneModelFailing(s, key);
    for (const f of run.failures) {
      expect(f).toMatchObject({ model: MODEL_IDS[5], error_kind: 'rate_limited', error: 'provider said 429 four times', attempts: 4 });
    }
    // no credits for a failed call
    expect(await creditsOfRun(s.rt.database.db, runId)).toBe(2 * (MODEL_IDS.length - 1));
  });

  it('given the answers read model behind the runs read model, then the run reads as running until its answers are listed', async () => {
    // given: the answers projection held while the run goes and ends
    const site = await buildSite(s, key, { prompts: [{ text: 'held back' }] });
    const answers = s.rt.runners.get('answers')!;
    await answers.stop();
    let runId = '';
    let held: Awaited<ReturnType<typeof call>>;
    try {
      const start = await call(s, 'POST', '/api/v1/response-streaming/start', { key, body: { website_id: site.id } });
      expect(start.status).toBe(202);
      runId = start.body.run_id;
      await until('the runs read model ends the run', async () => {
        const row = await s.rt.database.db('rm_runs').where('id', runId).first('finished_at');
        return row?.finished_at != null;
      });
      // when
      held = await call(s, 'GET', `/api/v1/response-streaming/runs/${runId}`, { key, query: { website_id: site.id } });
    } finally {
      await answers.start();
    }
    // then
    expect(held.status).toBe(200);
    expect(held.body).toMatchObject({ status: 'running', finished_at: null });
    const run = await finishedRun(s, key, site.id, runId);
    expect(run.status).toBe('completed_with_failures');
    expect(await everyListedAnswer(s, key, site.id)).toHaveLength(run.recorded);
  }, 60_000);

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
    const unit = deliveredUnit(await organizationOf(s, site.id), site);
    const deps = { store: s.rt.store, db: s.rt.database.db, bus: s.rt.bus, engines: t.engines, logger: silentLogger() };
    expect(await answerUnit(deps, unit)).toBe('failed');
    const stream = await s.rt.store.readStream(responseStream(responseIdOf(unit.data.request_id)));
    expect(stream.map((e) => [e.type, (e.data as { error_kind: string }).error_kind])).toEqual([['ResponseFailed', 'prompt_not_found']]);
    // delivered again: one outcome per unit
    expect(await answerUnit(deps, unit)).toBe('skipped');
    expect(await s.rt.store.readStream(responseStream(responseIdOf(unit.data.request_id)))).toHaveLength(1);
  });
});

/** Simulated engines, except: one model's answers end with a lone surrogate, text Postgres refuses in jsonb. */
const unrecordableAnswers = (model: string) =>
  simulatedEnginesWith(async (m, _req, simulated) => {
    const a = await simulated();
    return m === model ? { ...a, text: `${a.text} \ud800` } : a;
  });

describe('runs whose answers cannot be recorded', () => {
  const bad = MODEL_IDS[2];
  const engines = unrecordableAnswers(bad);
  let s: TestServer;
  let key: string;
  let otherKey: string;
  beforeAll(async () => {
    s = await startServer({}, {}, undefined, { engines });
    key = (await s.org('Unrecordable')).key;
    otherKey = (await s.org('Other tenant')).key;
  });
  afterAll(async () => s?.close());

  it('given a model whose answers the store refuses, when the run goes, then those units fail as unrecordable, the run ends, its schedule starts again and /readyz is degraded naming them', async () => {
    const { site, run, runId } = await runWithOneModelFailing(s, key);
    for (const f of run.failures) {
      expect(f).toMatchObject({ model: bad, error_kind: 'unrecordable', error: 'outcome could not be recorded: invalid text (22P02)' });
    }
    const again = await call(s, 'POST', '/api/v1/response-streaming/start', { key, body: { website_id: site.id } });
    expect(again.status).toBe(202);
    await finishedRun(s, key, site.id, again.body.run_id);

    const ready = await call(s, 'GET', '/readyz');
    expect(ready.status).toBe(200);
    expect(ready.body.status).toBe('degraded');
    const ours = ready.body.unrecorded.filter((u: { website_id: string }) => u.website_id === site.id);
    expect(ours).toHaveLength(4);
    for (const u of ours) expect(u).toMatchObject({ kind: 'unit', reason: 'outcome could not be recorded: invalid text (22P02)' });
    // another organization's key is refused the run and its failures
    const theirs = await call(s, 'GET', `/api/v1/response-streaming/runs/${runId}`, { key: otherKey, query: { website_id: site.id } });
    expect(theirs.status).toBe(403);
  });

  it('given an outcome append that fails on the connection, then the unit is delivered again and recorded; refused on its content, then it fails at once', async () => {
    const site = await buildSite(s, key, { prompts: [{ text: 'flaky' }] });
    const org = await organizationOf(s, site.id);
    const unit = (model: string) => deliveredUnit(org, site, model);
    const flaky = unit(MODEL_IDS[0]);
    // the first append of the flaky unit's outcome meets a connection the server closed
    let dropped = false;
    const store: EventStore = Object.create(s.rt.store);
    store.append = (...args) => {
      if (!dropped && args[0] === responseStream(responseIdOf(flaky.data.request_id))) {
        dropped = true;
        return Promise.reject(Object.assign(new Error('Connection terminated unexpectedly'), { code: '57P01' }));
      }
      return s.rt.store.append(...args);
    };
    const deps = { store, db: s.rt.database.db, bus: s.rt.bus, engines, logger: silentLogger() };
    await expect(answerUnit(deps, flaky)).rejects.toThrow('Connection terminated');
    expect(await answerUnit(deps, flaky)).toBe('recorded');

    const refused = unit(bad);
    expect(await answerUnit(deps, refused)).toBe('failed');
    const stream = await s.rt.store.readStream(responseStream(responseIdOf(refused.data.request_id)));
    expect(stream.map((e) => [e.type, (e.data as { error_kind: string }).error_kind])).toEqual([['ResponseFailed', 'unrecordable']]);
    expect(await answerUnit(deps, refused)).toBe('skipped');
  });

  it('given units answered side by side by one pool, one refused on its content, then their outcomes go in one append, the others are recorded and the refused one fails as unrecordable', async () => {
    const site = await buildSite(s, key, { prompts: [{ text: 'together' }] });
    const org = await organizationOf(s, site.id);
    const units = [MODEL_IDS[0], MODEL_IDS[1], bad, MODEL_IDS[3]].map((m) => deliveredUnit(org, site, m));
    let appends = 0;
    const store: EventStore = Object.create(s.rt.store);
    store.appendMany = (a) => {
      appends++;
      return s.rt.store.appendMany!(a);
    };
    const deps = { store, db: s.rt.database.db, bus: s.rt.bus, engines, logger: silentLogger() };
    const engage = outcomeBatcher(deps);
    const inHand = units.map(() => engage());
    const settled = await Promise.allSettled(
      units.map((u, i) => answerUnit(deps, u, { count: 1, maxDeliver: 5 }, inHand[i].record).finally(inHand[i].release)),
    );
    expect(settled.map((r) => (r.status === 'fulfilled' ? r.value : (r.reason as Error).message))).toEqual([
      'recorded',
      'recorded',
      'failed',
      'recorded',
    ]);
    expect(appends).toBe(1);
    const outcomes = await Promise.all(units.map(async (u) => (await s.rt.store.readStream(responseStream(responseIdOf(u.data.request_id))))[0]));
    expect(outcomes.map((e) => e.type)).toEqual(['ResponseRecorded', 'ResponseRecorded', 'ResponseFailed', 'ResponseRecorded']);
    expect((outcomes[2].data as { error_kind: string }).error_kind).toBe('unrecordable');
  });
});
