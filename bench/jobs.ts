import { requestProbe } from '../commands/probe/request-probe';
import { isDomainError } from '../src/domain/errors';
import { SYSTEM_ACTOR } from '../src/domain/events';
import { newId } from '../src/domain/ids';
import { jobStream } from '../src/domain/jobs';
import type { Runtime } from '../src/runtime';
import { PROBE_SLOTS } from '../src/workers/probe';
import { type Bench, info, median, mostJobsAtOnce, nowNs, report, secondsSince, sleep } from './lib';
import type { BenchServer } from './server';
import { withTwoWorkerInstances } from './with-server';

/** The most probes running at once, per website and in all. */
const mostAtOnce = (rt: Runtime) => mostJobsAtOnce(rt, 'probe');

/** Probes (the reference job) through the job workers of two instances over NATS: the jobs machinery's own cost. */
export const jobs: Bench = {
  name: 'jobs',
  about: 'probe jobs through the job workers of 2 instances over a private NATS JetStream: overhead per job, a queue of 1,000 under the caps',
  async run({ quick }) {
    await withTwoWorkerInstances(0, undefined, async (a, b) => {
      const ctx = (s: BenchServer) => ({ store: s.rt.store, organizationId: a.organizationId, actor: SYSTEM_ACTOR });
      const submit = async (s: BenchServer, website_id: string, step_ms: number) => {
        const r = await requestProbe(ctx(s), { website_id, steps: 1, step_ms, fail_at_step: null });
        if (isDomainError(r)) throw new Error(r.message);
        return r.job_id;
      };

      // one probe at a time on idle instances: request, relay, bus, slot, start, step, end
      const latencies: number[] = [];
      for (let i = 0; i < (quick ? 10 : 40); i++) {
        const t0 = nowNs();
        const id = await submit(a, newId(), 0);
        for (;;) {
          const [last] = await a.rt.store.readStream(jobStream('probe', id), { direction: 'backwards', maxCount: 1 });
          if (last?.type === 'JobSucceeded') break;
          await sleep(2);
        }
        latencies.push(secondsSince(t0) * 1000);
      }
      report('job_overhead_ms', median(latencies), 'ms', {
        note: 'p50, one-step probe of 0 ms from its request to JobSucceeded committed (polled every 2 ms)',
      });

      // a queue: n probes of 20 ms for one website, submitted through both instances at once
      const n = quick ? 200 : 1000;
      const stepMs = 20;
      const site = newId();
      const before = (await mostAtOnce(a.rt)).ended;
      const t0 = nowNs();
      await Promise.all(Array.from({ length: n }, (_, i) => submit(i % 2 ? b! : a, site, stepMs)));
      while ((await mostAtOnce(a.rt)).ended < before + n) await sleep(100);
      const s = secondsSince(t0);
      const ideal = (n * stepMs) / 1000 / PROBE_SLOTS.perScope;
      report('jobs_one_website_drain_s', s, 's', {
        note: `${n} probes of ${stepMs} ms for one website at ${PROBE_SLOTS.perScope} running: ${ideal.toFixed(1)} s if the machinery cost nothing`,
      });
      const most = await mostAtOnce(a.rt);
      report('jobs_running_at_once_per_website', most.perSite, 'jobs', {
        goal: { op: '<=', value: PROBE_SLOTS.perScope },
        note: 'the most running at once for one website, replayed from JobStarted/JobSucceeded in the log order',
      });
      info(`most running at once in all: ${most.overall} (cap ${PROBE_SLOTS.overall})`);
    });
  },
};
