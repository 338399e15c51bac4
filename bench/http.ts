import Fastify from 'fastify';
import { mount } from '../src/http/route';
import { websiteRoutes } from '../src/http/routes/websites';
import { type Bench, cpuMeter, info, perUnit, report } from './lib';
import { load, NO_RATE_LIMIT, startBenchServer } from './server';

const PATH = '/api/v1/websites';
const NO_LIMIT = `/bench/no-rate-limit${PATH}`;

export const http: Bench = {
  name: 'http',
  about: 'GET /api/v1/websites under autocannon vs a bare fastify route',
  async run({ quick }) {
    const duration = quick ? 3 : 10;
    const connections = 50;
    // diagnostic: the same route through mount() with the per-organization rate limiter stubbed out
    const s = await startBenchServer(5, ({ app, deps }) => {
      const list = websiteRoutes.find((r) => r.method === 'GET' && r.url === PATH)!;
      mount(app, { ...deps, limiter: NO_RATE_LIMIT }, [{ ...list, url: NO_LIMIT }]);
    });
    const bare = Fastify();
    try {
      const path = PATH;
      const headers = { 'x-api-key': s.key };
      const sample = await fetch(`${s.url}${path}`, { headers });
      if (sample.status !== 200) throw new Error(`GET ${path}: ${sample.status}`);
      const body = await sample.json();
      // the reference: a bare fastify route answering the same body, no auth, no database
      bare.get(path, async () => body);
      await bare.listen({ host: '127.0.0.1', port: 0 });
      const ba = bare.server.address();
      const bareUrl = `http://127.0.0.1:${typeof ba === 'object' && ba ? ba.port : 0}${path}`;

      // the CPU of this process (the servers; autocannon runs in a child) and the database's backends per request
      const db = s.rt.database.db;
      const metered = async (opts: Parameters<typeof load>[0]) => {
        const cpu = await cpuMeter(db);
        const r = await load(opts);
        return { ...r, cpu: perUnit(await cpu.stop(), Math.max(1, r.total), 'request') };
      };
      await load({ url: bareUrl, connections, duration: 1 });
      const ref = await metered({ url: bareUrl, connections, duration });
      await load({ url: `${s.url}${path}`, connections, duration: 1, headers });
      const r = await metered({ url: `${s.url}${path}`, connections, duration, headers });
      const nl = await metered({ url: `${s.url}${NO_LIMIT}`, connections, duration, headers });
      info(
        `http: autocannon in a child process, ${connections} connections, ${duration} s per target after a 1 s warm-up; ${(body as { websites: unknown[] }).websites.length} websites per answer (${JSON.stringify(body).length} bytes)`,
      );
      if (r.non2xx || r.errors || r.timeouts)
        info(`http: WARNING app answered non-2xx ${r.non2xx} (${JSON.stringify(r.statuses)}), errors ${r.errors}, timeouts ${r.timeouts}`);
      report('bare_fastify_rps', ref.rps, 'req/s', { cpu: ref.cpu, note: `p50 ${ref.p50.toFixed(2)} ms p95 ${ref.p95.toFixed(2)} ms` });
      report('http_list_websites_rps', r.rps, 'req/s', {
        cpu: r.cpu,
        ref: { name: 'bare_fastify_rps', value: ref.rps },
        note: `${r.total} requests, all 2xx: ${r.non2xx === 0 && r.errors === 0}`,
      });
      report('http_list_websites_p50_ms', r.p50, 'ms');
      report('http_list_websites_p95_ms', r.p95, 'ms');
      report('http_list_websites_rps_no_rate_limit', nl.rps, 'req/s', {
        cpu: nl.cpu,
        ref: { name: 'http_list_websites_rps', value: r.rps },
        note: `diagnostic: same route and handler, limiter stubbed; p50 ${nl.p50.toFixed(1)} ms p95 ${nl.p95.toFixed(1)} ms; ${nl.non2xx + nl.errors} failures`,
      });
    } finally {
      await bare.close();
      await s.close();
    }
  },
};

/**
 * The machine's speed: a bare fastify route answering a small body to autocannon (50 connections) for `seconds`, after
 * a 1 s warm-up. Printed by every run, so figures from different hosts compare.
 */
export async function machineSpeed(seconds: number): Promise<void> {
  const bare = Fastify();
  try {
    bare.get(PATH, async () => ({ websites: [{ id: '00000000-0000-0000-0000-000000000000', name: 'example', domain: 'example.com' }] }));
    await bare.listen({ host: '127.0.0.1', port: 0 });
    const a = bare.server.address();
    const url = `http://127.0.0.1:${typeof a === 'object' && a ? a.port : 0}${PATH}`;
    await load({ url, connections: 50, duration: 1 });
    const c0 = process.cpuUsage();
    const r = await load({ url, connections: 50, duration: seconds });
    const c = process.cpuUsage(c0);
    report('bare_fastify_rps', r.rps, 'req/s', {
      cpu: { nodeUs: (c.user + c.system) / Math.max(1, r.total), pgUs: 0, per: 'request' },
      note: `the machine's speed: a bare fastify route, 50 connections, ${seconds} s; p50 ${r.p50.toFixed(2)} ms`,
    });
  } finally {
    await bare.close();
  }
}
