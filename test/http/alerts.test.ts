import { randomUUID } from 'node:crypto';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, describe, expect, it } from 'vitest';
import { alertRuleStream, fireAlert } from '../../commands/alerts/rule';
import { emailIdForKey } from '../../commands/email/request-email';
import { evaluateWebsite, fire } from '../../src/app/alerts';
import { SYSTEM_ACTOR } from '../../src/domain/events';
import { apiKey, connect, toolOk } from '../mcp/support';
import { buildSite, importAnswers, type Site, acmeAgainstGlobex } from '../support/answers';
import { grepDatabase } from '../support/db-grep';
import { refusedWithoutWrite } from '../support/http';
import { call, caughtUp, sharedServer, type TestServer } from '../support/server';
import { useWorld, type World } from '../support/tenancy';

let s: TestServer;
let w: World;
let site: Site;
let other: Site;
let mcp: Client;

const R = '/api/v1/alert-rules';
const deps = () => ({ db: s.rt.database.db, store: s.rt.store });

/** Brand Acme, competitor Globex; p1 on chatgpt two answers a day March 1-10: Acme in 3 of the first five days' answers, 9 of the last five's. */
function answers(p1: string) {
  const items: object[] = [];
  for (let d = 1; d <= 10; d++)
    for (let k = 0; k < 2; k++) {
      const acme = d >= 6 ? !(d === 6 && k === 1) : d === 1 || (d === 2 && k === 0);
      items.push({
        prompt_id: p1,
        model: 'chatgpt',
        run_at: `2026-03-${String(d).padStart(2, '0')}T0${8 + k}:00:00Z`,
        text: acme ? 'Acme alone.' : 'Globex alone.',
      });
    }
  return items;
}

useWorld(async (ctx) => {
  ({ s, w } = ctx);
  site = await buildSite(s, w.a.key, acmeAgainstGlobex('alert'));
  other = await buildSite(s, w.a.key, {
    name: 'Other',
    url: 'https://other-alert.example.com',
    competitors: [{ name: 'Initech', url: 'https://initech.example.net' }],
  });
  await importAnswers(s, w.a.key, site.id, answers(site.prompts[0].id));
  mcp = await connect(s, apiKey(w.a.key));
}, sharedServer);

afterAll(async () => mcp?.close());

const rule = (extra: object = {}) => ({
  website_id: site.id,
  name: 'Mentions move',
  kind: 'metric_change',
  params: { metric: 'mention_rate', window_days: 5 },
  ...extra,
});

async function waitFor<T>(read: () => Promise<T | undefined>, ms = 15_000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const v = await read();
    if (v !== undefined) return v;
    if (Date.now() > until) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe('alert rules', () => {
  it('given a rule, then it is created with its defaults, listed, changed, and each change is an activity entry', async () => {
    const made = await call(s, 'POST', R, { key: w.a.key, body: rule({ emails: ['ops@example.com'] }) });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    expect(made.body.rule).toMatchObject({
      website_id: site.id,
      kind: 'metric_change',
      params: { metric: 'mention_rate', entity: 'brand', window_days: 5, min_change_points: 5 },
      emails: ['ops@example.com'],
      webhook_ids: [],
      enabled: true,
    });
    const id = made.body.rule.id;
    const list = await call(s, 'GET', R, { key: w.a.key, query: { website_id: site.id } });
    expect(list.body.rules.map((r: { id: string }) => r.id)).toContain(id);
    const patched = await call(s, 'PATCH', `${R}/${id}`, { key: w.a.key, body: { enabled: false, params: { metric: 'citation_rate' } } });
    expect(patched.body.rule).toMatchObject({ enabled: false, params: { metric: 'citation_rate', window_days: 7 } });
    expect((await call(s, 'GET', `${R}/${id}`, { key: w.b.key })).status).toBe(404);
    expect((await call(s, 'DELETE', `${R}/${id}`, { key: w.a.key })).status).toBe(200);
    expect((await call(s, 'GET', `${R}/${id}`, { key: w.a.key })).status).toBe(404);
    await caughtUp(s, ['activity']); // the feed is projected after the write answers
    const feed = await call(s, 'GET', '/api/v1/activity', { key: w.a.key, query: { entity_type: 'alert_rule' } });
    expect(feed.body.data.map((e: { change_type: string }) => e.change_type).sort()).toEqual(['created', 'deleted', 'updated']);
  });

  it('given a rule mailing two addresses, when it is deleted, then no table holds them, the log included, even after its read model is rebuilt', async () => {
    const marker = `erase-${randomUUID()}`;
    const [first, added] = [`first-${marker}@example.com`, `added-${marker}@example.com`];
    const made = await call(s, 'POST', R, {
      key: w.a.key,
      body: { website_id: site.id, name: 'Erasable', kind: 'access_changed', params: {}, emails: [first] },
    });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    const id = made.body.rule.id;
    const patched = await call(s, 'PATCH', `${R}/${id}`, { key: w.a.key, body: { emails: [first, added] } });
    expect(patched.body.rule.emails).toEqual([first, added]);
    const kept = await call(s, 'POST', R, { key: w.a.key, body: { website_id: site.id, name: 'Kept', kind: 'run_failed', params: {} } });
    expect(kept.status).toBe(201);
    const db = s.rt.database.db;
    // the read model has them; the log only as ciphertext
    expect(await grepDatabase(db, marker)).toEqual(['rm_alert_rules.emails']);
    expect((await call(s, 'DELETE', `${R}/${id}`, { key: w.a.key })).status).toBe(200);
    await s.rt.runners.get('alerts')!.rebuild();
    expect(await grepDatabase(db, marker)).toEqual([]);
    // the rebuild read the erased rule's events without failing: the website's other rule is back
    const listed = await call(s, 'GET', R, { key: w.a.key, query: { website_id: site.id } });
    expect(listed.body.rules.map((r: { id: string }) => r.id)).toEqual([kept.body.rule.id]);
    expect((await call(s, 'DELETE', `${R}/${kept.body.rule.id}`, { key: w.a.key })).status).toBe(200);
    const events = await s.rt.store.readStream(alertRuleStream(id));
    expect(events.map((e) => [e.type, (e.data as { emails?: unknown }).emails])).toEqual([
      ['AlertRuleCreated', null],
      ['AlertRuleUpdated', null],
      ['AlertRuleDeleted', undefined],
    ]);
    expect((await call(s, 'GET', `${R}/${id}`, { key: w.a.key })).status).toBe(404);
  });

  it('given bad input, then 400 naming the field and nothing written; a scoped key is 403; another organization is refused', async () => {
    const globex = site.competitors[0].id;
    const initech = other.competitors[0].id;
    await refusedWithoutWrite(s, w.a.key, [
      { method: 'POST', path: R, body: rule({ params: { metric: 'joy' } }), status: 400, error: /^params\.metric: / },
      {
        method: 'POST',
        path: R,
        body: rule({ params: { metric: 'mention_rate', window_days: 0 } }),
        status: 400,
        error: 'params.window_days: must be 1 to 90',
      },
      {
        method: 'POST',
        path: R,
        body: rule({ params: { metric: 'mention_rate', window_days: 91 } }),
        status: 400,
        error: 'params.window_days: must be 1 to 90',
      },
      {
        method: 'POST',
        path: R,
        body: rule({ kind: 'competitor_overtakes', params: { competitor_id: initech } }),
        status: 400,
        error: `params.competitor_id: ${initech} is not a competitor of this website`,
      },
      { method: 'POST', path: R, body: rule({ params: { metric: 'mention_rate', entity: initech } }), status: 400, error: /^params\.entity: / },
      { method: 'POST', path: R, body: rule({ emails: Array.from({ length: 21 }, (_, i) => `a${i}@example.com`) }), status: 400, error: /^emails: / },
      { method: 'POST', path: R, body: rule({ emails: ['nope'] }), status: 400, error: /^emails/ },
      { method: 'POST', path: R, body: rule({ kind: 'sometimes' }), status: 400, error: /^kind: / },
      {
        method: 'POST',
        path: R,
        body: rule({ kind: 'run_failed', params: { min_failed_percent: 101 } }),
        status: 400,
        error: /^params\.min_failed_percent: /,
      },
      {
        method: 'POST',
        path: R,
        body: rule({ webhook_ids: [initech] }),
        status: 400,
        error: `webhook_ids: ${initech} is not a webhook of this organization`,
      },
    ]);
    expect((await call(s, 'POST', R, { key: w.a.key, body: rule({ kind: 'competitor_overtakes', params: { competitor_id: globex } }) })).status).toBe(
      201,
    );
    await refusedWithoutWrite(s, w.a.scoped, [
      { method: 'POST', path: R, body: { ...rule(), website_id: w.a.a2 }, status: 403, error: 'Forbidden: global API key required' },
      { method: 'GET', path: '/api/v1/alerts', query: { website_id: w.a.a2 }, status: 403, error: 'Forbidden: global API key required' },
    ]);
    await refusedWithoutWrite(s, w.b.key, [{ method: 'POST', path: R, body: rule(), status: 403 }]);
  });
});

describe('alerts', () => {
  it('given a metric_change rule and a new import, then it fires once for (window end day, up): listed, in the feed, mailed, acknowledged', async () => {
    const made = await call(s, 'POST', R, { key: w.a.key, body: rule({ name: 'Up', emails: ['ops@example.com'] }) });
    const ruleId = made.body.rule.id;
    // the import is a trigger: the worker evaluates the website's rules
    await importAnswers(s, w.a.key, site.id, [
      { prompt_id: site.prompts[0].id, model: 'claude', run_at: '2026-03-10T12:00:00Z', text: 'Acme alone.' },
    ]);
    const alert = await waitFor(async () => {
      const r = await call(s, 'GET', '/api/v1/alerts', { key: w.a.key, query: { website_id: site.id } });
      return r.body.alerts.find((a: { rule_id: string }) => a.rule_id === ruleId);
    });
    expect(alert).toMatchObject({
      kind: 'metric_change',
      acknowledged_at: null,
      details: { window_end_day: '2026-03-10', direction: 'up', trigger: 'import' },
    });
    expect(alert.summary).toMatch(/^mention_rate of the brand went up /);

    // evaluated again (twice at once): the same window end day and direction fire nothing more
    const again = await Promise.all([evaluateWebsite(deps(), site.id, 'daily'), evaluateWebsite(deps(), site.id, 'daily')]);
    expect(again.flat().filter((a) => a.rule_id === ruleId)).toEqual([]);
    const listed = await call(s, 'GET', '/api/v1/alerts', { key: w.a.key, query: { website_id: site.id, status: 'open' } });
    expect(listed.body.alerts.filter((a: { rule_id: string }) => a.rule_id === ruleId)).toHaveLength(1);

    await caughtUp(s, ['activity']);
    const feed = await call(s, 'GET', '/api/v1/activity', { key: w.a.key, query: { entity_type: 'alert' } });
    expect(feed.body.data.some((e: { change_type: string; entity_ids: string[] }) => e.change_type === 'fired' && e.entity_ids[0] === alert.id)).toBe(
      true,
    );
    const mails = await s.rt.database.db('rm_emails').where({ organization_id: w.a.organization_id, template: 'alert' });
    expect(mails).toHaveLength(1);

    const acked = await call(s, 'POST', `/api/v1/alerts/${alert.id}/acknowledge`, { key: w.a.key });
    expect(acked.status).toBe(200);
    expect(acked.body.alert.acknowledged_at).not.toBeNull();
    expect((await call(s, 'POST', `/api/v1/alerts/${alert.id}/acknowledge`, { key: w.b.key })).status).toBe(404);
    const open = await call(s, 'GET', '/api/v1/alerts', { key: w.a.key, query: { website_id: site.id, status: 'open' } });
    expect(open.body.alerts.some((a: { id: string }) => a.id === alert.id)).toBe(false);
  });

  it('given an alert fired whose emails were never asked for (its instance died in between), when it fires again for that key, then each address is mailed once', async () => {
    const made = await call(s, 'POST', R, { key: w.a.key, body: rule({ name: 'Crashed', emails: ['one@example.com', 'two@example.com'] }) });
    const view = { ...made.body.rule, organization_id: w.a.organization_id };
    const ctx = { store: s.rt.store, organizationId: w.a.organization_id, websiteId: site.id, actor: SYSTEM_ACTOR };
    const finding = { key: '2026-03-10/up', summary: 'mention_rate went up', details: {} };
    // the fire without its mail: what an instance killed between the two leaves behind
    const fired = await fireAlert(ctx, view.id, finding.key, {
      website_id: site.id,
      kind: 'metric_change',
      fired_at: new Date().toISOString(),
      webhook_ids: [],
      ...finding,
    });
    if (!('result' in fired) || !fired.result.fired) throw new Error('the first fire appended nothing');
    const ids = ['one@example.com', 'two@example.com'].map((to) => emailIdForKey(w.a.organization_id, `alert-${fired.result.fired!.id}-${to}`));
    const mailed = () => s.rt.database.db('rm_emails').whereIn('email_id', ids);
    expect(await mailed()).toHaveLength(0);

    // the next evaluation finds the same key: nothing fires again, and the emails go out
    expect(await fire(deps(), view, finding, 'daily')).toBeNull();
    expect(await waitFor(async () => ((await mailed()).length === 2 ? true : undefined))).toBe(true);
    expect(await fire(deps(), view, finding, 'daily')).toBeNull();
    const alerts = await call(s, 'GET', '/api/v1/alerts', { key: w.a.key, query: { website_id: site.id } });
    expect(alerts.body.alerts.filter((a: { rule_id: string }) => a.rule_id === view.id)).toHaveLength(1);
    expect(await mailed()).toHaveLength(2);
  });

  it("given metric rules on the brand and a competitor over one window, then each alert's numbers are the period comparison's row of its entity", async () => {
    const globex = site.competitors[0].id;
    const made = async (name: string, params: object) => {
      const r = await call(s, 'POST', R, { key: w.a.key, body: rule({ name, params: { window_days: 5, ...params } }) });
      expect(r.status, JSON.stringify(r.body)).toBe(201);
      return r.body.rule.id as string;
    };
    // one window, three metrics: mentions and citations counted in one scan per period, each rule its own row
    const brandMentions = await made('Brand mentions', { metric: 'mention_rate' });
    const globexShare = await made('Globex share', { metric: 'share_of_voice', entity: globex });
    const globexCites = await made('Globex cites', { metric: 'citation_rate', entity: globex });
    const fired = await evaluateWebsite(deps(), site.id, 'daily', ['metric_change']);
    // a rule fired by an earlier evaluation (the worker's) is listed: read the alerts, not this call's answer
    const alertOf = (ruleId: string) =>
      waitFor(async () => {
        const r = await call(s, 'GET', '/api/v1/alerts', { key: w.a.key, query: { website_id: site.id, page_size: 100 } });
        return r.body.alerts.find((a: { rule_id: string }) => a.rule_id === ruleId);
      });
    const window = {
      current_start: '2026-03-06T00:00:00.000Z',
      current_end: '2026-03-10T23:59:59.999Z',
      previous_start: '2026-03-01T00:00:00.000Z',
      previous_end: '2026-03-05T23:59:59.999Z',
    };
    const compared = async (metric: string) => {
      const r = await call(s, 'GET', '/api/v1/metrics/compare', { key: w.a.key, query: { website_id: site.id, metric, ...window } });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      return r.body.data;
    };
    const mentions = await compared('mention_rate');
    const share = await compared('share_of_voice');
    const cites = await compared('citation_rate');
    // Acme named more often in the last five days than in the five before, Globex less
    expect(mentions.Acme).toMatchObject({ is_self: true, verdict: 'up' });
    expect(share.Globex).toMatchObject({ is_self: false, verdict: 'down' });
    expect((await alertOf(brandMentions)).details).toEqual({
      metric: 'mention_rate',
      entity: 'brand',
      window_end_day: '2026-03-10',
      direction: 'up',
      ...mentions.Acme,
      trigger: expect.any(String),
      rule_name: 'Brand mentions',
    });
    expect((await alertOf(globexShare)).details).toEqual({
      metric: 'share_of_voice',
      entity: globex,
      window_end_day: '2026-03-10',
      direction: 'down',
      ...share.Globex,
      trigger: expect.any(String),
      rule_name: 'Globex share',
    });
    // no citations in either window: no verdict, nothing fired
    expect(cites.Globex).toMatchObject({ current: 0, previous: 0 });
    expect(fired.filter((a) => a.rule_id === globexCites)).toEqual([]);
    const listed = await call(s, 'GET', '/api/v1/alerts', { key: w.a.key, query: { website_id: site.id, page_size: 100 } });
    expect(listed.body.alerts.filter((a: { rule_id: string }) => a.rule_id === globexCites)).toEqual([]);
  });

  it("given two evaluations at once of a new rule, then it fires once, delivered as alert.fired to the rule's webhook", async () => {
    const hook = await call(s, 'POST', '/api/v1/webhooks', {
      key: w.a.key,
      body: { url: 'https://hooks.example.com/a', event_types: ['topic.created'] },
    });
    expect(hook.status).toBe(201);
    const made = await call(s, 'POST', R, { key: w.a.key, body: rule({ name: 'Race', webhook_ids: [hook.body.webhook.id] }) });
    const ruleId = made.body.rule.id;
    const fired = await Promise.all(Array.from({ length: 4 }, () => evaluateWebsite(deps(), site.id, 'daily')));
    const listed = await waitFor(async () => {
      const r = await call(s, 'GET', '/api/v1/alerts', { key: w.a.key, query: { website_id: site.id } });
      const mine = r.body.alerts.filter((a: { rule_id: string }) => a.rule_id === ruleId);
      return mine.length ? mine : undefined;
    });
    expect(fired.flat().filter((a) => a.rule_id === ruleId).length).toBeLessThanOrEqual(1);
    expect(listed).toHaveLength(1);
    // the rule's webhook gets it whatever its event types, the same alert as the listing's
    const delivery = await waitFor(async () => {
      const rows = await s.rt.database.db('webhook_deliveries').where({ webhook_id: hook.body.webhook.id, event_type: 'alert.fired' });
      return rows.length ? rows : undefined;
    });
    expect(delivery).toHaveLength(1);
    expect(delivery[0].payload.data).toMatchObject({ id: listed[0].id, rule_id: ruleId, website_id: site.id });
  });

  it("given an access_changed rule, then the daily check records a baseline and fires once when an engine's access changes", async () => {
    const made = await call(s, 'POST', R, { key: w.a.key, body: { website_id: site.id, name: 'Access', kind: 'access_changed', params: {} } });
    expect(made.status).toBe(201);
    const check = (gptbot: boolean) => async (domain: string) => {
      expect(domain).toBe('acme-alert.example.com');
      const flags = (ok: boolean) => ({ conversational: ok, training: ok });
      return {
        result: {
          status: gptbot ? 'accessible' : 'partial',
          http: { chatgpt: flags(true), claude: flags(true) },
          robots: { chatgpt: flags(gptbot), claude: flags(true) },
        },
      } as never;
    };
    const run = (open: boolean) => evaluateWebsite({ ...deps(), checkAccess: check(open) }, site.id, 'daily', ['access_changed']);
    expect(await run(true)).toEqual([]);
    expect(await run(true)).toEqual([]);
    // a run's end does not fetch the website
    expect(await evaluateWebsite({ ...deps(), checkAccess: check(false) }, site.id, 'run_ended', ['access_changed'])).toEqual([]);
    const fired = await run(false);
    expect(fired).toHaveLength(1);
    expect(fired[0]).toMatchObject({ kind: 'access_changed', details: { changed: ['chatgpt'], status: 'partial' } });
    expect(await run(true)).toEqual([]);
  });

  it('given MCP, then list_alerts and acknowledge_alert answer as REST does', async () => {
    const r = await toolOk(mcp, 'list_alerts', { website_id: site.id });
    expect(r.alerts.length).toBeGreaterThan(0);
    const open = r.alerts.find((a: { acknowledged_at: string | null }) => a.acknowledged_at === null);
    const acked = await toolOk(mcp, 'acknowledge_alert', { alert_id: open.id });
    expect(acked.alert.acknowledged_at).not.toBeNull();
  });
});
