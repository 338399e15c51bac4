/**
 * Child process of the metrics benchmark: `clients` concurrent clients POST metric requests for `seconds`, each
 * taking the next request of an endless mix of distinct filter combinations (families, kinds, ranges and filter
 * subsets drawn from a seed; a drawn combination already sent is drawn again, so none repeats), and report the rate,
 * the latency percentiles and how many combinations repeated over IPC. A separate process keeps the load generator
 * off the server's event loop. With several servers (`urls`), the requests go to them in turn (round robin).
 */
import { Agent, request } from 'undici';
import { MODEL_IDS } from '../src/domain/models';
import { seededRandom } from '../src/domain/random';

const DAY_MS = 86_400_000;
const dayName = (n: number) => new Date(n * DAY_MS).toISOString().slice(0, 10);

/** What the mix draws from: the website, its catalogue's ids and its days with answers. */
export interface MixSpec {
  seed: number;
  websiteId: string;
  locationIds: string[];
  promptIds: string[];
  competitorIds: string[];
  firstDay: number;
  lastDay: number;
}

export interface Job {
  urls: string[];
  key: string;
  clients: number;
  seconds: number;
  mix: MixSpec;
}

export interface LoadOutcome {
  total: number;
  rps: number;
  p50: number;
  p95: number;
  p99: number;
  statuses: Record<string, number>;
  distinct: number;
  /** requests whose filter combination an earlier request of this run had (the mix redraws those: 0 unless it ran dry) */
  repeats: number;
  /** CPU this load generator spent while the clients ran (µs): it shares the machine with the server */
  cpuUs: number;
}

const FAMILIES = ['mention-rate', 'share-of-voice', 'citation-rate', 'position'];
const LENGTHS = [7, 14, 30, 60, 90, 180, 365];

/** Distinct metric requests, one after another (a combination drawn twice is drawn again, up to 100 times). */
export function* requestMix(m: MixSpec): Generator<{ path: string; body: string; repeat: boolean }> {
  const r = seededRandom(m.seed);
  const pick = <T>(xs: T[], k: number) => [...xs].sort(() => r() - 0.5).slice(0, k);
  const seen = new Set<string>();
  for (;;) {
    let drawn: { path: string; body: string; repeat: boolean } | null = null;
    for (let tries = 0; !drawn || (drawn.repeat && tries < 100); tries++) {
      const len = LENGTHS[Math.floor(r() * LENGTHS.length)];
      const end = m.lastDay - Math.floor(r() * 120);
      const start = Math.max(m.firstDay, end - len + 1);
      const filters: Record<string, unknown> = { start_date: dayName(start), end_date: dayName(Math.max(start, end)) };
      if (r() < 0.5) filters.models = pick([...MODEL_IDS], 1 + Math.floor(r() * 4));
      if (r() < 0.4) filters.location_ids = pick(m.locationIds, 1 + Math.floor(r() * 2));
      if (r() < 0.4) filters.prompt_ids = pick(m.promptIds, 5 + Math.floor(r() * 35));
      if (r() < 0.3) filters.competitor_ids = pick(m.competitorIds, 2 + Math.floor(r() * 4));
      if (r() < 0.15) filters.prompt_type = r() < 0.5 ? 'branded' : 'non_branded';
      const body = JSON.stringify({ website_id: m.websiteId, filters });
      const path = `/api/v1/metrics/${FAMILIES[Math.floor(r() * 4)]}/${r() < 0.6 ? 'cumulative' : 'time-series'}`;
      drawn = { path, body, repeat: seen.has(path + body) };
    }
    seen.add(drawn.path + drawn.body);
    yield drawn;
  }
}

process.once('message', async (job: Job) => {
  const agent = new Agent({ connections: job.clients, pipelining: 1 });
  const mix = requestMix(job.mix);
  let next = 0;
  let repeats = 0;
  const latencies: number[] = [];
  const statuses: Record<string, number> = {};
  const cpu0 = process.cpuUsage();
  const deadline = Date.now() + job.seconds * 1000;
  await Promise.all(
    Array.from({ length: job.clients }, async () => {
      while (Date.now() < deadline) {
        const url = job.urls[next++ % job.urls.length];
        const r = mix.next().value!;
        if (r.repeat) repeats++;
        const t0 = performance.now();
        const res = await request(`${url}${r.path}`, {
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
  const cpu = process.cpuUsage(cpu0);
  await agent.close();
  latencies.sort((a, b) => a - b);
  const q = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))];
  const out: LoadOutcome = {
    total: latencies.length,
    rps: latencies.length / job.seconds,
    p50: q(0.5),
    p95: q(0.95),
    p99: q(0.99),
    statuses,
    distinct: next - repeats,
    repeats,
    cpuUs: cpu.user + cpu.system,
  };
  process.send!(out, () => process.exit(0));
});
