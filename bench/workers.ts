import { readdirSync, readFileSync } from 'node:fs';
import pg from 'pg';
import { connect } from 'nats';
import { startRun } from '../commands/responses/start-run';
import { isDomainError } from '../src/domain/errors';
import { SYSTEM_ACTOR } from '../src/domain/events';
import { fullShape, quickShape } from './answers-data';
import { type AnswerSite, seedAnswerSite } from './answers';
import { type Bench, cpuMeter, info, nowNs, perUnit, report, secondsSince } from './lib';
import type { BenchServer } from './server';
import { withWorkerInstances } from './with-server';

/**
 * Starts `runs` runs of the site's default schedule for `day` and waits until the read model has each finished and
 * the answers read model every answer they recorded (its work is part of an answer's cost, and it may trail the
 * runs'). They run side by side as backfills do: a manual or scheduled run would hold the schedule's slot alone.
 */
export async function runsAnswered(s: BenchServer, site: AnswerSite, runs: number, day: string): Promise<{ ids: string[]; units: number }> {
  const ctx = { store: s.rt.store, organizationId: s.organizationId, websiteId: site.websiteId, actor: SYSTEM_ACTOR };
  const ids: string[] = [];
  let units = 0;
  // the runs' answers are stamped when answered: counted through the site's time index, not a scan by run_id
  const since = new Date(Date.now() - 60_000);
  for (let i = 0; i < runs; i++) {
    const r = await startRun(ctx, { website_id: site.websiteId, schedule_id: null, trigger: 'backfill', day });
    if (isDomainError(r)) throw new Error(r.message);
    ids.push(r.result.run_id);
    units += r.result.units;
  }
  const db = s.rt.database.db;
  for (;;) {
    const done = Number((await db('rm_runs').whereIn('id', ids).whereNotNull('finished_at').count<{ n: string }[]>('* as n'))[0].n);
    if (done === ids.length) {
      const recorded = Number((await db('rm_runs').whereIn('id', ids).sum<{ n: string }[]>('recorded as n'))[0].n);
      const listed = Number(
        (
          await db('rm_responses')
            .where('website_id', site.websiteId)
            .where('run_at', '>=', since)
            .whereIn('run_id', ids)
            .count<{ n: string }[]>('* as n')
        )[0].n,
      );
      if (listed >= recorded) return { ids, units };
    }
    await new Promise((res) => setTimeout(res, 100));
  }
}

/** This process's CPU by thread name (/proc; Linux only): the main thread apart from V8's compiler and GC helpers. */
function threadCpuMs(): Map<string, number> {
  const out = new Map<string, number>();
  try {
    for (const tid of readdirSync('/proc/self/task')) {
      const st = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      const name = st.slice(st.indexOf('(') + 1, st.lastIndexOf(')'));
      const f = st.slice(st.lastIndexOf(')') + 2).split(' ');
      const ms = ((Number(f[11]) + Number(f[12])) * 1000) / 100;
      const key = tid === String(process.pid) ? 'main' : name;
      out.set(key, (out.get(key) ?? 0) + ms);
    }
  } catch {
    // not Linux
  }
  return out;
}
const threadsSince = (t0: Map<string, number>) =>
  [...threadCpuMs()]
    .map(([k, v]) => [k, v - (t0.get(k) ?? 0)] as const)
    .filter(([, v]) => v > 0)
    .map(([k, v]) => `${k} ${v.toFixed(0)} ms`)
    .join(', ');

/** Messages delivered so far to each durable of the bus (its consumer sequence), by durable name. */
async function deliveries(url: string): Promise<Map<string, number>> {
  const nc = await connect({ servers: url });
  try {
    const jsm = await nc.jetstreamManager();
    const out = new Map<string, number>();
    for await (const st of jsm.streams.list()) for await (const c of jsm.consumers.list(st.config.name)) out.set(c.name, c.delivered.consumer_seq);
    return out;
  } finally {
    await nc.close();
  }
}

/**
 * How the workers bench runs (BENCH_WORKER_SETUP): `two-nats` (the default, the reported figure: two instances sharing
 * a private NATS JetStream), `one-nats` (one instance on it), `one-memory` (one instance on the in-process bus, the
 * embedded default's, here over Postgres: what the path costs with no message broker at all).
 */
export function workerSetup(name = 'two-nats'): { instances: number; bus: 'nats' | 'memory' } {
  const setup = Object.hasOwn(WORKER_SETUPS, name) ? WORKER_SETUPS[name] : undefined;
  if (!setup) throw new Error(`BENCH_WORKER_SETUP: expected two-nats, one-nats or one-memory, not ${JSON.stringify(name)}`);
  return setup;
}
const WORKER_SETUPS: Record<string, { instances: number; bus: 'nats' | 'memory' }> = {
  'two-nats': { instances: 2, bus: 'nats' },
  'one-nats': { instances: 1, bus: 'nats' },
  'one-memory': { instances: 1, bus: 'memory' },
};

/** Answers of the simulated engine recorded per second by the response workers of two instances sharing NATS. */
export const workers: Bench = {
  name: 'workers',
  about: 'runs answered by the response workers of 2 instances over a private NATS JetStream (simulated engine)',
  async run({ quick }) {
    const shape = quick ? { ...quickShape, days: 1 } : { ...fullShape, days: 1 };
    // BENCH_WORKER_RUNS: more runs in the span, to tell the fixed cost of a span from the cost per answer
    const runs = Number(process.env.BENCH_WORKER_RUNS ?? (quick ? 2 : 6));
    // a commit from before BENCH_WORKER_SETUP ignores it: an A/B against one compares this setup with its two-nats
    const setupName = process.env.BENCH_WORKER_SETUP || 'two-nats';
    const setup = workerSetup(setupName);
    await withWorkerInstances(setup, 0, { ENGINE_MODE: 'simulated' }, async (instances, natsUrl) => {
      const a = instances[0];
      const site = await seedAnswerSite(a, shape);
      const stat = async () =>
        (
          await a.rt.database.db.raw(
            'select xact_commit::int as c, tup_returned::bigint as r, tup_fetched::bigint as f from pg_stat_database where datname = current_database()',
          )
        ).rows[0];
      const tables = async () =>
        new Map<string, number>(
          (
            await a.rt.database.db.raw('select relname, coalesce(seq_tup_read,0) + coalesce(idx_tup_fetch,0) as n, seq_scan from pg_stat_user_tables')
          ).rows.map((r: { relname: string; n: string }) => [r.relname, Number(r.n)]),
        );
      // what the two instances spend doing nothing (polls, leases, pull requests): a cost per second, not per answer
      // (BENCH_IDLE_MS: over a longer span, to profile it)
      const idleMs = Number(process.env.BENCH_IDLE_MS ?? 3000);
      const idle = await cpuMeter(a.rt.database.db);
      await new Promise((res) => setTimeout(res, idleMs));
      const ic = await idle.stop();
      info(
        `workers: idle, ${setup.instances} instance(s): node ${(ic.nodeUs / idleMs).toFixed(0)} ms/s, Postgres ${(ic.pgUs / idleMs).toFixed(0)} ms/s of CPU`,
      );
      // BENCH_WORKER_WARM=n: the same runs of n earlier days first, metered apart, so that the measured span holds no
      // first-time costs (compiling the code paths, the prompts' first-answer markers, the consumers' first pulls)
      for (let i = 0; i < Number(process.env.BENCH_WORKER_WARM ?? 0); i++) {
        const warm = await cpuMeter(a.rt.database.db);
        const th0 = threadCpuMs();
        const w0 = nowNs();
        const { units } = await runsAnswered(a, site, runs, `2026-02-${String(10 + i).padStart(2, '0')}`);
        const wc = await warm.stop();
        info(
          `workers: warm-up span ${i + 1}, ${units} answers in ${secondsSince(w0).toFixed(1)} s: node ${(wc.nodeUs / units).toFixed(0)} + Postgres ${(wc.pgUs / units).toFixed(0)} us an answer; threads: ${threadsSince(th0)}`,
        );
      }
      const t0Tables = await tables();
      const s0 = await stat();
      const queries = { n: 0 };
      // BENCH_QUERIES=1: the statements of the measured span by count (what pg_stat_statements would say, without it)
      // and the milliseconds from sending each to its answer (wall time: on a loaded host a proxy for its cost)
      const bySql = new Map<string, { n: number; ms: number }>();
      const started = new Map<string, { key: string; t: bigint }>();
      const tally = process.env.BENCH_QUERIES
        ? (q: { sql: string; __knexQueryUid?: string }) => {
            const key = q.sql.replace(/\$\d+|\?/g, '?').slice(0, 160);
            const t = bySql.get(key) ?? { n: 0, ms: 0 };
            t.n++;
            bySql.set(key, t);
            if (q.__knexQueryUid) started.set(q.__knexQueryUid, { key, t: nowNs() });
          }
        : () => undefined;
      const answered = (_r: unknown, q: { __knexQueryUid?: string }) => {
        const s = q?.__knexQueryUid ? started.get(q.__knexQueryUid) : undefined;
        if (!s) return;
        started.delete(q.__knexQueryUid!);
        bySql.get(s.key)!.ms += Number(nowNs() - s.t) / 1e6;
      };
      for (const x of instances) {
        x.rt.database.db.on('query', (q: { sql: string }) => {
          queries.n++;
          tally(q);
        });
        if (process.env.BENCH_QUERIES) {
          x.rt.database.db.on('query-response', answered);
          x.rt.database.db.on('query-error', (_e: unknown, q: { __knexQueryUid?: string }) => answered(null, q));
        }
      }
      const d0 = process.env.BENCH_QUERIES && natsUrl ? await deliveries(natsUrl) : null;
      // every statement sent on a pg connection (knex's and the event store's own, which bypass knex's events)
      const onWire = new Map<string, number>();
      const wireBytes = new Map<string, number>();
      const byProjection = new Map<string, number>();
      const query = pg.Client.prototype.query;
      if (process.env.BENCH_QUERIES)
        pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
          const q = args[0] as string | { text?: string; name?: string };
          const key = (typeof q === 'string' ? q : (q?.name ?? q?.text ?? '?')).replace(/\s+/g, ' ').slice(0, 90);
          onWire.set(key, (onWire.get(key) ?? 0) + 1);
          const values = (typeof q === 'object' && (q as { values?: unknown[] })?.values) || (args[1] as unknown[] | undefined);
          // a projection's batch transaction starts with its live lock: counted by projection
          const lock = Array.isArray(values) && typeof values[0] === 'string' && values[0].startsWith('aivis-live:') ? values[0].slice(11) : null;
          if (lock) byProjection.set(lock, (byProjection.get(lock) ?? 0) + 1);
          // the bytes of its parameters (what the driver serialises and the socket carries)
          if (Array.isArray(values))
            wireBytes.set(key, (wireBytes.get(key) ?? 0) + values.reduce<number>((n, v) => n + (typeof v === 'string' ? v.length : 16), 0));
          return (query as (...a: unknown[]) => unknown).apply(this, args);
        } as typeof query;
      const cpu = await cpuMeter(a.rt.database.db);
      const th0 = threadCpuMs();
      const t0 = nowNs();
      const { ids, units } = await runsAnswered(a, site, runs, '2026-03-01');
      const db = a.rt.database.db;
      const seconds = secondsSince(t0);
      const c = await cpu.stop();
      info(`workers: the measured span's CPU by thread: ${threadsSince(th0)}`);
      const s1 = await stat();
      pg.Client.prototype.query = query;
      if (onWire.size) {
        info(`workers: ${[...onWire.values()].reduce((x, y) => x + y, 0)} statements on the wire`);
        for (const [k, n] of [...onWire].sort((x, y) => y[1] - x[1]).slice(0, 40))
          info(`workers: wire x${n} ${((wireBytes.get(k) ?? 0) / 1e6).toFixed(2)} MB: ${k}`);
        info(
          `workers: projection transactions ${[...byProjection]
            .sort((x, y) => y[1] - x[1])
            .map(([k, n]) => `${k} ${n}`)
            .join(', ')}`,
        );
        info(`workers: ${([...wireBytes.values()].reduce((x, y) => x + y, 0) / 1e6).toFixed(1)} MB of parameters on the wire`);
      }
      if (d0) {
        const d1 = await deliveries(natsUrl!);
        const moved = [...d1].map(([k, v]) => [k, v - (d0.get(k) ?? 0)] as const).filter(([, v]) => v > 0);
        info(`workers: bus deliveries by durable ${moved.map(([k, v]) => `${k} ${v}`).join(', ')}`);
      }
      const t1Tables = await tables();
      const reads = [...t1Tables]
        .map(([k, v]) => [k, v - (t0Tables.get(k) ?? 0)] as const)
        .filter(([, v]) => v > 0)
        .sort((x, y) => y[1] - x[1])
        .slice(0, 6);
      info(`workers: rows read by table ${reads.map(([k, v]) => `${k} ${v}`).join(', ')}`);
      for (const [sql, t] of [...bySql].sort((x, y) => y[1].ms - x[1].ms).slice(0, 30)) info(`workers: query x${t.n} ${t.ms.toFixed(0)} ms: ${sql}`);
      info(
        `workers: ${s1.c - s0.c} Postgres transactions, ${queries.n} knex queries, ${Number(s1.r) - Number(s0.r)} tuples returned, ${Number(s1.f) - Number(s0.f)} fetched`,
      );
      const recorded = Number((await db('rm_run_units').whereIn('run_id', ids).where('status', 'recorded').count<{ n: string }[]>('* as n'))[0].n);
      if (recorded !== units) {
        const why = await db('rm_run_units').whereIn('run_id', ids).whereNot('status', 'recorded').first('error_kind', 'error');
        throw new Error(`${recorded} of ${units} units answered (${why?.error_kind}: ${why?.error})`);
      }
      const byInstance = await db('aivis_events')
        .whereIn('type', ['ResponseRecorded'])
        .whereRaw("data->>'run_id' = any(?)", [ids])
        .count<{ n: string }[]>('* as n');
      info(
        `workers: ${runs} runs of ${units / runs} units (${shape.prompts} prompts x 11 models x ${shape.locations} locations), WORKER_CONCURRENCY 16 per instance, ${setup.instances} instance(s) on the ${setup.bus === 'nats' ? 'NATS' : 'in-process'} bus; ${byInstance[0].n} answers recorded`,
      );
      report('worker_answers_per_s', units / seconds, 'answers/s', {
        cpu: perUnit(c, units, 'answer'),
        goal: { op: '>=', value: 2000 },
        note: `${units} units answered and recorded in ${seconds.toFixed(1)} s (from the first start until every run was finished in the read model and its answers listed)${setupName === 'two-nats' ? '' : `; setup ${setupName}, not the figure's`}`,
      });
      report('worker_cpu_us_per_answer', c.nodeUs / units, 'us', {
        note: `node CPU of the bench process (${setup.instances === 2 ? 'both instances' : 'one instance'}) per answer; Postgres ${(c.pgUs / units).toFixed(1)} us`,
      });
    });
  },
};
