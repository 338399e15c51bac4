import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emailIdForKey } from '../../commands/email/request-email';
import { evaluateWebsite } from '../../src/app/alerts';
import { MODEL_IDS } from '../../src/domain/models';
import { EngineError } from '../../src/engines/port';
import { accessCheckThrough, dailyAlertPass } from '../../src/workers/alerts';
import { buildSite, finishedRun, importAnswers, type Site } from '../support/answers';
import { simulatedEnginesWith } from '../support/engines';
import { guardConnections } from '../support/net';
import { type Receiver, startReceiver } from '../support/receiver';
import { call, startServer, type TestServer } from '../support/server';
import { until } from '../support/until';
import { D, type Fixture, startFixture } from './ai-access-fixture';

/**
 * Each kind fires end to end: the rule's trigger (a run's end, an import, the daily pass) finds it, the alert is
 * listed, delivered once as alert.fired to a local receiver, and mailed once through the outbox.
 */
const FAILING = MODEL_IDS[5];
let s: TestServer;
let rx: Receiver;
let fx: Fixture;
let key: string;
let orgId: string;

guardConnections();
beforeAll(async () => {
  rx = await startReceiver();
  fx = await startFixture();
  const engines = simulatedEnginesWith(async (model, _req, simulated) => {
    if (model === FAILING) throw new EngineError('rate_limited', 'provider said 429 four times', { attempts: 4, model });
    return simulated();
  });
  s = await startServer({ WEBHOOK_ALLOW_PRIVATE: '1' }, { outbound: fx.outbound }, undefined, { engines });
  const org = await s.org('Alerted');
  key = org.key;
  orgId = org.organization_id;
});
afterAll(async () => {
  await s?.close();
  await rx?.close();
  await fx?.close();
});

type Alert = { id: string; rule_id: string; kind: string; summary: string; details: Record<string, unknown> };

/** A webhook on alert.fired at its own path, and a rule of the kind mailing one address. */
async function ruleWithHook(site: Site, kind: string, params: object, path: string) {
  const hook = await call(s, 'POST', '/api/v1/webhooks', { key, body: { url: `${rx.url}${path}`, event_types: ['alert.fired'] } });
  expect(hook.status, JSON.stringify(hook.body)).toBe(201);
  const rule = await call(s, 'POST', '/api/v1/alert-rules', {
    key,
    body: { website_id: site.id, name: kind, kind, params, emails: [`${path.slice(1)}@example.com`] },
  });
  expect(rule.status, JSON.stringify(rule.body)).toBe(201);
  return { hookId: hook.body.webhook.id as string, ruleId: rule.body.rule.id as string };
}

const alertsOf = async (site: Site, ruleId: string): Promise<Alert[]> => {
  const r = await call(s, 'GET', '/api/v1/alerts', { key, query: { website_id: site.id } });
  expect(r.status).toBe(200);
  return r.body.alerts.filter((a: Alert) => a.rule_id === ruleId);
};

/** The one alert of the rule, its one alert.fired request and its one sent email; then nothing more arrives. */
async function firedOnce(site: Site, ruleId: string, hookId: string, path: string): Promise<Alert> {
  const [alert] = await until(`an alert of ${ruleId}`, async () => {
    const a = await alertsOf(site, ruleId);
    return a.length > 0 && a;
  });
  const requests = await until(`alert.fired at ${path}`, async () => rx.on(path).length > 0 && rx.on(path), 30_000, 100);
  expect(requests[0].headers['webhook-id']).toBeTruthy();
  expect(requests[0].json).toMatchObject({ type: 'alert.fired', website_id: site.id, data: { id: alert.id, rule_id: ruleId, kind: alert.kind } });
  const emailId = emailIdForKey(orgId, `alert-${alert.id}-${path.slice(1)}@example.com`);
  const mails = () => s.rt.database.db('rm_emails').where({ organization_id: orgId, template: 'alert' });
  await until(`the alert email of ${path}`, async () => (await mails()).some((m) => m.email_id === emailId && m.status === 'sent'), 30_000, 100);
  const before = (await mails()).length;
  // evaluated again: the same finding fires nothing more
  expect((await evaluateWebsite({ db: s.rt.database.db, store: s.rt.store }, site.id, 'run_ended')).filter((a) => a.rule_id === ruleId)).toEqual([]);
  await new Promise((r) => setTimeout(r, 1500));
  expect(await alertsOf(site, ruleId)).toHaveLength(1);
  expect(rx.on(path)).toHaveLength(1);
  const d = await call(s, 'GET', `/api/v1/webhooks/${hookId}/deliveries`, { key });
  expect(d.body.deliveries).toMatchObject([{ event_type: 'alert.fired', status: 'succeeded', attempts: 1 }]);
  expect(await mails()).toHaveLength(before);
  return alert;
}

describe('alerts fired end to end', () => {
  it('given a run_failed rule, when a run ends with failed answers over the threshold, then one alert names the run', async () => {
    const site = await buildSite(s, key, { prompts: [{ text: 'a' }, { text: 'b' }] });
    const { hookId, ruleId } = await ruleWithHook(site, 'run_failed', { min_failed_percent: 5 }, '/run-failed');
    const start = await call(s, 'POST', '/api/v1/response-streaming/start', { key, body: { website_id: site.id } });
    expect(start.status).toBe(202);
    const run = await finishedRun(s, key, site.id, start.body.run_id);
    expect(run).toMatchObject({ status: 'completed_with_failures', failed: 2, total: 2 * MODEL_IDS.length });
    const alert = await firedOnce(site, ruleId, hookId, '/run-failed');
    expect(alert).toMatchObject({
      kind: 'run_failed',
      details: { run_id: start.body.run_id, failed: 2, total: 2 * MODEL_IDS.length, trigger: 'run_ended' },
    });
  });

  it('given a competitor_overtakes rule, when an import puts the competitor ahead of the brand, then one alert names the competitor', async () => {
    const site = await buildSite(s, key, {
      name: 'Acme',
      url: 'https://acme-overtaken.example.com',
      competitors: [{ name: 'Globex', url: 'https://globex-overtakes.example.net' }],
      prompts: [{ text: 'p1' }],
    });
    const globex = site.competitors[0].id;
    const { hookId, ruleId } = await ruleWithHook(site, 'competitor_overtakes', { competitor_id: globex, window_days: 5 }, '/overtaken');
    // March 1-5 every answer names Acme alone, March 6-10 Globex alone
    const answers = Array.from({ length: 10 }, (_, i) => i + 1).flatMap((d) =>
      [8, 9, 10].map((h) => ({
        prompt_id: site.prompts[0].id,
        model: 'chatgpt',
        run_at: `2026-03-${String(d).padStart(2, '0')}T${String(h).padStart(2, '0')}:00:00Z`,
        text: d <= 5 ? 'Acme alone.' : 'Globex alone.',
      })),
    );
    await importAnswers(s, key, site.id, answers);
    const alert = await firedOnce(site, ruleId, hookId, '/overtaken');
    expect(alert).toMatchObject({
      kind: 'competitor_overtakes',
      details: { competitor_id: globex, window_end_day: '2026-03-10', trigger: 'import', competitor: { verdict: 'up' }, brand: { verdict: 'down' } },
    });
  });

  it("given an access_changed rule, when the daily pass checks the website's domain and robots.txt then shuts GPTBot out, then it fires once for chatgpt", async () => {
    const site = await buildSite(s, key, { url: `https://${D.allow}` });
    const { hookId, ruleId } = await ruleWithHook(site, 'access_changed', {}, '/access');
    const db = s.rt.database.db;
    const pass = (day: string) =>
      dailyAlertPass({ db, store: s.rt.store, now: () => new Date(`${day}T06:00:00Z`), checkAccess: accessCheckThrough(fx.outbound) });
    const checked = () => fx.requests.filter((r) => r.host === D.allow && r.path === '/robots.txt').length;
    // the first day's check is the baseline; the second finds nothing changed
    await pass('2030-01-01');
    expect(checked()).toBe(1);
    await pass('2030-01-02');
    expect(checked()).toBe(2);
    expect(await alertsOf(site, ruleId)).toEqual([]);
    // the same day again is not checked again
    await pass('2030-01-02');
    expect(checked()).toBe(2);
    fx.robots[D.allow] = 'User-agent: GPTBot\nDisallow: /\n\nUser-agent: *\nAllow: /\n';
    await pass('2030-01-03');
    const alert = await firedOnce(site, ruleId, hookId, '/access');
    expect(alert).toMatchObject({ kind: 'access_changed', details: { domain: D.allow, changed: ['chatgpt'], trigger: 'daily' } });
    await pass('2030-01-04');
    expect(await alertsOf(site, ruleId)).toHaveLength(1);
  });

  it('given a daily pass whose instance died while checking a website (its claim left unfinished), when another pass runs after the lease, then that website is checked and its baseline recorded, once that day', async () => {
    const site = await buildSite(s, key, { url: `https://${D.cdn}` });
    const made = await call(s, 'POST', '/api/v1/alert-rules', {
      key,
      body: { website_id: site.id, name: 'access', kind: 'access_changed', params: {} },
    });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    const db = s.rt.database.db;
    const through = accessCheckThrough(fx.outbound);
    const checkedAt: number[] = [];
    /** a pass at 06:mm of one day, by an instance whose check of this website dies or not */
    const pass = (minute: number, dies = false) =>
      dailyAlertPass(
        {
          db,
          store: s.rt.store,
          now: () => new Date(Date.UTC(2031, 0, 1, 6, minute)),
          checkAccess: async (domain) => {
            if (domain !== D.cdn) return through(domain);
            checkedAt.push(minute);
            if (dies) throw new Error('the instance died');
            return through(domain);
          },
        },
        10 * 60_000,
      );
    const baseline = () => db('alert_access_checks').where('rule_id', made.body.rule.id).first('engines');
    await expect(pass(0, true)).rejects.toThrow('the instance died');
    expect(await baseline()).toBeUndefined();
    // within the lease the claim holds: nobody checks it again yet
    await pass(9);
    expect(checkedAt).toEqual([0]);
    await pass(11);
    expect(checkedAt).toEqual([0, 11]);
    expect(await baseline()).toBeDefined();
    // done: later passes of the day leave it
    await pass(30);
    expect(checkedAt).toEqual([0, 11]);
  });
});
