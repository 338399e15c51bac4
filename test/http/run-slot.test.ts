import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RUN_IN_PROGRESS, RUN_SLOT_HOLD_MS, runSlotStream } from '../../commands/responses/run-slot';
import { startRun } from '../../commands/responses/start-run';
import { isDomainError } from '../../src/domain/errors';
import { SYSTEM_ACTOR } from '../../src/domain/events';
import { MODEL_IDS } from '../../src/domain/models';
import { EngineError } from '../../src/engines/port';
import { silentLogger } from '../../src/logger';
import { recordRunEnds } from '../../src/workers/run-ends';
import { schedulePass } from '../../src/workers/scheduler';
import { buildSite, finishedRun } from '../support/answers';
import { onRealPostgres } from '../support/db';
import { holdSwitch, simulatedEnginesWith } from '../support/engines';
import { type Answer, call, startServer, type TestServer } from '../support/server';
import { until } from '../support/until';

// One run in progress per schedule, decided on the schedule's slot stream. On Postgres the requests are spread over two
// instances on one database; PGlite has one connection, so one instance there.
if (!onRealPostgres) console.log('run slot races: one instance on PGlite (a second instance needs a shared Postgres server)');

const N = 6;

describe('one run in progress per schedule', () => {
  const gate = holdSwitch();
  let failing = false;
  const engines = simulatedEnginesWith(async (model, _req, simulated) => {
    await gate.wait();
    if (failing) throw new EngineError('server', 'the provider is down', { attempts: 3, model });
    return simulated();
  });
  let a: TestServer;
  let b: TestServer | null = null;
  let key: string;
  let organizationId: string;
  beforeAll(async () => {
    a = await startServer({}, {}, undefined, { engines });
    if (onRealPostgres) b = await startServer({}, {}, a, { engines });
    ({ key, organization_id: organizationId } = await a.org('Slots'));
  });
  afterAll(async () => {
    gate.release();
    await b?.close();
    await a?.close();
  });

  const instances = () => (b ? [a, b] : [a]);
  const at = (i: number) => instances()[i % instances().length];
  const start = (websiteId: string, i = 0, scheduleId?: string) =>
    call(at(i), 'POST', '/api/v1/response-streaming/start', { key, body: { website_id: websiteId, ...(scheduleId && { schedule_id: scheduleId }) } });
  const slotEvents = async (websiteId: string, scheduleId: string | null = null) =>
    (await a.rt.store.readStream(runSlotStream(websiteId, scheduleId))).map((e) => [
      e.type,
      (e.data as { run_id: string }).run_id,
      (e.data as { reason?: string }).reason,
    ]);
  const runEvents = async (websiteId: string) =>
    (await a.rt.database.db('aivis_events').where('type', 'RunStarted').whereRaw("data->>'website_id' = ?", [websiteId]).select('data')).map(
      (r: { data: { run_id: string } }) => r.data.run_id,
    );
  const statuses = (rs: Answer[]) => rs.map((r) => r.status).sort();

  it('given N starts of one schedule at once, then one 202 and N-1 409 naming its run; once it finished, the next start is a 202', async () => {
    const site = await buildSite(a, key);
    gate.hold();
    try {
      const rs = await Promise.all(Array.from({ length: N }, (_, i) => start(site.id, i)));
      expect(statuses(rs)).toEqual([202, ...Array(N - 1).fill(409)]);
      const won = rs.find((r) => r.status === 202)!.body;
      for (const r of rs.filter((x) => x.status === 409))
        expect(r.body).toMatchObject({ error: RUN_IN_PROGRESS, run: { run_id: won.run_id, status: 'running' } });
      expect(await runEvents(site.id)).toEqual([won.run_id]);
      expect(await slotEvents(site.id)).toEqual([['RunSlotTaken', won.run_id, undefined]]);
      // still going: another start is refused with the run as the listing shows it
      const again = await start(site.id, 1);
      expect(again.status).toBe(409);
      expect(again.body.run).toMatchObject({ run_id: won.run_id, status: 'running', pending: MODEL_IDS.length, finished_at: null });
      gate.release();
      await finishedRun(a, key, site.id, won.run_id);
      const next = await start(site.id, 1);
      expect(next.status).toBe(202);
      await finishedRun(a, key, site.id, next.body.run_id);
      const slot = await slotEvents(site.id);
      expect(slot.slice(0, 3)).toEqual([
        ['RunSlotTaken', won.run_id, undefined],
        ['RunEnded', won.run_id, 'finished'],
        ['RunSlotTaken', next.body.run_id, undefined],
      ]);
    } finally {
      gate.release();
    }
  });

  it("given starts of two schedules at once, then each schedule's slot is its own: both start", async () => {
    const site = await buildSite(a, key);
    const weekly = await call(a, 'POST', '/api/v1/prompt-schedules', {
      key,
      body: { website_id: site.id, name: 'Weekly', models: [MODEL_IDS[0]], frequency: 'weekly' },
    });
    const [one, two] = await Promise.all([start(site.id, 0), start(site.id, 1, weekly.body.schedule.id)]);
    expect([one.status, two.status]).toEqual([202, 202]);
    await finishedRun(a, key, site.id, one.body.run_id);
    await finishedRun(a, key, site.id, two.body.run_id);
  });

  it("given the scheduler's passes and manual starts at once, then the schedule gets exactly one run", async () => {
    const site = await buildSite(a, key);
    gate.hold();
    try {
      const deps = (s: TestServer) => ({ store: s.rt.store, db: s.rt.database.db, logger: silentLogger() });
      const [passes, manual] = await Promise.all([
        Promise.all(instances().map((s) => schedulePass(deps(s)))),
        Promise.all(Array.from({ length: N }, (_, i) => start(site.id, i))),
      ]);
      const runs = await runEvents(site.id);
      expect(runs).toHaveLength(1);
      const scheduled = passes.flat().filter((id) => runs.includes(id));
      const started = manual.filter((r) => r.status === 202);
      expect(scheduled.length + started.length).toBe(1);
      for (const r of manual.filter((x) => x.status !== 202)) expect(r.body).toMatchObject({ error: RUN_IN_PROGRESS, run: { run_id: runs[0] } });
    } finally {
      gate.release();
    }
  });

  it('given a run whose every unit fails, then it ends as failed, its end is recorded without anyone starting again, and the next start is a 202', async () => {
    const site = await buildSite(a, key);
    failing = true;
    try {
      const first = await start(site.id);
      expect(first.status).toBe(202);
      const run = await finishedRun(a, key, site.id, first.body.run_id);
      expect(run).toMatchObject({ status: 'failed', recorded: 0, failed: MODEL_IDS.length, pending: 0 });
      await until('the end recorded by the workers', async () => (await slotEvents(site.id)).length === 2);
      expect(await slotEvents(site.id)).toEqual([
        ['RunSlotTaken', first.body.run_id, undefined],
        ['RunEnded', first.body.run_id, 'finished'],
      ]);
    } finally {
      failing = false;
    }
    const next = await start(site.id);
    expect(next.status).toBe(202);
    await finishedRun(a, key, site.id, next.body.run_id);
  });

  it('given a finished run, when every instance records its end at once, then it is recorded once', async () => {
    const site = await buildSite(a, key);
    const first = await start(site.id);
    await finishedRun(a, key, site.id, first.body.run_id);
    const deps = (s: TestServer) => ({ store: s.rt.store, db: s.rt.database.db, logger: silentLogger() });
    const passes = await Promise.all([...instances(), ...instances()].map((s) => recordRunEnds(deps(s))));
    expect(passes.flatMap((p) => p.finished).filter((id) => id === first.body.run_id).length).toBeLessThanOrEqual(1);
    await until('the end recorded', async () => (await slotEvents(site.id)).length === 2);
    expect((await slotEvents(site.id)).filter(([type]) => type === 'RunEnded')).toEqual([['RunEnded', first.body.run_id, 'finished']]);
  });

  it('given a run whose end is never recorded, then once its hold runs out it ends as expired, its pending units fail as expired, and its schedule is free', async () => {
    const site = await buildSite(a, key);
    gate.hold();
    let next: Answer | null = null;
    try {
      const stuck = await start(site.id);
      expect(stuck.status).toBe(202);
      await until(
        'its units listed',
        async () =>
          (await call(a, 'GET', `/api/v1/response-streaming/runs/${stuck.body.run_id}`, { key, query: { website_id: site.id } })).status === 200,
      );
      // before the hold runs out, nothing expires
      const soon = () => new Date(Date.now() + RUN_SLOT_HOLD_MS - 60_000);
      const early = await recordRunEnds({ store: a.rt.store, db: a.rt.database.db, logger: silentLogger(), now: soon });
      expect(early.expired).not.toContain(stuck.body.run_id);
      // past it, every instance passing at once: one end
      const past = () => new Date(Date.now() + RUN_SLOT_HOLD_MS + 60_000);
      const passes = await Promise.all(
        instances().map((s) => recordRunEnds({ store: s.rt.store, db: s.rt.database.db, logger: silentLogger(), now: past })),
      );
      expect(passes.flatMap((p) => p.expired).filter((id) => id === stuck.body.run_id)).toHaveLength(1);
      expect(await slotEvents(site.id)).toEqual([
        ['RunSlotTaken', stuck.body.run_id, undefined],
        ['RunEnded', stuck.body.run_id, 'expired'],
      ]);
      const run = await until('the run shown as ended', async () => {
        const r = await call(a, 'GET', `/api/v1/response-streaming/runs/${stuck.body.run_id}`, { key, query: { website_id: site.id } });
        return r.body.status !== 'running' && r.body;
      });
      expect(run).toMatchObject({ status: 'failed', recorded: 0, failed: MODEL_IDS.length, pending: 0 });
      expect(run.finished_at).not.toBeNull();
      expect(run.failures.map((f: { error_kind: string }) => f.error_kind)).toEqual(Array(MODEL_IDS.length).fill('expired'));
      next = await start(site.id, 1);
      expect(next.status).toBe(202);
      // the expired run's answers arriving late no longer count for it
      gate.release();
      await finishedRun(a, key, site.id, next.body.run_id);
      await until(
        'the late answers recorded',
        async () =>
          Number(
            (
              await a.rt.database
                .db('aivis_events')
                .where('type', 'ResponseRecorded')
                .whereRaw("data->>'run_id' = ?", [stuck.body.run_id])
                .count<{ n: string }[]>('* as n')
            )[0].n,
          ) === MODEL_IDS.length,
      );
      await a.rt.waitForReadModels(await a.rt.store.lastPosition(), ['runs']);
      const after = await call(a, 'GET', `/api/v1/response-streaming/runs/${stuck.body.run_id}`, { key, query: { website_id: site.id } });
      expect(after.body).toMatchObject({ status: 'failed', recorded: 0, failed: MODEL_IDS.length, pending: 0 });
    } finally {
      gate.release();
    }
  });

  it('given a hold that ran out, when a run starts, then it ends the stuck run as expired and takes the slot', async () => {
    const site = await buildSite(a, key);
    gate.hold();
    try {
      const stuck = await start(site.id);
      expect(stuck.status).toBe(202);
      const ctx = (hours: number) => ({
        store: a.rt.store,
        organizationId,
        websiteId: site.id,
        actor: SYSTEM_ACTOR,
        now: () => new Date(Date.now() + hours * 3_600_000),
      });
      const refused = await startRun(ctx(11), { website_id: site.id, schedule_id: null, trigger: 'manual', day: '2026-03-02' });
      expect(isDomainError(refused) && refused.message).toBe(RUN_IN_PROGRESS);
      const taken = await startRun(ctx(13), { website_id: site.id, schedule_id: null, trigger: 'manual', day: '2026-03-02' });
      if (isDomainError(taken)) throw new Error(taken.message);
      expect(taken.result.started).toBe(true);
      expect(await slotEvents(site.id)).toEqual([
        ['RunSlotTaken', stuck.body.run_id, undefined],
        ['RunEnded', stuck.body.run_id, 'expired'],
        ['RunSlotTaken', taken.result.run_id, undefined],
      ]);
      gate.release();
      await finishedRun(a, key, site.id, taken.result.run_id);
    } finally {
      gate.release();
    }
  });
});
