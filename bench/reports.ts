import { answersBench, datasetPeriods } from './answers';
import { cpuMeter, info, report, warmedUp } from './lib';

async function created(server: { url: string; key: string }, body: unknown): Promise<{ report: { report_url: string } }> {
  const res = await fetch(`${server.url}/api/v1/reports`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': server.key },
    body: JSON.stringify(body),
  });
  const out = (await res.json()) as { report: { report_url: string } };
  if (res.status !== 201) throw new Error(`/api/v1/reports: ${res.status} ${JSON.stringify(out).slice(0, 300)}`);
  return out;
}

export const reports = answersBench({
  name: 'reports',
  about: 'website reports over HTTP on the answers dataset: taking a 90-day snapshot (15 with --quick), and serving its page',
  async run({ ds, db, quick }) {
    const { span, current } = await datasetPeriods(ds, quick);
    const body = { website_id: ds.site.websiteId, ...current };
    const n = quick ? 20 : 50;
    info(`reports: ${ds.total} answers; period ${body.start_date}..${body.end_date}`);
    const createCpu = await cpuMeter(db);
    const made = await warmedUp(n, () => created(ds.server, body), 2);
    const cc = await createCpu.stop();
    report('report_create_ms', made.p95, 'ms', {
      goal: { op: '<=', value: 500 },
      note: `p95 of ${n} sequential POST /reports over ${span} days, p50 ${made.p50.toFixed(1)} ms; CPU per report ${(cc.nodeUs / (n + 2) / 1000).toFixed(1)} ms node + ${(cc.pgUs / (n + 2) / 1000).toFixed(1)} ms Postgres`,
    });
    const url = `${ds.server.url}${new URL(made.last.report.report_url).pathname}`;
    const pageCpu = await cpuMeter(db);
    const m = quick ? 100 : 300;
    const served = await warmedUp(m, async () => {
      const res = await fetch(url);
      const text = await res.text();
      if (res.status !== 200) throw new Error(`page: ${res.status}`);
      return text.length;
    });
    const pc = await pageCpu.stop();
    report('report_page_ms', served.p95, 'ms', {
      goal: { op: '<=', value: 50 },
      note: `p95 of ${m} sequential GET /reports/{token} (${served.last} bytes), p50 ${served.p50.toFixed(2)} ms; CPU per page ${(pc.nodeUs / (m + 3) / 1000).toFixed(2)} ms node + ${(pc.pgUs / (m + 3) / 1000).toFixed(2)} ms Postgres`,
    });
  },
});
