import { requestSeoRecommendations } from '../commands/seo/request-recommendations';
import { parseDraft } from '../src/analysis/seo';
import { isDomainError } from '../src/domain/errors';
import { SYSTEM_ACTOR } from '../src/domain/events';
import { createWebsite } from '../commands/websites/create-website';
import { jobStream } from '../src/domain/jobs';
import { newId } from '../src/domain/ids';
import type { Runtime } from '../src/runtime';
import { SEO_SLOTS } from '../src/workers/seo';
import { type Bench, info, median, mostJobsAtOnce, nowNs, report, secondsSince, sleep } from './lib';
import type { BenchServer } from './server';
import { withTwoWorkerInstances } from './with-server';

/** The most SEO jobs running at once, per website and in all. */
const mostAtOnce = (rt: Runtime) => mostJobsAtOnce(rt, 'seo');

const DRAFT = {
  title: 'Running shoes for flat feet: how to choose',
  body: '# Running shoes for flat feet\n\nStability shoes with arch support help flat feet.\n\n## What to look for\n\nA firm midsole and a wide base.',
};

/** SEO recommendation jobs for drafts through the job workers of 2 instances over NATS: latency, and 1,000 queued under the caps. */
export const seo: Bench = {
  name: 'seo',
  about: 'SEO recommendation jobs (drafts) on 2 instances over NATS: submission to succeeded, 1,000 for one website under the caps',
  async run({ quick }) {
    await withTwoWorkerInstances(1, undefined, async (a, b) => {
      const db = a.rt.database.db;
      const ctx = (s: BenchServer) => ({ store: s.rt.store, organizationId: a.organizationId, actor: SYSTEM_ACTOR });
      const sites: string[] = [(await db('rm_websites').first('id')).id];
      for (let i = 0; i < 5; i++) {
        const w = await createWebsite(ctx(a), { name: `Other ${i}`, url: `https://other${i}.example.com/` });
        if (isDomainError(w)) throw new Error(w.message);
        sites.push(w.result.id);
        await a.rt.waitForReadModels(w.position, 'all', 30_000);
      }
      const page = parseDraft(DRAFT);
      const submit = async (s: BenchServer, website_id: string) => {
        const r = await requestSeoRecommendations(
          { ...ctx(s), websiteId: website_id },
          s.rt.database.db,
          { website_id, request_id: newId(), url: null, draft: DRAFT },
          async () => page,
        );
        if (isDomainError(r)) throw new Error(r.message);
        return r.job_id;
      };

      const latencies: number[] = [];
      for (let i = 0; i < (quick ? 10 : 30); i++) {
        const t0 = nowNs();
        const id = await submit(i % 2 ? b : a, sites[0]);
        for (;;) {
          const [last] = await a.rt.store.readStream(jobStream('seo', id), { direction: 'backwards', maxCount: 1 });
          if (last?.type === 'JobSucceeded') break;
          if (last?.type === 'JobFailed') throw new Error(`job ${id} failed`);
          await sleep(5);
        }
        latencies.push(secondsSince(t0));
      }
      report('seo_job_s', median(latencies), 's', {
        goal: { op: '<=', value: 2 },
        note: 'p50 from submission of a draft to JobSucceeded committed (polled every 5 ms)',
      });

      const n = quick ? 200 : 1000;
      const others = quick ? 20 : 60;
      const before = (await mostAtOnce(a.rt)).ended;
      const t0 = nowNs();
      const plan = [...Array.from({ length: n }, () => sites[0]), ...sites.slice(1).flatMap((w) => Array.from({ length: others }, () => w))];
      let k = 0;
      await Promise.all(
        Array.from({ length: 16 }, async (_, worker) => {
          for (let i = k++; i < plan.length; i = k++) await submit((i + worker) % 2 ? b! : a, plan[i]);
        }),
      );
      info(`${plan.length} jobs submitted in ${secondsSince(t0).toFixed(1)} s (${n} for one website, ${others} for each of 5 others)`);
      while ((await mostAtOnce(a.rt)).ended < before + plan.length) await sleep(200);
      report('seo_drain_s', secondsSince(t0), 's', { note: `${plan.length} draft jobs submitted and drained on 2 instances` });
      const most = await mostAtOnce(a.rt);
      report('seo_running_at_once_per_website', most.perSite, 'jobs', {
        goal: { op: '<=', value: SEO_SLOTS.perScope },
        note: 'replayed from JobStarted/ends in the log order',
      });
      report('seo_running_at_once_overall', most.overall, 'jobs', {
        goal: { op: '<=', value: SEO_SLOTS.overall },
        note: 'replayed from JobStarted/ends in the log order',
      });
    });
  },
};
