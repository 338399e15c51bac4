import { createSchedule } from '../commands/catalog/create-schedule';
import { startRun } from '../commands/responses/start-run';
import { isDomainError } from '../src/domain/errors';
import { SYSTEM_ACTOR } from '../src/domain/events';
import { MODEL_IDS } from '../src/domain/models';
import { answersBench, datasetPeriods } from './answers';
import { quickShape } from './answers-data';
import { type AnswerSite, seedAnswerSite } from './answers';
import { cpuMeter, info, postOk, report, warmedUp } from './lib';
import type { BenchServer } from './server';
import { withTwoWorkerInstances } from './with-server';

async function getOk(server: { url: string; key: string }, path: string, query: Record<string, string>): Promise<any> {
  const res = await fetch(`${server.url}${path}?${new URLSearchParams(query)}`, { headers: { 'x-api-key': server.key } });
  const out = await res.json();
  if (res.status !== 200) throw new Error(`${path}: ${res.status} ${JSON.stringify(out)}`);
  return out;
}

/** Backfill runs (no slot) of a schedule asking each unit `samples` times; node CPU of both instances per answer. */
async function cpuPerAnswer(a: BenchServer, site: AnswerSite, samples: number, runs: number): Promise<{ us: number; answers: number }> {
  const ctx = { store: a.rt.store, organizationId: a.organizationId, websiteId: site.websiteId, actor: SYSTEM_ACTOR };
  const sched = await createSchedule(ctx, {
    website_id: site.websiteId,
    name: `x${samples}`,
    models: [...MODEL_IDS],
    frequency: 'daily',
    samples_per_prompt: samples,
  });
  if (isDomainError(sched)) throw new Error(sched.message);
  const db = a.rt.database.db;
  const cpu = await cpuMeter(db);
  const ids: string[] = [];
  let units = 0;
  for (let i = 0; i < runs; i++) {
    const r = await startRun(ctx, { website_id: site.websiteId, schedule_id: sched.result.id, trigger: 'backfill', day: `2026-03-0${1 + i}` });
    if (isDomainError(r)) throw new Error(r.message);
    ids.push(r.result.run_id);
    units += r.result.units;
  }
  for (;;) {
    const done = Number((await db('rm_runs').whereIn('id', ids).whereNotNull('finished_at').count<{ n: string }[]>('* as n'))[0].n);
    if (done === ids.length) break;
    await new Promise((res) => setTimeout(res, 100));
  }
  const c = await cpu.stop();
  const recorded = Number((await db('rm_run_units').whereIn('run_id', ids).where('status', 'recorded').count<{ n: string }[]>('* as n'))[0].n);
  if (recorded !== units) throw new Error(`${recorded} of ${units} units answered`);
  return { us: c.nodeUs / units, answers: units };
}

export const signal = answersBench({
  name: 'signal',
  about: 'period comparison and prompt stability over HTTP on the answers dataset; worker CPU per answer with samples_per_prompt 5 against 1',
  async run({ ds, db, quick }) {
    const { span, current, previous } = await datasetPeriods(ds, quick);
    const periods = {
      current_start: current.start_date,
      current_end: current.end_date,
      previous_start: previous.start_date,
      previous_end: previous.end_date,
    };
    const filtered = {
      models: [MODEL_IDS[0], MODEL_IDS[2], MODEL_IDS[5]].join(','),
      location_ids: ds.site.ids.locationIds.slice(0, 2).join(','),
      prompt_ids: ds.site.ids.promptIds
        .filter((_, i) => i % 3 === 0)
        .slice(0, 30)
        .join(','),
    };
    const n = quick ? 30 : 100;
    const website_id = ds.site.websiteId;
    info(
      `signal: ${ds.total} answers; periods ${periods.previous_start}..${periods.previous_end} against ${periods.current_start}..${periods.current_end}`,
    );
    // the same load's yardstick: the existing cumulative read over the current period
    const ref = await warmedUp(n, () =>
      postOk(ds.server, '/api/v1/metrics/mention-rate/cumulative', {
        website_id,
        filters: { start_date: periods.current_start, end_date: periods.current_end },
      }),
    );
    info(`signal: yardstick under the same load: POST mention-rate/cumulative p50 ${ref.p50.toFixed(1)} ms, p95 ${ref.p95.toFixed(1)} ms`);
    let worst = 0;
    const compareCpu = await cpuMeter(db);
    let compareRequests = 0;
    for (const [name, extra] of [
      ['unfiltered', {}],
      ['filtered', filtered],
    ] as const) {
      for (const metric of ['mention_rate', 'share_of_voice', 'citation_rate', 'avg_position']) {
        const { p95, p50 } = await warmedUp(n, () => getOk(ds.server, '/api/v1/metrics/compare', { website_id, metric, ...periods, ...extra }));
        compareRequests += n + 3;
        info(`signal: compare ${metric} ${name}: p50 ${p50.toFixed(1)} ms, p95 ${p95.toFixed(1)} ms`);
        worst = Math.max(worst, p95);
      }
    }
    const cc = await compareCpu.stop();
    report('metrics_compare_ms', worst, 'ms', {
      goal: { op: '<=', value: 30 },
      note: `p95 of the slowest of 8 cases (4 metrics x unfiltered/filtered), ${n} sequential requests each, two ${span}-day periods over HTTP; CPU per request ${(cc.nodeUs / compareRequests / 1000).toFixed(2)} ms node + ${(cc.pgUs / compareRequests / 1000).toFixed(2)} ms Postgres`,
    });
    const stabCpu = await cpuMeter(db);
    const stab = await warmedUp(n, () => getOk(ds.server, '/api/v1/metrics/stability', { website_id, ...current }));
    const sc = await stabCpu.stop();
    report('metrics_stability_ms', stab.p95, 'ms', {
      goal: { op: '<=', value: 50 },
      note: `p95, ${n} sequential requests: ${stab.last.summary.pairs} (prompt, model) pairs over ${span} days (${ds.site.shape.prompts} prompts x ${MODEL_IDS.length} models x ${ds.site.shape.locations} locations a day), p50 ${stab.p50.toFixed(1)} ms; CPU per request ${(sc.nodeUs / (n + 3) / 1000).toFixed(2)} ms node + ${(sc.pgUs / (n + 3) / 1000).toFixed(2)} ms Postgres`,
    });

    const shape = { ...quickShape, prompts: quick ? 5 : 20, days: 1 };
    await withTwoWorkerInstances(0, { ENGINE_MODE: 'simulated' }, async (a) => {
      const site = await seedAnswerSite(a, shape);
      const one = await cpuPerAnswer(a, site, 1, quick ? 2 : 5);
      const five = await cpuPerAnswer(a, site, 5, quick ? 2 : 5);
      info(
        `signal: samples 1: ${one.answers} answers, ${one.us.toFixed(0)} us node CPU each; samples 5: ${five.answers} answers, ${five.us.toFixed(0)} us each`,
      );
      report('worker_cpu_us_per_answer_samples5', five.us, 'us', {
        goal: { op: '<=', value: Math.round(one.us * 1.2) },
        note: `node CPU of both worker instances per answer with samples_per_prompt 5 (${five.answers} answers) against ${one.us.toFixed(0)} us with 1 (${one.answers} answers); goal: unchanged within 20%`,
      });
    });
  },
});
