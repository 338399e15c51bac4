/**
 * Child process of the metrics benchmark: `clients` concurrent clients POST the given requests for `seconds`, each
 * taking the next request of the list (so a request repeats only once the list is used up), and report the rate
 * and latency percentiles over IPC. A separate process keeps the load generator off the server's event loop.
 */
import { Agent, request } from 'undici';

interface Job {
  url: string;
  key: string;
  clients: number;
  seconds: number;
  requests: { path: string; body: unknown }[];
}

process.once('message', async (job: Job) => {
  const agent = new Agent({ connections: job.clients, pipelining: 1 });
  const bodies = job.requests.map((r) => ({ path: r.path, body: JSON.stringify(r.body) }));
  let next = 0;
  const latencies: number[] = [];
  const statuses: Record<string, number> = {};
  const deadline = Date.now() + job.seconds * 1000;
  await Promise.all(
    Array.from({ length: job.clients }, async () => {
      while (Date.now() < deadline) {
        const r = bodies[next++ % bodies.length];
        const t0 = performance.now();
        const res = await request(`${job.url}${r.path}`, {
          method: 'POST',
          dispatcher: agent,
          headers: { 'content-type': 'application/json', 'x-api-key': job.key },
          body: r.body,
        });
        await res.body.text();
        latencies.push(performance.now() - t0);
        statuses[res.statusCode] = (statuses[res.statusCode] ?? 0) + 1;
      }
    }),
  );
  await agent.close();
  latencies.sort((a, b) => a - b);
  const q = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))];
  process.send!(
    {
      total: latencies.length,
      rps: latencies.length / job.seconds,
      p50: q(0.5),
      p95: q(0.95),
      p99: q(0.99),
      statuses,
      distinct: Math.min(next, bodies.length),
    },
    () => process.exit(0),
  );
});
