import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { DuckDBConnection } from '@duckdb/node-api';
import { decodeFacts, type FactDictionaries } from '../src/analysis/facts';
import { MODEL_IDS } from '../src/domain/models';
import { factsCache } from '../queries/metrics/metrics';
import { trackedEntities } from '../queries/responses/list';
import { type AnswerDataset, answersBench, caughtUp, importDataset, seedAnswerSite } from './answers';
import { answersIn } from './answers-data';
import type { Knex } from 'knex';
import type { Job, LoadOutcome, MixSpec } from './metrics-load';
import { withDuckDb } from './duckdb';
import { cpuMeter, info, nowNs, perUnit, postOk, quantile, report, warmedUp } from './lib';

const DAY_MS = 86_400_000;
const dayName = (n: number) => new Date(n * DAY_MS).toISOString().slice(0, 10);

interface Case {
  name: string;
  filters: Record<string, unknown>;
  /** what DuckDB filters on */
  duck: { first: number; last: number; models?: string[]; locations?: string[]; prompts?: string[] };
}

/** p50/p95 of `n` requests one after another, in ms. */
async function latency(ds: AnswerDataset, path: string, body: unknown, n: number): Promise<{ p50: number; p95: number; body: any }> {
  const { p50, p95, last } = await warmedUp(n, () => postOk(ds.server, path, body));
  return { p50, p95, body: last };
}

/** One request; its time in ms. */
async function once(ds: AnswerDataset, path: string, body: unknown): Promise<number> {
  const t0 = nowNs();
  await postOk(ds.server, path, body);
  return Number(nowNs() - t0) / 1e6;
}

/** The same answers and mentions as plain tables in DuckDB (what analytical databases scan). */
async function loadDuckDb(con: DuckDBConnection, ds: AnswerDataset) {
  const db = ds.server.rt.database.db;
  await con.run('create table answers (id integer, day integer, t integer, prompt varchar, model varchar, location varchar, schedule varchar)');
  await con.run('create table mentions (answer integer, entity varchar, position integer, cited boolean)');
  const answers = await con.createAppender('answers');
  const mentions = await con.createAppender('mentions');
  const rows: { day: string; meta: FactDictionaries & { n: number }; data: Buffer }[] = await db('rm_fact_chunks')
    .where('website_id', ds.site.websiteId)
    .orderBy(['day', 'part'])
    .select(db.raw('day::text as day'), 'meta', 'data');
  let id = 0;
  let mentionRows = 0;
  for (const r of rows) {
    const c = decodeFacts(r.meta, r.data);
    const day = Math.floor(Date.parse(`${r.day}T00:00:00Z`) / DAY_MS);
    const E = c.entities.length;
    for (let i = 0; i < c.n; i++, id++) {
      answers.appendInteger(id);
      answers.appendInteger(day);
      answers.appendInteger(c.t[i]);
      answers.appendVarchar(c.prompts[c.prompt[i]]);
      answers.appendVarchar(c.models[c.model[i]]);
      const loc = c.locations[c.location[i]];
      if (loc === null) answers.appendNull();
      else answers.appendVarchar(loc);
      answers.appendVarchar(c.schedules[c.schedule[i]] ?? 'default');
      answers.endRow();
      for (let e = 0; e < E; e++) {
        const p = c.pos[i * E + e];
        const cited = c.cite[i * E + e] === 1;
        if (p === 0 && !cited) continue;
        mentions.appendInteger(id);
        mentions.appendVarchar(c.entities[e]);
        mentions.appendInteger(p);
        mentions.appendBoolean(cited);
        mentions.endRow();
        mentionRows++;
      }
    }
  }
  answers.closeSync();
  mentions.closeSync();
  return { answers: id, mentions: mentionRows };
}

const list = (xs: string[]) => xs.map((x) => `'${x.replace(/'/g, "''")}'`).join(', ');

function duckSql(d: Case['duck']): string {
  const where = [`schedule = 'default'`, `day between ${d.first} and ${d.last}`];
  if (d.models) where.push(`model in (${list(d.models)})`);
  if (d.locations) where.push(`location in (${list(d.locations)})`);
  if (d.prompts) where.push(`prompt in (${list(d.prompts)})`);
  return `with s as (select id from answers where ${where.join(' and ')}),
    m as (select mentions.* from mentions join s on s.id = mentions.answer)
    select null as entity, (select count(*) from s) as mentioned, (select count(distinct answer) from m where position > 0) as cited, 0 as pos_sum
    union all
    select entity, count(*) filter (where position > 0), count(*) filter (where cited), coalesce(sum(position) filter (where position > 0), 0) from m group by entity`;
}

interface DuckCounts {
  responses: number;
  any: number;
  byEntity: Map<string, { mentioned: number; cited: number; posSum: number }>;
}

function readDuck(rows: unknown[][]): DuckCounts {
  const out: DuckCounts = { responses: 0, any: 0, byEntity: new Map() };
  for (const [entity, a, b, c] of rows) {
    if (entity === null) {
      out.responses = Number(a);
      out.any = Number(b);
    } else out.byEntity.set(String(entity), { mentioned: Number(a), cited: Number(b), posSum: Number(c) });
  }
  return out;
}

const r4 = (x: number) => Math.round(x * 10_000) / 10_000;

/** DuckDB's counts as aivis's four families; throws on the first value that differs. */
function compare(label: string, duck: DuckCounts, names: Map<string, string>, aivis: Record<string, any>) {
  const rate = (x: number, n: number) => (n === 0 ? 0 : r4((100 * x) / n));
  let all = 0;
  for (const v of duck.byEntity.values()) all += v.mentioned;
  for (const [id, name] of names) {
    const d = duck.byEntity.get(id) ?? { mentioned: 0, cited: 0, posSum: 0 };
    const expected = {
      mention_rate: rate(d.mentioned, duck.responses),
      relative_mention_rate: rate(d.mentioned, duck.any),
      share_of_voice: rate(d.mentioned, all),
      citation_rate: rate(d.cited, duck.responses),
      avg_position: d.mentioned === 0 ? null : r4(d.posSum / d.mentioned),
    };
    const got = {
      mention_rate: aivis['mention-rate'].data[name].mention_rate,
      relative_mention_rate: aivis['mention-rate'].data[name].relative_mention_rate,
      share_of_voice: aivis['share-of-voice'].data[name].share_of_voice,
      citation_rate: aivis['citation-rate'].data[name].citation_rate,
      avg_position: aivis.position.data[name].avg_position,
    };
    for (const k of Object.keys(expected) as (keyof typeof expected)[]) {
      const a = got[k];
      const b = expected[k];
      if (a !== b && !(typeof a === 'number' && typeof b === 'number' && Math.abs(a - b) < 1e-3)) {
        throw new Error(`${label}: ${name} ${k} is ${a} in aivis and ${b} in DuckDB`);
      }
    }
  }
}

/** The load of `job` from a child process (metrics-load.ts). */
function loadTest(job: Job): Promise<LoadOutcome> {
  return new Promise<LoadOutcome>((resolve, reject) => {
    const child = fork(fileURLToPath(new URL('./metrics-load.ts', import.meta.url)), [], {
      execArgv: ['--import', 'tsx'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    child.once('message', resolve as never);
    child.once('error', reject);
    child.once('exit', (code) => code !== 0 && reject(new Error(`load generator exited with ${code}`)));
    child.send(job);
  });
}

/** A second instance of the app in its own process, on the first's database (metrics-server.ts). */
async function secondInstance(ds: AnswerDataset) {
  const child = fork(fileURLToPath(new URL('./metrics-server.ts', import.meta.url)), [], {
    execArgv: ['--max-semi-space-size=32', '--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const ask = <T>(m: unknown) =>
    new Promise<T>((resolve, reject) => {
      child.once('message', resolve as never);
      child.once('error', reject);
      child.send(m as never);
    });
  const { url } = await ask<{ url: string }>({
    join: { databaseUrl: ds.server.databaseUrl, key: ds.server.key, organizationId: ds.server.organizationId },
  });
  return {
    url,
    cpuUs: async () => (await ask<{ cpuUs: number }>('cpu')).cpuUs,
    close: () =>
      new Promise<void>((resolve) => {
        child.once('exit', () => resolve());
        child.send('close');
      }),
  };
}

/**
 * 50 clients on distinct filter combinations (none repeats), on `urls` in turn: warmed up first (a new instance loads
 * the website's facts), then measured; reported with the CPU the servers and Postgres spent per request.
 */
async function loadFigures(
  ds: AnswerDataset,
  db: Knex,
  label: string,
  urls: string[],
  mix: Omit<MixSpec, 'seed'>,
  seed: number,
  seconds: number,
  otherCpuUs: () => Promise<number>,
) {
  const job = (s: number, secs: number): Job => ({ urls, key: ds.server.key, clients: 50, seconds: secs, mix: { ...mix, seed: s } });
  await loadTest(job(seed, 2));
  const cpu = await cpuMeter(db);
  const other0 = await otherCpuUs();
  const load = await loadTest(job(seed + 1, seconds));
  const other = (await otherCpuUs()) - other0;
  const used = await cpu.stop();
  const ok = load.statuses['200'] ?? 0;
  const perRequest = (us: number) => (us / Math.max(1, load.total) / 1000).toFixed(2);
  report(`metrics_rps_50_clients${label}`, load.rps, 'req/s', {
    cpu: perUnit({ nodeUs: used.nodeUs + other, pgUs: used.pgUs }, Math.max(1, load.total), 'request'),
    goal: { op: '>=', value: 300 },
    note: `${load.total} requests in ${seconds} s (${ok} answered 200) on ${urls.length} instance(s), ${load.distinct} distinct filter combinations (${((100 * load.repeats) / Math.max(1, load.total)).toFixed(1)}% repeats); CPU ${perRequest(used.nodeUs + other + used.pgUs)} ms per request (node ${perRequest(used.nodeUs + other)} + Postgres ${perRequest(used.pgUs)}), and the load generator's own ${perRequest(load.cpuUs)} ms`,
  });
  report(`metrics_rps_50_clients${label}_p95_ms`, load.p95, 'ms', {
    goal: { op: '<=', value: 300 },
    note: `p50 ${load.p50.toFixed(1)} ms, p99 ${load.p99.toFixed(1)} ms`,
  });
}

/**
 * A restart under load: a small website's metrics asked one after another (its facts held, as on a running server)
 * while the large website loads its whole year cold (a request over 365 days after its facts were dropped).
 */
async function coldLoadBesideSmallSite(ds: AnswerDataset, firstDay: number, lastDay: number) {
  const db = ds.server.rt.database.db;
  const shape = { ...ds.site.shape, prompts: 3, days: 7, locations: 1, competitors: 2 };
  const small = await seedAnswerSite(ds.server, shape);
  await importDataset(ds.server, small, 1);
  await caughtUp(ds.server.rt, await ds.server.rt.store.lastPosition());
  const smallBody = {
    website_id: small.websiteId,
    filters: { start_date: shape.firstDay, end_date: dayName(Math.floor(Date.parse(`${shape.firstDay}T00:00:00Z`) / DAY_MS) + shape.days - 1) },
  };
  const alone = await latency(ds, '/api/v1/metrics/mention-rate/cumulative', smallBody, 30);
  factsCache(db).forget(ds.site.websiteId);
  let loading = true;
  const times: number[] = [];
  const beside = (async () => {
    while (loading) times.push(await once(ds, '/api/v1/metrics/mention-rate/cumulative', smallBody));
  })();
  const year = { website_id: ds.site.websiteId, filters: { start_date: dayName(firstDay), end_date: dayName(lastDay) } };
  const cold = await once(ds, '/api/v1/metrics/share-of-voice/cumulative', year);
  loading = false;
  await beside;
  times.sort((a, b) => a - b);
  report('metrics_cold_year_load_ms', cold, 'ms', {
    note: `a request over all ${lastDay - firstDay + 1} days of the ${ds.total}-answer website with none of its facts held, while another website is asked`,
  });
  report('metrics_other_site_during_cold_load_ms_p95', quantile(times, 0.95), 'ms', {
    goal: { op: '<=', value: 50 },
    note: `${times.length} requests of a ${answersIn(shape)}-answer website one after another during that load (p50 ${quantile(times, 0.5).toFixed(1)} ms, max ${times[times.length - 1]?.toFixed(1)} ms); alone: p95 ${alone.p95.toFixed(1)} ms`,
  });
}

export const metrics = answersBench({
  name: 'metrics',
  about: 'cumulative and time-series metrics over HTTP on the answers dataset, 50 clients on a mix, and DuckDB over the same answers',
  async run({ ds, db, quick }) {
    const days: { first: string; last: string } = await db('rm_fact_chunks')
      .where('website_id', ds.site.websiteId)
      .first(db.raw('min(day)::text as first'), db.raw('max(day)::text as last'));
    const firstDay = Math.floor(Date.parse(`${days.first}T00:00:00Z`) / DAY_MS);
    const lastDay = Math.floor(Date.parse(`${days.last}T00:00:00Z`) / DAY_MS);
    const from = Math.max(firstDay, lastDay - 89);
    const entities = await trackedEntities(db, ds.site.websiteId);
    const names = new Map(entities.map((e) => [e.id, e.name]));
    const models = [MODEL_IDS[0], MODEL_IDS[2], MODEL_IDS[5]];
    const locations = ds.site.ids.locationIds.slice(0, 2);
    const prompts = ds.site.ids.promptIds.filter((_, i) => i % 3 === 0).slice(0, 30);
    const cases: Case[] = [
      { name: 'unfiltered', filters: { start_date: dayName(from), end_date: dayName(lastDay) }, duck: { first: from, last: lastDay } },
      {
        name: 'filtered',
        filters: { start_date: dayName(from), end_date: dayName(lastDay), models, location_ids: locations, prompt_ids: prompts },
        duck: { first: from, last: lastDay, models, locations, prompts },
      },
    ];
    const n = quick ? 30 : 100;

    // the first request of a process loads the days it needs of the website's facts (the others follow in the background)
    const firstCpu = await cpuMeter(db);
    const firstLoad = await once(ds, '/api/v1/metrics/mention-rate/cumulative', { website_id: ds.site.websiteId, filters: cases[0].filters });
    const firstUsed = await firstCpu.stop();
    report('metrics_first_load_ms', firstLoad, 'ms', {
      goal: { op: '<=', value: 300 },
      note: `the first request of a process (90 days, unfiltered) loads those days of the website's facts (${ds.total} answers in all, ${Math.round(factsCache(db).size / 1e6)} MB held when it answered); the other days follow in the background in slices; later requests read one version row and only new days; CPU ${((firstUsed.nodeUs + firstUsed.pgUs) / 1000).toFixed(0)} ms (node ${(firstUsed.nodeUs / 1000).toFixed(0)} + Postgres ${(firstUsed.pgUs / 1000).toFixed(0)})`,
    });
    await coldLoadBesideSmallSite(ds, firstDay, lastDay);

    await withDuckDb(async (con) => {
      const duck = await loadDuckDb(con, ds);
      info(`metrics: DuckDB ${duck.answers} answers and ${duck.mentions} mention/citation rows loaded from the same facts`);
      for (const c of cases) {
        const body = { website_id: ds.site.websiteId, filters: c.filters };
        const aivis: Record<string, any> = {};
        const cpu = await cpuMeter(db);
        const cum = await latency(ds, '/api/v1/metrics/mention-rate/cumulative', body, n);
        const used = await cpu.stop();
        aivis['mention-rate'] = cum.body;
        for (const f of ['share-of-voice', 'citation-rate', 'position'])
          aivis[f] = (await latency(ds, `/api/v1/metrics/${f}/cumulative`, body, 0)).body;
        const series = await latency(ds, '/api/v1/metrics/share-of-voice/time-series', body, n);

        const sql = duckSql(c.duck);
        const inDuck = await warmedUp(n, async () => (await con.runAndReadAll(sql)).getRows() as unknown[][]);
        compare(c.name, readDuck(inDuck.last), names, aivis);
        const duckP50 = inDuck.p50;
        report(`metrics_cumulative_ms_${c.name}_p50`, cum.p50, 'ms', {
          note: `${cum.body.responses} answers selected; CPU ${((used.nodeUs + used.pgUs) / (n + 3) / 1000).toFixed(2)} ms per request (node + Postgres)`,
        });
        report(`metrics_cumulative_ms_${c.name}_p95`, cum.p95, 'ms', { goal: { op: '<=', value: c.name === 'unfiltered' ? 25 : 60 } });
        report(`metrics_timeseries_ms_${c.name}_p50`, series.p50, 'ms');
        report(`metrics_timeseries_ms_${c.name}_p95`, series.p95, 'ms', { goal: { op: '<=', value: c.name === 'unfiltered' ? 40 : 80 } });
        report(`duckdb_cumulative_ms_${c.name}`, duckP50, 'ms', { note: `p50 of ${n}; the same numbers as aivis for all four families (checked)` });
        report(`metrics_vs_duckdb_ratio_${c.name}`, cum.p50 / duckP50, 'x', {
          goal: { op: '<=', value: 1 },
          note: 'aivis p50 over HTTP / DuckDB p50 in process',
        });
      }
    });

    const competitorIds = entities.filter((e) => !e.is_self).map((e) => e.id);
    const mix = {
      websiteId: ds.site.websiteId,
      locationIds: ds.site.ids.locationIds,
      promptIds: ds.site.ids.promptIds,
      competitorIds,
      firstDay,
      lastDay,
    };
    const seconds = quick ? 5 : 20;
    await loadFigures(ds, db, '', [ds.server.url], mix, 100, seconds, async () => 0);
    const b = await secondInstance(ds);
    try {
      await loadFigures(ds, db, '_two_instances', [ds.server.url, b.url], mix, 200, seconds, b.cpuUs);
    } finally {
      await b.close();
    }
  },
});
