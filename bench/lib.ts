import { type Database, openPostgres } from '../src/db';
import type { Runtime } from '../src/runtime';
import { createDatabase, onServer } from '../test/support/pg-server';

/** The server every benchmark talks to; only 127.0.0.1. */
export const SERVER_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export interface BenchOptions {
  quick: boolean;
}

export interface Bench {
  name: string;
  /** one line: what it measures */
  about: string;
  run(opts: BenchOptions): Promise<void>;
}

/** A benchmark whose run is handed what its setup made (`C`: a server, a database, a dataset) beside the options. */
export interface BenchWith<C> {
  name: string;
  about: string;
  run(on: C & BenchOptions): Promise<void>;
}

export interface BenchDatabase extends Database {
  url: string;
  name: string;
}

const open = new Set<BenchDatabase>();

/** A new, empty database on the server for one benchmark, dropped by close() (and on exit by dropAll). */
export async function freshDatabase(poolMax = 10): Promise<BenchDatabase> {
  const host = new URL(SERVER_URL).hostname;
  if (host !== '127.0.0.1' && host !== 'localhost') throw new Error(`benchmarks only talk to 127.0.0.1 (DATABASE_URL host is ${host})`);
  const created = await createDatabase(SERVER_URL, 'aivis_b');
  const d = await openPostgres(created.url, poolMax);
  let closed = false;
  const bd: BenchDatabase = {
    ...d,
    url: created.url,
    name: created.name,
    close: async () => {
      if (closed) return;
      closed = true;
      open.delete(bd);
      await d.close().catch(() => undefined);
      await created.drop();
    },
  };
  open.add(bd);
  return bd;
}

/**
 * A database of a fixed name kept after the run (BENCH_DATASET_DB): `fresh` drops and creates it first; close() only
 * closes the pool. Only for iterating on a figure; a reported figure comes from a fresh database.
 */
export async function keptDatabase(name: string, fresh: boolean, poolMax = 10): Promise<BenchDatabase> {
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(name)) throw new Error(`BENCH_DATASET_DB must be a plain lowercase name, not ${name}`);
  if (fresh) {
    await onServer(SERVER_URL, `drop database if exists ${name} with (force)`);
    await onServer(SERVER_URL, `create database ${name}`);
  }
  const u = new URL(SERVER_URL);
  u.pathname = `/${name}`;
  const d = await openPostgres(u.toString(), poolMax);
  return { ...d, url: u.toString(), name };
}

/** Whether a database of that name exists on the bench server. */
export async function databaseExists(name: string): Promise<boolean> {
  const probe = await openPostgres(SERVER_URL, 1);
  try {
    const r = await probe.db.raw('select 1 from pg_database where datname = ?', [name]);
    return r.rows.length > 0;
  } finally {
    await probe.close();
  }
}

/** Runs `fn` on a fresh database (pool of `poolMax` connections, 10 by default), dropped afterwards whatever happens. */
export async function withFreshDatabase<T>(options: { poolMax?: number }, fn: (d: BenchDatabase) => Promise<T>): Promise<T> {
  const d = await freshDatabase(options.poolMax);
  try {
    return await fn(d);
  } finally {
    await d.close();
  }
}

/** A benchmark run on a fresh database with a pool of `poolMax` connections (withFreshDatabase). */
export const databaseBench = (poolMax: number, b: BenchWith<{ d: BenchDatabase }>): Bench => ({
  name: b.name,
  about: b.about,
  run: ({ quick }) => withFreshDatabase({ poolMax }, (d) => b.run({ d, quick })),
});

/** Drops every database a benchmark left open (a failure or ^C mid-run). */
export async function dropAll(): Promise<void> {
  for (const d of [...open]) await d.close().catch(() => undefined);
}

// ---- time ----

export const nowNs = (): bigint => process.hrtime.bigint();
export const secondsSince = (t0: bigint): number => Number(nowNs() - t0) / 1e9;
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function quantile(sorted: number[], q: number): number {
  if (sorted.length === 0) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.round(q * (sorted.length - 1))));
  return sorted[i];
}
/** The middle value; of an even count, the mean of the two middle ones. */
export const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const h = s.length >> 1;
  return s.length % 2 ? s[h] : (s[h - 1] + s[h]) / 2;
};

/**
 * `run` n times in sequence after `warm` runs not counted (warm-up; default 3): the p50 and p95 of the n, in ms, and the
 * last answer. `run` gets its call's index, warm-up included.
 */
export async function warmedUp<T>(n: number, run: (i: number) => Promise<T>, warm = 3): Promise<{ p50: number; p95: number; last: T }> {
  let last = undefined as T;
  for (let i = 0; i < warm; i++) last = await run(i);
  const times = (await sampleUs(n, async (i) => (last = await run(warm + i)))).map((us) => us / 1e3).sort((a, b) => a - b);
  return { p50: quantile(times, 0.5), p95: quantile(times, 0.95), last };
}

/** A JSON POST to a bench server with its API key: the answer's body; anything but 200 throws with the body. */
export async function postOk(server: { url: string; key: string }, path: string, body: unknown): Promise<any> {
  const res = await fetch(`${server.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': server.key },
    body: JSON.stringify(body),
  });
  const out = await res.json();
  if (res.status !== 200) throw new Error(`${path}: ${res.status} ${JSON.stringify(out)}`);
  return out;
}

/** Runs fn n times in sequence and returns each call's duration in microseconds. */
export async function sampleUs(n: number, fn: (i: number) => Promise<unknown> | unknown): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = nowNs();
    await fn(i);
    out.push(Number(nowNs() - t0) / 1e3);
  }
  return out;
}

// ---- printing ----

export interface Goal {
  op: '>=' | '<=';
  value: number;
}

export interface Figure {
  name: string;
  value: number;
  unit: string;
  goal?: Goal;
  ref?: { name: string; value: number };
  /** CPU per unit of a throughput figure, in µs: this process's and the Postgres backends' */
  cpu?: UnitCpu;
  note?: string;
}

export interface UnitCpu {
  nodeUs: number;
  pgUs: number;
  /** what one unit is (answer, event, request) */
  per: string;
}

/** A meter's reading spread over `units` units. */
export const perUnit = (c: { nodeUs: number; pgUs: number }, units: number, per: string): UnitCpu => ({
  nodeUs: c.nodeUs / units,
  pgUs: c.pgUs / units,
  per,
});

/** A throughput figure: its unit is a rate. */
export const isRate = (f: Figure): boolean => f.unit.endsWith('/s');

export const figures: Figure[] = [];

const fmt = (v: number): string => {
  if (!Number.isFinite(v)) return String(v);
  const a = Math.abs(v);
  if (a >= 1000) return String(Math.round(v));
  if (a >= 100) return v.toFixed(0);
  if (a >= 10) return v.toFixed(1);
  if (a >= 1) return v.toFixed(2);
  return v.toPrecision(3);
};

export const goalMet = (f: Figure): boolean | null => (f.goal ? (f.goal.op === '>=' ? f.value >= f.goal.value : f.value <= f.goal.value) : null);

export function line(f: Figure): string {
  let s = `${f.name} ${fmt(f.value)} ${f.unit}`;
  if (f.cpu) s += `  cpu ${fmt(f.cpu.nodeUs + f.cpu.pgUs)} us/${f.cpu.per} (node ${fmt(f.cpu.nodeUs)} + Postgres ${fmt(f.cpu.pgUs)})`;
  if (f.ref) s += `  ref ${f.ref.name} ${fmt(f.ref.value)}  ratio ${(f.value / f.ref.value).toFixed(3)}`;
  if (f.goal) s += `  [goal ${f.goal.op} ${f.goal.value}: ${goalMet(f) ? 'met' : 'NOT met'}]`;
  if (f.note) s += `  # ${f.note}`;
  return s;
}

/** Prints one figure as `name value unit` (+ reference and ratio, goal, note) and keeps it for the summary. */
export function report(name: string, value: number, unit: string, extra: Omit<Figure, 'name' | 'value' | 'unit'> = {}): Figure {
  const f: Figure = { name, value, unit, ...extra };
  figures.push(f);
  process.stdout.write(`${line(f)}\n`);
  return f;
}

/** Context for the figures (dataset, method), as `# ` comment lines that paste along with them. */
export const info = (msg: string) => process.stdout.write(`# ${msg}\n`);

// ---- CPU accounting (the box may be shared: CPU time per unit of work is the figure load does not distort much) ----

const TICK_US = 10_000; // USER_HZ 100 on Linux

/** CPU time (µs) used so far by the Postgres backends serving this database (read from /proc; 0 if unreadable). */
export async function pgBackendCpuUs(db: import('knex').Knex): Promise<Map<number, number>> {
  const { readFileSync } = await import('node:fs');
  const r = await db.raw('select pid from pg_stat_activity where datname = current_database()');
  const out = new Map<number, number>();
  for (const { pid } of r.rows as { pid: number }[]) {
    try {
      const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
      out.set(pid, (Number(f[11]) + Number(f[12])) * TICK_US);
    } catch {
      /* not on this machine, or gone */
    }
  }
  return out;
}

/** With BENCH_CPU_PROF=dir, a V8 CPU profile of this process over the metered span, written to dir on stop. */
async function profileSpan(): Promise<() => Promise<void>> {
  const dir = process.env.BENCH_CPU_PROF;
  if (!dir) return async () => undefined;
  const { Session } = await import('node:inspector/promises');
  const { mkdirSync, writeFileSync } = await import('node:fs');
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
  return async () => {
    const { profile } = await session.post('Profiler.stop');
    mkdirSync(dir, { recursive: true });
    const file = `${dir}/bench-${Date.now()}.cpuprofile`;
    writeFileSync(file, JSON.stringify(profile));
    session.disconnect();
    info(`CPU profile of the metered span: ${file}`);
  };
}

/** Starts a CPU meter for this process and the database's backends; stop() returns µs used by each. */
export async function cpuMeter(db: import('knex').Knex) {
  const endProfile = await profileSpan();
  const node0 = process.cpuUsage();
  const pg0 = await pgBackendCpuUs(db);
  return {
    /** nodeUs is user + system time; nodeSysUs the system (kernel) part of it, socket copies mostly */
    async stop(): Promise<{ nodeUs: number; nodeSysUs: number; pgUs: number }> {
      const n = process.cpuUsage(node0);
      await endProfile();
      const pg1 = await pgBackendCpuUs(db);
      let pgUs = 0;
      for (const [pid, us] of pg1) pgUs += us - (pg0.get(pid) ?? 0);
      return { nodeUs: n.user + n.system, nodeSysUs: n.system, pgUs };
    },
  };
}

/** This process's RSS from now (after a collection where --expose-gc allows) and its peak, sampled every `everyMs` until stop(). */
export function rssPeak(everyMs: number): { stop(): { base: number; peak: number } } {
  global.gc?.();
  const base = process.memoryUsage().rss;
  let peak = base;
  const timer = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, everyMs);
  return {
    stop() {
      clearInterval(timer);
      return { base, peak };
    },
  };
}

// ---- jobs ----

/** The most jobs of streams `<prefix>-…` running at once, per website and in all, replaying the job events in the log's order. */
export async function mostJobsAtOnce(rt: Runtime, prefix: string): Promise<{ perSite: number; overall: number; ended: number }> {
  const rows = await rt.database.db.raw(
    `select type, metadata->>'website_id' as w from aivis_events
      where stream_id like ? and type in ('JobStarted', 'JobSucceeded', 'JobFailed') order by txid, position`,
    [`${prefix}-%`],
  );
  const running = new Map<string, number>();
  let perSite = 0;
  let overall = 0;
  let most = 0;
  let ended = 0;
  for (const r of rows.rows as { type: string; w: string }[]) {
    const d = r.type === 'JobStarted' ? 1 : -1;
    if (d < 0) ended++;
    const n = (running.get(r.w) ?? 0) + d;
    running.set(r.w, n);
    perSite = Math.max(perSite, n);
    overall += d;
    most = Math.max(most, overall);
  }
  return { perSite, overall: most, ended };
}
