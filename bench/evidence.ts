import { request } from 'undici';
import { answerDataset } from './answers';
import { type Bench, cpuMeter, info, nowNs, perUnit, report, secondsSince, warmedUp } from './lib';

const DAY_MS = 86_400_000;
const dayName = (n: number) => new Date(n * DAY_MS).toISOString().slice(0, 10);

async function getOk(server: { url: string; key: string }, path: string, query: Record<string, string>): Promise<any> {
  const res = await fetch(`${server.url}${path}?${new URLSearchParams(query)}`, { headers: { 'x-api-key': server.key } });
  const out = await res.json();
  if (res.status !== 200) throw new Error(`${path}: ${res.status} ${JSON.stringify(out)}`);
  return out;
}

/** Answer evidence: GET /api/v1/sources over 90 days by domain and by URL; the whole answers export streamed over HTTP. */
export const evidence: Bench = {
  name: 'evidence',
  about: 'GET /api/v1/sources over 90 days (by domain, by URL) and GET /api/v1/responses/export of every answer (NDJSON, pages of 100,000)',
  async run({ quick }) {
    const ds = await answerDataset(quick);
    const db = ds.server.rt.database.db;
    const last: { d: string } = await db('rm_responses')
      .where('website_id', ds.site.websiteId)
      .first(db.raw(`max(run_at at time zone 'UTC')::date::text as d`));
    const lastDay = Math.floor(Date.parse(`${last.d}T00:00:00Z`) / DAY_MS);
    const range = { start_date: dayName(lastDay - 89), end_date: dayName(lastDay) };
    const n = quick ? 20 : 50;
    for (const group_by of ['domain', 'url']) {
      const query = { website_id: ds.site.websiteId, ...range, group_by, page_size: '100' };
      const cpu = await cpuMeter(db);
      const r = await warmedUp(n, () => getOk(ds.server, '/api/v1/sources', query));
      const used = await cpu.stop();
      const top = r.last.data[0];
      report(`sources_ms_${group_by}_p95`, r.p95, 'ms', {
        goal: { op: '<=', value: 50 },
        note: `p50 ${r.p50.toFixed(1)} ms; 90 days, first page of 100 (top: ${top?.[group_by]} retrieved by ${top?.retrieved}); CPU ${((used.nodeUs + used.pgUs) / (n + 3) / 1000).toFixed(2)} ms per request (node ${(used.nodeUs / (n + 3) / 1000).toFixed(2)} + Postgres ${(used.pgUs / (n + 3) / 1000).toFixed(2)})`,
      });
    }

    // the whole export in pages of 100,000 with the cursor, each body read as it streams (lines counted, not kept)
    global.gc?.();
    const rss0 = process.memoryUsage().rss;
    let peak = rss0;
    const sampler = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage().rss);
    }, 20);
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
    clearInterval(sampler);
    if (answers !== ds.total) throw new Error(`exported ${answers} of ${ds.total}`);
    report('export_answers_per_s', answers / seconds, 'answers/s', {
      cpu: perUnit(used, answers, 'answer'),
      goal: { op: '>=', value: 50_000 },
      note: `${answers} answers, ${(bytes / 1e6).toFixed(0)} MB of NDJSON in ${seconds.toFixed(1)} s over HTTP; CPU ${((used.nodeUs + used.pgUs) / answers).toFixed(1)} us per answer (node ${(used.nodeUs / answers).toFixed(1)} + Postgres ${(used.pgUs / answers).toFixed(1)}; the client shares the node process)`,
    });
    report('export_rss_growth_mb', (peak - rss0) / 1e6, 'MB', {
      goal: { op: '<=', value: 64 },
      note: `peak RSS ${(peak / 1e6).toFixed(0)} MB against ${(rss0 / 1e6).toFixed(0)} MB before (server and client in one process)`,
    });
    info(`evidence: ${ds.total} answers in the dataset`);
  },
};
