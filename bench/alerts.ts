import { createAlertRule } from '../commands/alerts/rule';
import { evaluateWebsite } from '../src/app/alerts';
import { factsCache } from '../queries/metrics/metrics';
import { isDomainError } from '../src/domain/errors';
import { SYSTEM_ACTOR } from '../src/domain/events';
import { answersBench } from './answers';
import { cpuMeter, info, report, warmedUp } from './lib';

export const alerts = answersBench({
  name: 'alerts',
  about: "evaluation of a website's rules (metric_change x3, competitor_overtakes, run_failed) as at a run's end, on the answers dataset",
  async run({ ds, db, quick }) {
    const websiteId = ds.site.websiteId;
    const ctx = { store: ds.server.rt.store, organizationId: ds.server.organizationId, websiteId, actor: SYSTEM_ACTOR };
    const competitor = await db('rm_competitors').where('website_id', websiteId).whereNull('removed_at').first('id');
    const rules = [
      { kind: 'metric_change' as const, params: { metric: 'mention_rate', entity: 'brand', window_days: 7, min_change_points: 5 } },
      { kind: 'metric_change' as const, params: { metric: 'share_of_voice', entity: 'brand', window_days: 30, min_change_points: 5 } },
      { kind: 'metric_change' as const, params: { metric: 'citation_rate', entity: 'brand', window_days: 7, min_change_points: 5 } },
      ...(competitor
        ? [{ kind: 'competitor_overtakes' as const, params: { competitor_id: competitor.id, metric: 'mention_rate', window_days: 7 } }]
        : []),
      { kind: 'run_failed' as const, params: { min_failed_percent: 10 } },
    ];
    // a kept dataset (BENCH_DATASET_DB) has the rules of an earlier run: the same five, never more
    const named = (): Promise<string[]> => db('rm_alert_rules').where('website_id', websiteId).whereLike('name', 'rule %').pluck('name');
    const had = new Set(await named());
    for (const [i, r] of rules.entries()) {
      if (had.has(`rule ${i}`)) continue;
      const made = await createAlertRule(ctx, { website_id: websiteId, name: `rule ${i}`, webhook_ids: [], emails: [], ...r });
      if (isDomainError(made)) throw new Error(made.message);
    }
    while ((await named()).length < rules.length) await new Promise((res) => setTimeout(res, 100));
    const n = quick ? 30 : 100;
    const cpu = await cpuMeter(db);
    const t = await warmedUp(n, () => evaluateWebsite({ db, store: ds.server.rt.store }, websiteId, 'run_ended'));
    const c = await cpu.stop();
    const held = factsCache(db).stats().held_bytes;
    info(
      `alerts: ${ds.total} answers, ${rules.length} rules; p50 ${t.p50.toFixed(1)} ms; facts held after the evaluations ${(held / 1048576).toFixed(1)} MB`,
    );
    report('alert_evaluation_ms', t.p95, 'ms', {
      goal: { op: '<=', value: 50 },
      note: `p95 of ${n} sequential evaluations of one website's ${rules.length} rules (each comparison over the newest answer's windows); CPU per evaluation ${(c.nodeUs / (n + 3) / 1000).toFixed(2)} ms node + ${(c.pgUs / (n + 3) / 1000).toFixed(2)} ms Postgres`,
    });
    // the whole bench process over the metered span (the server's idle workers, the first load of the facts and any
    // background load they start included), per evaluation: what --ab compares
    report('alert_evaluation_cpu_us_per_evaluation', (c.nodeUs + c.pgUs) / (n + 3), 'us', {
      note: `node ${(c.nodeUs / (n + 3)).toFixed(0)} us + Postgres ${(c.pgUs / (n + 3)).toFixed(0)} us, over ${n + 3} evaluations (3 warm-up)`,
    });
  },
});
