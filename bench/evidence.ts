import { request } from 'undici';
import { BY_DOMAIN, BY_URL } from '../projections/answers/evidence';
import { heldSourceIndex } from '../queries/evidence/source-index';
import type { Knex } from 'knex';
import { type AnswerDataset, answersBench } from './answers';
import { cpuMeter, info, nowNs, perUnit, quantile, report, rssPeak, sampleUs, secondsSince, sleep } from './lib';

const DAY_MS = 86_400_000;
const dayName = (n: number) => new Date(n * DAY_MS).toISOString().slice(0, 10);

async function getOk(server: { url: string; key: string }, path: string, query: Record<string, string>): Promise<any> {
  // undici's request, not fetch: the client shares the server's process and its CPU is metered with it
  const res = await request(`${server.url}${path}?${new URLSearchParams(query)}`, { headers: { 'x-api-key': server.key } });
  const out = await res.body.json();
  if (res.statusCode !== 200) throw new Error(`${path}: ${res.statusCode} ${JSON.stringify(out)}`);
  return out;
}

/** The idle server's CPU a second (its projections' polls, leases, workers' pull requests), over 2 s of no request. */
async function idleRate(db: import('knex').Knex): Promise<{ nodeUs: number; pgUs: number }> {
  const cpu = await cpuMeter(db);
  const t0 = nowNs();
  await sleep(2000);
  const s = secondsSince(t0);
  const used = await cpu.stop();
  return { nodeUs: used.nodeUs / s, pgUs: used.pgUs / s };
}

/** The whole answers export over HTTP in pages of 100,000 with the cursor; its figures reported with `suffix`. */
async function exportFigures(ds: AnswerDataset, db: Knex, idle: { nodeUs: number; pgUs: number }, suffix: string) {
  // the whole export in pages of 100,000 with the cursor, each body read as it streams (lines counted, not kept)
  const rss = rssPeak(20);
  const cpu = await cpuMeter(db);
  const t0 = nowNs();
  let answers = 0;
  let bytes = 0;
  let after: string | undefined;
  for (;;) {
    const q = new URLSearchParams({ website_id: ds.site.websiteId, limit: '100000', ...(after ? { after } : {}) });
    // undici's request (Buffers, no web streams) and a native search for the newlines: the client shares this
    // process's CPU with the server, so it is kept as cheap as a warehouse job's own reader would be
    const res = await request(`${ds.server.url}/api/v1/responses/export?${q}`, { headers: { 'x-api-key': ds.server.key } });
    if (res.statusCode !== 200) throw new Error(`export: ${res.statusCode} ${await res.body.text()}`);
    let got = 0;
    for await (const chunk of res.body as AsyncIterable<Buffer>) {
      bytes += chunk.length;
      for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) got++;
    }
    answers += got;
    const cursor = res.headers['x-next-cursor'];
    after = typeof cursor === 'string' ? cursor : undefined;
    if (got < 100_000) break;
  }
  const seconds = secondsSince(t0);
  const used = await cpu.stop();
  const { base: rss0, peak } = rss.stop();
  // a kept dataset (BENCH_DATASET_DB) also holds the answers of earlier benches' runs: every stored answer comes out
  const stored = Number((await db('rm_responses').where('website_id', ds.site.websiteId).count({ n: '*' }))[0].n);
  if (answers !== stored) throw new Error(`exported ${answers} of ${stored}`);
  report(`export_answers_per_s${suffix}`, answers / seconds, 'answers/s', {
    cpu: perUnit(used, answers, 'answer'),
    goal: { op: '>=', value: 50_000 },
    note: `${answers} answers, ${(bytes / 1e6).toFixed(0)} MB of NDJSON in ${seconds.toFixed(1)} s over HTTP; CPU ${((used.nodeUs + used.pgUs) / answers).toFixed(1)} us per answer (node ${(used.nodeUs / answers).toFixed(1)}, of it kernel ${(used.nodeSysUs / answers).toFixed(1)}, + Postgres ${(used.pgUs / answers).toFixed(1)}; the client shares the node process)`,
  });
  const netNode = Math.max(0, used.nodeUs - idle.nodeUs * seconds) / answers;
  const netPg = Math.max(0, used.pgUs - idle.pgUs * seconds) / answers;
  report(`export_cpu_us_per_answer${suffix}`, netNode + netPg, 'us', {
    note: `node ${netNode.toFixed(1)} us + Postgres ${netPg.toFixed(1)} us per answer, net of the idle server's CPU over the ${seconds.toFixed(1)} s (the client's reading included)`,
  });
  report(`export_rss_growth_mb${suffix}`, (peak - rss0) / 1e6, 'MB', {
    goal: { op: '<=', value: 64 },
    note: `peak RSS ${(peak / 1e6).toFixed(0)} MB against ${(rss0 / 1e6).toFixed(0)} MB before (server and client in one process)`,
  });
}

/** Answer evidence: GET /api/v1/sources over 90 days by domain and by URL; the whole answers export streamed over HTTP. */
export const evidence = answersBench({
  name: 'evidence',
  about:
    'GET /api/v1/sources over 90 days (by domain, by URL) and GET /api/v1/responses/export of every answer (NDJSON, pages of 100,000; with BENCH_EXPORT_REBUILD=1 again after a rebuild of the answers read model)',
  async run({ ds, db, quick }) {
    const last: { d: string } = await db('rm_responses')
      .where('website_id', ds.site.websiteId)
      .first(db.raw(`max(run_at at time zone 'UTC')::date::text as d`));
    const lastDay = Math.floor(Date.parse(`${last.d}T00:00:00Z`) / DAY_MS);
    const range = { start_date: dayName(lastDay - 89), end_date: dayName(lastDay) };
    const n = quick ? 20 : 50;
    const idle = await idleRate(db);
    info(
      `evidence: the idle server (projections, pollers, workers) spends ${(idle.nodeUs / 1000).toFixed(1)} ms node + ${(idle.pgUs / 1000).toFixed(1)} ms Postgres CPU a second; "net" figures below take that out of the span`,
    );
    const ms = (us: number) => (us / 1000).toFixed(2);
    const someModels: string[] = (
      await db.raw('select model from rm_source_days where website_id = ? and kind = 0 group by model order by model limit 3', [ds.site.websiteId])
    ).rows.map((r: { model: string }) => r.model);
    // by URL again with 3 models and pages 0, 1, 5 and 50 in turn (page 50: the 5,001st to 5,100th)
    const pages = ['0', '1', '5', '50'];
    const cases = [
      { name: 'domain', group_by: 'domain', about: 'first page of 100', extra: () => ({}) },
      { name: 'url', group_by: 'url', about: 'first page of 100', extra: () => ({}) },
      {
        name: 'url_models_pages',
        group_by: 'url',
        about: `models ${someModels.join(',')}, pages ${pages.join(', ')} of 100 in turn`,
        extra: (i: number) => ({ models: someModels.join(','), page_num: pages[i % pages.length] }),
      },
    ];
    for (const c of cases) {
      const group_by = c.group_by;
      let i = 0;
      const query = () => ({ website_id: ds.site.websiteId, ...range, group_by, page_size: '100', ...c.extra(i++) });
      // the first request loads the website's index (cold), measured apart from the warm ones
      const cold = await cpuMeter(db);
      const t0 = nowNs();
      await getOk(ds.server, '/api/v1/sources', query());
      const coldMs = secondsSince(t0) * 1000;
      const coldUsed = await cold.stop();
      for (let w = 0; w < 2; w++) await getOk(ds.server, '/api/v1/sources', query());
      i = 0;
      const cpu = await cpuMeter(db);
      const t1 = nowNs();
      let last: any;
      const times = (await sampleUs(n, async () => (last = await getOk(ds.server, '/api/v1/sources', query()))))
        .map((us) => us / 1e3)
        .sort((a, b) => a - b);
      const span = secondsSince(t1);
      const used = await cpu.stop();
      const netNode = Math.max(0, used.nodeUs - idle.nodeUs * span) / n;
      const netPg = Math.max(0, used.pgUs - idle.pgUs * span) / n;
      const top = last.data[0];
      report(`sources_ms_${c.name}_p95`, quantile(times, 0.95), 'ms', {
        goal: { op: '<=', value: 50 },
        note: `p50 ${quantile(times, 0.5).toFixed(1)} ms; 90 days, ${c.about} (top of the last: ${top?.[group_by]} retrieved by ${top?.retrieved}); CPU ${ms((used.nodeUs + used.pgUs) / n)} ms per warm request (node ${ms(used.nodeUs / n)} + Postgres ${ms(used.pgUs / n)}), net of the idle server ${ms(netNode + netPg)} (node ${ms(netNode)} + Postgres ${ms(netPg)}); the first request ${coldMs.toFixed(0)} ms, CPU node ${ms(coldUsed.nodeUs)} + Postgres ${ms(coldUsed.pgUs)} ms`,
      });
      const x = heldSourceIndex(ds.site.websiteId, group_by === 'domain' ? BY_DOMAIN : BY_URL);
      if (x)
        info(
          `evidence: the ${group_by} index held: ${x.rows} rows, ${x.keys} keys, ${(x.bytes / 2 ** 20).toFixed(1)} MB (the keys' UTF-8 ${(x.keyBytes / 2 ** 20).toFixed(1)} MB; ${(x.heldBytes / 2 ** 20).toFixed(1)} MB of sources indexes held)`,
        );
      report(`sources_${c.name}_cpu_us_per_request`, netNode + netPg, 'us', {
        note: `node ${netNode.toFixed(0)} us + Postgres ${netPg.toFixed(0)} us per warm request, net of the idle server's CPU over the span`,
      });
    }

    await exportFigures(ds, db, idle, '');
    // BENCH_EXPORT_REBUILD=1: the answers read model rebuilt from the log, then exported again (a rebuild's table)
    if (process.env.BENCH_EXPORT_REBUILD === '1') {
      const t0 = nowNs();
      const events = await ds.server.rt.runners.get('answers')!.rebuild();
      info(`evidence: the answers projection rebuilt (${events} events) in ${secondsSince(t0).toFixed(0)} s`);
      await exportFigures(ds, db, idle, '_rebuilt');
    }
    info(`evidence: ${ds.total} answers in the dataset`);
  },
});
