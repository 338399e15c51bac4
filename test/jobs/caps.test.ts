import { afterAll, beforeAll, expect, it } from 'vitest';
import { requestProbe } from '../../commands/probe/request-probe';
import { openPostgres } from '../../src/db';
import { isDomainError } from '../../src/domain/errors';
import { SYSTEM_ACTOR } from '../../src/domain/events';
import { newId } from '../../src/domain/ids';
import type { Runtime } from '../../src/runtime';
import { PROBE_SLOTS, probeJob } from '../../src/workers/probe';
import { type NatsServerProcess, startNatsServer } from '../bus/nats-server';
import { freshDatabase, type TestDatabase } from '../support/db';
import { gate, openJobRuntime, slotsLetGo } from '../support/jobs';
import { until } from '../support/until';
import { onPostgresServer } from '../support/suites';

// Two instances over one database and a private nats-server: needs a real Postgres server.
const suite = onPostgresServer('job caps across instances', 'two instances need a shared server');

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** The most jobs running at once, per website and in all, replaying the job events in the log's order. */
async function mostAtOnce(rt: Runtime): Promise<{ perSite: Map<string, number>; overall: number; ended: number }> {
  const rows = await rt.database.db.raw(
    `select stream_id, type, metadata->>'website_id' as website_id from aivis_events
      where stream_id like 'probe-%' and type in ('JobStarted', 'JobSucceeded', 'JobFailed') order by txid, position`,
  );
  const running = new Map<string, number>();
  const perSite = new Map<string, number>();
  let overall = 0;
  let most = 0;
  let ended = 0;
  for (const r of rows.rows as { stream_id: string; type: string; website_id: string }[]) {
    const d = r.type === 'JobStarted' ? 1 : -1;
    if (d < 0) ended++;
    const n = (running.get(r.website_id) ?? 0) + d;
    running.set(r.website_id, n);
    perSite.set(r.website_id, Math.max(perSite.get(r.website_id) ?? 0, n));
    overall += d;
    most = Math.max(most, overall);
  }
  return { perSite, overall: most, ended };
}

suite('running caps of a kind of job, two instances over NATS', () => {
  let nats: NatsServerProcess;
  let database: TestDatabase;
  let a: Runtime;
  let b: Runtime;
  const worked = { a: 0, b: 0 };
  // steps wait until every probe is submitted: the slots are full then, whatever the machine's load
  const submitted = gate();
  const probeOn = (name: 'a' | 'b') =>
    probeJob({
      async work(_step, r) {
        worked[name]++;
        await submitted.wait();
        await sleep(r.step_ms);
      },
    });

  beforeAll(async () => {
    nats = await startNatsServer();
    database = await freshDatabase(10, { serverSchema: true });
    a = await openJobRuntime(database, { specs: [probeOn('a')], natsUrl: nats.url });
    b = await openJobRuntime(await openPostgres(database.url!), { specs: [probeOn('b')], natsUrl: nats.url });
  }, 60_000);
  afterAll(async () => {
    submitted.open();
    await b?.close();
    await a?.close();
    await nats?.dispose();
  });

  it('given 200 probes for one website and 100 for five others, submitted through both instances, then never more than 4 run at once for a website nor 16 in all, and every one ends', async () => {
    const site = newId();
    const others = [newId(), newId(), newId(), newId(), newId()];
    const org = newId();
    const inputs = [...Array.from({ length: 200 }, () => site), ...others.flatMap((w) => Array.from({ length: 20 }, () => w))].map((website_id) => ({
      website_id,
      steps: 2,
      step_ms: 15,
      fail_at_step: null,
    }));
    await Promise.all(
      inputs.map(async (input, i) => {
        const rt = i % 2 ? b : a;
        const r = await requestProbe({ store: rt.store, organizationId: org, actor: SYSTEM_ACTOR }, input);
        if (isDomainError(r)) throw new Error(r.message);
      }),
    );
    // full as the log tells it: a slot is taken before its JobStarted is appended, and a job let go meanwhile could
    // end before the last JobStarted lands (a loaded host saw 15 at once that way)
    await until('the slots full', async () => (await mostAtOnce(a)).overall >= PROBE_SLOTS.overall);
    submitted.open();

    await until('every probe ended', async () => (await mostAtOnce(a)).ended === inputs.length, 120_000, 250);
    const { perSite, overall } = await mostAtOnce(a);
    expect(perSite.get(site)).toBe(PROBE_SLOTS.perScope);
    for (const w of others) expect(perSite.get(w)).toBeLessThanOrEqual(PROBE_SLOTS.perScope);
    // six websites could run 24 at once: the overall cap is what held them to 16
    expect(overall).toBe(PROBE_SLOTS.overall);
    await until('the read model has every end', async () => {
      const r = await a.database.db('rm_jobs').where({ kind: 'probe', status: 'succeeded' }).count<{ n: string }[]>('* as n');
      return Number(r[0].n) === inputs.length;
    });
    expect(worked.a).toBeGreaterThan(0);
    expect(worked.b).toBeGreaterThan(0);
    expect(worked.a + worked.b).toBeGreaterThanOrEqual(inputs.length * 2);
    await slotsLetGo(a.database.db);
    expect(Number((await a.database.db('aivis_job_slots').count<{ n: string }[]>('* as n'))[0].n)).toBe(0);
  }, 180_000);
});
