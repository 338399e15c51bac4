import { fork } from 'node:child_process';
import type { Knex } from 'knex';
import { fileURLToPath } from 'node:url';
import { addCompetitor } from '../commands/catalog/add-competitor';
import { createLocation } from '../commands/catalog/create-location';
import { createPrompt } from '../commands/catalog/create-prompt';
import { createWebsite } from '../commands/websites/create-website';
import { isDomainError } from '../src/domain/errors';
import { SYSTEM_ACTOR } from '../src/domain/events';
import type { Position } from '../src/eventstore/port';
import type { Runtime } from '../src/runtime';
import { OBSERVATION_WORKER } from '../src/workers/observations';
import { startNatsServer } from '../test/bus/nats-server';
import { answersIn, type DatasetShape, fullShape, quickShape, type SiteIds, siteSpec } from './answers-data';
import { type Bench, type BenchWith, cpuMeter, databaseExists, info, keptDatabase, nowNs, perUnit, report, secondsSince } from './lib';
import { type BenchServer, startBenchServer } from './server';
import { runsAnswered } from './workers';

/** Waits until every read model (or the named ones) has passed `pos`, however long it takes. */
export async function caughtUp(rt: Runtime, pos: Position, names?: string[]): Promise<void> {
  const runners = names ? names.map((n) => rt.runners.get(n)!) : [...rt.runners.values()];
  for (const r of runners) while (!(await r.waitFor(pos, 60_000)));
}

export interface AnswerSite {
  websiteId: string;
  ids: SiteIds;
  shape: DatasetShape;
}

/** The dataset's website and catalogue, written through the commands. */
export async function seedAnswerSite(s: BenchServer, shape: DatasetShape): Promise<AnswerSite> {
  const spec = siteSpec(shape);
  const ctx = { store: s.rt.store, organizationId: s.organizationId, actor: SYSTEM_ACTOR };
  const must = <T>(r: T) => {
    if (isDomainError(r)) throw new Error(r.message);
    return r as Exclude<T, { kind: string; message: string }>;
  };
  const w = must(await createWebsite(ctx, { name: spec.brand.name, url: spec.brand.url }));
  const websiteId = w.result.id;
  const site = { ...ctx, websiteId };
  for (const c of spec.competitors) must(await addCompetitor(site, { website_id: websiteId, website_url: spec.brand.url, ...c }));
  const promptIds: string[] = [];
  for (const p of spec.prompts) promptIds.push(must(await createPrompt(site, { website_id: websiteId, ...p })).result.id);
  const locationIds: string[] = [];
  let last: Position | null = null;
  for (const l of spec.locations) {
    const r = must(await createLocation(site, { website_id: websiteId, ...l }));
    locationIds.push(r.result.id);
    last = r.position;
  }
  await caughtUp(s.rt, last!);
  return { websiteId, ids: { promptIds, locationIds }, shape };
}

/** Imports the dataset over HTTP from a child process; resolves when the last import call has answered. */
export function importDataset(s: BenchServer, site: AnswerSite, concurrency: number, onProgress?: (n: number) => void) {
  return new Promise<{ imported: number; skipped: number; requests: number }>((resolve, reject) => {
    const child = fork(fileURLToPath(new URL('./import-client.ts', import.meta.url)), [], {
      execArgv: ['--import', 'tsx'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    child.on('message', (m: { progress?: number; done?: { imported: number; skipped: number; requests: number }; error?: string }) => {
      if (m.progress !== undefined) onProgress?.(m.progress);
      if (m.done) resolve(m.done);
      if (m.error) reject(new Error(m.error));
    });
    child.once('error', reject);
    child.once('exit', (code) => code !== 0 && reject(new Error(`import client exited with ${code}`)));
    child.send({ url: s.url, key: s.key, websiteId: site.websiteId, shape: site.shape, ids: site.ids, concurrency });
  });
}

/** Answers per second over the first or last tenth of an import, from its progress marks ([answers, seconds]). */
function rateOfTenth(marks: [number, number][], total: number, seconds: number, which: 'first' | 'last'): number {
  const all: [number, number][] = [...marks, [total, seconds]];
  if (which === 'first') {
    const m = all.find(([n]) => n >= total / 10)!;
    return m[0] / Math.max(m[1], 1e-9);
  }
  const m = [...all].reverse().find(([n]) => n <= total * 0.9) ?? all[0];
  return (total - m[0]) / Math.max(seconds - m[1], 1e-9);
}

export interface AnswerDataset {
  server: BenchServer;
  site: AnswerSite;
  total: number;
  close(): Promise<void>;
}

let shared: Promise<AnswerDataset> | null = null;

/**
 * The answers dataset on a server with a private NATS and the workers running, imported once per bench run over
 * HTTP; the import reports analysis_answers_per_s (whichever bench needs the dataset first pays for it).
 */
export function answerDataset(quick: boolean): Promise<AnswerDataset> {
  shared ??= buildDataset(quick);
  return shared;
}

/** A benchmark on the answers dataset (answerDataset), handed the dataset and its database. */
export const answersBench = (b: BenchWith<{ ds: AnswerDataset; db: Knex }>): Bench => ({
  name: b.name,
  about: b.about,
  async run({ quick }) {
    const ds = await answerDataset(quick);
    await b.run({ ds, db: ds.server.rt.database.db, quick });
  },
});

const DAY_MS = 86_400_000;

/** The dataset's last day with answers, and the name of any day counted from the epoch (`day(lastDay - 14)`). */
export async function datasetDays(ds: AnswerDataset): Promise<{ lastDay: number; day: (n: number) => string }> {
  const db = ds.server.rt.database.db;
  const row: { last: string } = await db('rm_fact_chunks').where('website_id', ds.site.websiteId).first(db.raw('max(day)::text as last'));
  return {
    lastDay: Math.floor(Date.parse(`${row.last}T00:00:00Z`) / DAY_MS),
    day: (n) => new Date(n * DAY_MS).toISOString().slice(0, 10),
  };
}

/**
 * The dataset's last `span` days and the `span` days before them: 90 days each (the quick dataset's 30 days: 15, so
 * that the period before has answers too).
 */
export async function datasetPeriods(ds: AnswerDataset, quick: boolean) {
  const { lastDay, day } = await datasetDays(ds);
  const span = quick ? 15 : 90;
  return {
    span,
    current: { start_date: day(lastDay - span + 1), end_date: day(lastDay) },
    previous: { start_date: day(lastDay - 2 * span + 1), end_date: day(lastDay - span) },
  };
}

/** What a kept dataset database remembers about itself (table bench_dataset). */
interface KeptDataset {
  key: string;
  organizationId: string;
  site: AnswerSite;
  total: number;
}

/**
 * BENCH_DATASET_DB=<name>: the dataset is imported once into the database `<name>_full` (or `_quick`) and kept; later
 * runs open it instead of importing again (no analysis_answers_per_s then, and whatever an earlier bench changed in it,
 * such as an added competitor, stays). For iterating on one figure; reported figures come from a fresh run.
 */
const keptName = (quick: boolean) => {
  const base = process.env.BENCH_DATASET_DB;
  return base ? `${base}_${quick ? 'quick' : 'full'}` : null;
};

async function reuseDataset(name: string, shape: AnswerSite['shape']): Promise<AnswerDataset | null> {
  if (!(await databaseExists(name))) return null;
  const d = await keptDatabase(name, false, 1);
  let kept: KeptDataset | null = null;
  try {
    const r = await d.db.raw('select info from bench_dataset').catch(() => null);
    kept = (r?.rows[0]?.info as KeptDataset | undefined) ?? null;
  } finally {
    await d.close();
  }
  // jsonb keeps its own key order: compare the shapes key by key
  const same = (a: object, b: object) => JSON.stringify(Object.entries(a).sort()) === JSON.stringify(Object.entries(b).sort());
  if (!kept || !same(kept.site.shape, shape)) return null;
  const nats = await startNatsServer();
  const s = await startBenchServer(0, undefined, {
    natsUrl: nats.url,
    workers: true,
    env: { ENGINE_MODE: 'simulated' },
    join: { databaseUrl: d.url, key: kept.key, organizationId: kept.organizationId },
  });
  await caughtUp(s.rt, await s.rt.store.lastPosition());
  info(`answers: reusing ${kept.total} answers kept in database ${name} (BENCH_DATASET_DB; no import measured)`);
  return {
    server: s,
    site: kept.site,
    total: kept.total,
    close: async () => {
      shared = null;
      await s.close();
      await nats.dispose();
    },
  };
}

async function buildDataset(quick: boolean): Promise<AnswerDataset> {
  const shape = quick ? quickShape : fullShape;
  const total = answersIn(shape);
  const keep = keptName(quick);
  if (keep) {
    const reused = await reuseDataset(keep, shape);
    if (reused) return reused;
  }
  const nats = await startNatsServer();
  const s = await startBenchServer(0, undefined, {
    natsUrl: nats.url,
    workers: true,
    env: { ENGINE_MODE: 'simulated' },
    ...(keep ? { keep } : {}),
  });
  const close = async () => {
    shared = null;
    await s.close();
    await nats.dispose();
  };
  try {
    const site = await seedAnswerSite(s, shape);
    info(
      `answers: ${shape.prompts} prompts x ${shape.days} days x ${shape.locations} locations x 11 models = ${total} simulated answers, ${shape.competitors} competitors; server with a private NATS JetStream, response and observation workers running`,
    );
    const cpu = await cpuMeter(s.rt.database.db);
    const t0 = nowNs();
    let shown = 0;
    // (answers imported, seconds) along the way: the rate at the end, with the history large, shows what scale costs
    const marks: [number, number][] = [[0, 0]];
    const r = await importDataset(s, site, 3, (n) => {
      marks.push([n, secondsSince(t0)]);
      if (n - shown >= total / 10) {
        shown = n;
        info(`answers: ${n} imported after ${secondsSince(t0).toFixed(0)} s`);
      }
    });
    const httpSeconds = secondsSince(t0);
    await caughtUp(s.rt, await s.rt.store.lastPosition());
    const seconds = secondsSince(t0);
    const c = await cpu.stop();
    if (r.imported !== total) throw new Error(`imported ${r.imported} of ${total}`);
    const rows = Number((await s.rt.database.db('rm_responses').count<{ n: string }[]>('* as n'))[0].n);
    const obs = Number((await s.rt.database.db('rm_observations').count<{ n: string }[]>('* as n'))[0].n);
    report('analysis_answers_per_s', total / seconds, 'answers/s', {
      cpu: perUnit(c, total, 'answer'),
      goal: { op: '>=', value: 5000 },
      note: `${total} answers in ${r.requests} import calls of 1000 (3 at a time), ${httpSeconds.toFixed(1)} s of HTTP, ${seconds.toFixed(1)} s until every read model had them; ${rows} rows, ${obs} observations extracted meanwhile`,
    });
    const tenth = rateOfTenth(marks, total, seconds, 'first');
    const lastTenth = rateOfTenth(marks, total, seconds, 'last');
    report('analysis_answers_per_s_last_tenth', lastTenth, 'answers/s', {
      note: `the last tenth of the import, history ${Math.round(0.9 * total)}+ answers (the first tenth: ${Math.round(tenth)}/s); a cost that grows with the history shows here`,
    });
    report('analysis_cpu_us_per_answer', (c.nodeUs + c.pgUs) / total, 'us', {
      note: `node ${(c.nodeUs / total).toFixed(1)} us (server; the client runs in its own process) + Postgres ${(c.pgUs / total).toFixed(1)} us`,
    });
    // what follows is measured on a quiet system: the workers idle, every read model caught up
    while ((await s.rt.bus.backlog(OBSERVATION_WORKER)) > 0) await new Promise((res) => setTimeout(res, 200));
    await caughtUp(s.rt, await s.rt.store.lastPosition());
    await s.rt.database.db.raw('vacuum analyze');
    if (keep) {
      const kept: KeptDataset = { key: s.key, organizationId: s.organizationId, site, total };
      await s.rt.database.db.raw('create table bench_dataset (info jsonb not null)');
      await s.rt.database.db('bench_dataset').insert({ info: JSON.stringify(kept) });
    }
    return { server: s, site, total, close };
  } catch (err) {
    await close();
    throw err;
  }
}

export const answers: Bench = {
  name: 'answers',
  about:
    'imports the answers dataset over HTTP until the projections caught up (unless metrics did), then re-derives it after adding a competitor and answers two runs on it',
  async run({ quick }) {
    const { server: s, site, total, close } = await answerDataset(quick);
    try {
      const kept = keptName(quick) !== null;
      const stamp = Date.now().toString(36);
      // a new competitor: the whole history is analyzed again, in one transaction
      const cpu1 = await cpuMeter(s.rt.database.db);
      const t1 = nowNs();
      const added = await fetch(`${s.url}/api/v1/competitors`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': s.key },
        body: JSON.stringify({
          website_id: site.websiteId,
          // a kept dataset (BENCH_DATASET_DB) may have had a newcomer added by an earlier run: each run adds its own
          name: kept ? `Newcomer ${stamp}` : 'Newcomer',
          url: kept ? `https://www.newcomer-${stamp}.example.org` : 'https://www.newcomer.example.org',
          identifiers: [kept ? `Newcomer ${stamp} Labs` : 'Newcomer Labs'],
        }),
      });
      if (added.status !== 201) throw new Error(`add competitor: ${added.status}`);
      const answered = secondsSince(t1) * 1000;
      // the add waits for the catalogue only: it is listed at once, while the history is still being re-derived
      const competitorId = ((await added.json()) as { competitor: { id: string } }).competitor.id;
      const listed = await fetch(`${s.url}/api/v1/competitors?website_id=${site.websiteId}`, { headers: { 'x-api-key': s.key } });
      const isListed = ((await listed.json()) as { competitors: { id: string }[] }).competitors.some((c) => c.id === competitorId);
      const factSite = await s.rt.database.db('rm_fact_sites').where('website_id', site.websiteId).first('entities');
      const rederiving = !(factSite?.entities as string[] | undefined)?.includes(competitorId);
      await caughtUp(s.rt, await s.rt.store.lastPosition(), ['answers']);
      const rederive = secondsSince(t1);
      report('add_competitor_ms', answered, 'ms', {
        goal: { op: '<=', value: 100 },
        note: `POST /api/v1/competitors on the ${total}-answer site; listed right after: ${isListed}; the re-derivation still running when it answered: ${rederiving}`,
      });
      const c1 = await cpu1.stop();
      report('rederive_1m_answers_s', (rederive * 1_000_000) / total, 's', {
        goal: { op: '<=', value: 60 },
        note: `${rederive.toFixed(1)} s to re-derive ${total} answers after a competitor was added (scaled to 1 M)`,
      });
      report('rederive_cpu_us_per_answer', (c1.nodeUs + c1.pgUs) / total, 'us', {
        note: `node ${(c1.nodeUs / total).toFixed(1)} us + Postgres ${(c1.pgUs / total).toFixed(1)} us`,
      });
      // runs on the large site: what the workers do per answer must not grow with the history
      const cpu2 = await cpuMeter(s.rt.database.db);
      const t2 = nowNs();
      const { units } = await runsAnswered(s, site, 2, '2026-03-01');
      const seconds2 = secondsSince(t2);
      const c2 = await cpu2.stop();
      report('worker_answers_per_s_large_site', units / seconds2, 'answers/s', {
        cpu: perUnit(c2, units, 'answer'),
        note: `${units} units of 2 runs answered on the ${total}-answer site by one instance in ${seconds2.toFixed(1)} s; node ${(c2.nodeUs / units).toFixed(0)} us + Postgres ${(c2.pgUs / units).toFixed(0)} us per answer`,
      });
    } finally {
      await close();
    }
  },
};
