import { expect, it } from 'vitest';
import { emailIdForKey } from '../../commands/email/request-email';
import { type EvaluateDeps, evaluateWebsite } from '../../src/app/alerts';
import { dailyAlertPass } from '../../src/workers/alerts';
import { buildSite, importAnswers, type Site, acmeAgainstGlobex } from '../support/answers';
import { useTwoInstancesOverNats } from '../support/nats-instances';
import { type Receiver, startReceiver } from '../support/receiver';
import { call, type TestServer } from '../support/server';
import { onPostgresServer } from '../support/suites';
import { until } from '../support/until';

// Two instances over one database and one NATS: needs a real server.
const suite = onPostgresServer('two-instance alerts and webhooks test', 'two instances need a shared server');

/**
 * Alerts and webhook deliveries behind two instances (each its own runtime, pool, dispatcher and consumers): a rule
 * evaluated by both fires once, and each delivery attempt is made by one instance at a time.
 */
suite('alerts and webhook deliveries on two instances', () => {
  let rx: Receiver;
  let a: TestServer;
  let b: TestServer;
  let key: string;
  let orgId: string;
  let site: Site;
  useTwoInstancesOverNats(
    // two attempts at a time for an endpoint on each instance: one instance cannot take every delivery of a burst
    // while the other waits for its next poll (at load, one did, and the two-claimers check below failed)
    () => ({ env: { WEBHOOK_ALLOW_PRIVATE: '1', WEBHOOK_RETRY_SCHEDULE_S: '1,1' }, runtime: { webhooks: { perEndpoint: 2 } } }),
    async (ctx) => {
      ({ a, b } = ctx);
      rx = await startReceiver();
      const org = await a.org('Two instances');
      key = org.key;
      orgId = org.organization_id;
      site = await buildSite(a, key, acmeAgainstGlobex('two'));
      await until(
        'the website on b',
        async () => (await call(b, 'GET', '/api/v1/alert-rules', { key, query: { website_id: site.id } })).status === 200,
      );
    },
  );

  it('given a rule, when imports on both instances and evaluations on both at once find the same change, then it fires once: one alert, one alert.fired, one email', async () => {
    const hook = await call(a, 'POST', '/api/v1/webhooks', { key, body: { url: `${rx.url}/alerts`, event_types: ['alert.fired'] } });
    expect(hook.status).toBe(201);
    const rule = await call(b, 'POST', '/api/v1/alert-rules', {
      key,
      body: {
        website_id: site.id,
        name: 'Up',
        kind: 'metric_change',
        params: { metric: 'mention_rate', window_days: 5 },
        emails: ['ops@example.com'],
      },
    });
    expect(rule.status).toBe(201);
    const ruleId = rule.body.rule.id as string;
    // March 1-5: Acme in 2 of 10 answers; March 6-10: in all 10
    const answer = (d: number, k: number) => ({
      prompt_id: site.prompts[0].id,
      model: 'chatgpt',
      run_at: `2026-03-${String(d).padStart(2, '0')}T0${8 + k}:00:00Z`,
      text: d >= 6 || (d === 1 && k === 0) || (d === 2 && k === 0) ? 'Acme alone.' : 'Globex alone.',
    });
    const days = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i).flatMap((d) => [answer(d, 0), answer(d, 1)]);
    await Promise.all([importAnswers(a, key, site.id, days(1, 5)), importAnswers(b, key, site.id, days(6, 10))]);
    const evaluations = await Promise.all(
      [a, b, a, b].map((s) => evaluateWebsite({ db: s.rt.database.db, store: s.rt.store }, site.id, 'import').catch(() => [])),
    );
    const alerts = async (s: TestServer) =>
      (await call(s, 'GET', '/api/v1/alerts', { key, query: { website_id: site.id } })).body.alerts.filter(
        (x: { rule_id: string }) => x.rule_id === ruleId,
      );
    const [alert] = await until('the alert', async () => {
      const l = await alerts(a);
      return l.length > 0 && l;
    });
    expect(evaluations.flat().filter((x) => x.rule_id === ruleId).length).toBeLessThanOrEqual(1);
    await until('alert.fired delivered', async () => rx.on('/alerts').length > 0, 30_000, 100);
    const emailId = emailIdForKey(orgId, `alert-${alert.id}-ops@example.com`);
    await until(
      'the email sent',
      async () => (await a.rt.database.db('rm_emails').where({ email_id: emailId, status: 'sent' })).length === 1,
      30_000,
      100,
    );
    // both instances' consumers and dispatchers have had their turn: still once
    await new Promise((r) => setTimeout(r, 2000));
    for (const s of [a, b]) expect(await alerts(s)).toHaveLength(1);
    expect(rx.on('/alerts')).toHaveLength(1);
    expect(rx.on('/alerts')[0].json.data).toMatchObject({ id: alert.id, rule_id: ruleId });
    expect(await a.rt.database.db('rm_emails').where({ organization_id: orgId, template: 'alert' })).toHaveLength(1);
  });

  it('given websites with an access_changed rule, when both instances run the daily pass at once, then each website is checked once', async () => {
    const domains = [1, 2, 3].map((n) => `daily-${n}.example.com`);
    for (const domain of domains) {
      const other = await buildSite(a, key, { url: `https://${domain}` });
      const made = await call(a, 'POST', '/api/v1/alert-rules', {
        key,
        body: { website_id: other.id, name: 'access', kind: 'access_changed', params: {} },
      });
      expect(made.status, JSON.stringify(made.body)).toBe(201);
    }
    const checked: string[] = [];
    // a check that takes a while, so the two passes overlap
    const checkAccess: EvaluateDeps['checkAccess'] = async (domain) => {
      checked.push(domain);
      await new Promise((r) => setTimeout(r, 100));
      return { result: { status: 'ok', http: { chatgpt: 'allowed' }, robots: { chatgpt: 'allowed' } } as never };
    };
    const now = () => new Date('2031-02-01T06:00:00Z');
    await Promise.all([a, b].map((s) => dailyAlertPass({ db: s.rt.database.db, store: s.rt.store, now, checkAccess })));
    expect(checked.sort()).toEqual(domains);
  });

  it('given deliveries both dispatchers claim, with a slow receiver failing every first attempt, then each attempt is made once, never two at a time, and the listing is exact', async () => {
    const seen = new Map<string, number>();
    const open = new Set<string>();
    const overlaps: string[] = [];
    rx.answer = async (path, req, res) => {
      if (path !== '/flaky') return void res.end('ok');
      const id = req.headers['webhook-id'];
      if (open.has(id)) overlaps.push(id);
      open.add(id);
      const n = (seen.get(id) ?? 0) + 1;
      seen.set(id, n);
      await new Promise((r) => setTimeout(r, 150));
      open.delete(id);
      res.statusCode = n === 1 ? 500 : 200;
      res.end();
    };
    const hook = await call(a, 'POST', '/api/v1/webhooks', { key, body: { url: `${rx.url}/flaky`, event_types: ['topic.created'] } });
    expect(hook.status).toBe(201);
    const hookId = hook.body.webhook.id as string;
    await until('the webhook on b', async () => (await call(b, 'GET', `/api/v1/webhooks/${hookId}`, { key })).status === 200);
    // which instances hold leases while the attempts go
    const owners = new Set<string>();
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const rows = await a.rt.database.db('webhook_deliveries').where('webhook_id', hookId).whereNotNull('lease_owner').distinct('lease_owner');
        for (const r of rows) owners.add(r.lease_owner);
        await new Promise((r) => setTimeout(r, 30));
      }
    })();
    const N = 60;
    // four at a time: more at once on one website's catalogue is a decider conflict past its retries (a 500 of its own)
    for (let i = 0; i < N; i += 4) {
      const made = await Promise.all(
        [i, i + 1, i + 2, i + 3].map((n) => call(n % 2 ? b : a, 'POST', '/api/v1/topics', { key, body: { website_id: site.id, name: `T${n}` } })),
      );
      for (const m of made) expect(m.status, JSON.stringify(m.body)).toBe(201);
    }
    const listing = async () => {
      const r = await call(b, 'GET', `/api/v1/webhooks/${hookId}/deliveries`, { key, query: { page_size: '100' } });
      expect(r.status).toBe(200);
      return r.body.deliveries as { event_id: string; status: string; attempts: number; last_status_code: number }[];
    };
    const done = await until(
      'every delivery succeeded',
      async () => {
        const l = await listing();
        return l.length === N && l.every((d) => d.status === 'succeeded') && l;
      },
      45_000,
      200,
    );
    sampling = false;
    await sampler;
    expect(owners.size).toBe(2);
    expect(overlaps).toEqual([]);
    // the first attempt failed, the second delivered: two requests per event, as the listing says
    expect(done.every((d) => d.attempts === 2 && d.last_status_code === 200)).toBe(true);
    expect(new Set(done.map((d) => d.event_id)).size).toBe(N);
    expect([...seen.keys()].sort()).toEqual(done.map((d) => d.event_id).sort());
    expect([...seen.values()].every((n) => n === 2)).toBe(true);
  }, 60_000);
});
