import { describe, expect, it } from 'vitest';
import { fireAlert } from '../../commands/alerts/rule';
import { SYSTEM_ACTOR } from '../../src/domain/events';
import { buildSite, importAnswers, type Site, acmeAgainstGlobex } from '../support/answers';
import { call, type TestServer, sharedServer } from '../support/server';
import { until } from '../support/until';
import { useWorld, websiteTenancyChecks, type World } from '../support/tenancy';

let s: TestServer;
let w: World;
let site: Site;

/**
 * Brand Acme, competitor Globex. March 1-5 (the period before): Acme in 1 of 5 answers; March 6-10 (the report's
 * period): Acme in all 5 answers on chatgpt, Globex in 2; each of those cites acme-rp.example.com and retrieves g2.com.
 */
useWorld(async (ctx) => {
  ({ s, w } = ctx);
  site = await buildSite(s, w.a.key, acmeAgainstGlobex('rp'));
  const p1 = site.prompts[0].id;
  const items: object[] = [];
  for (let d = 1; d <= 10; d++) {
    const day = String(d).padStart(2, '0');
    const current = d >= 6;
    const acme = current || d === 1;
    const globex = current && d <= 7;
    const text = acme && globex ? 'Acme, then Globex.' : acme ? 'Acme alone.' : 'Nobody here.';
    items.push({
      prompt_id: p1,
      model: 'chatgpt',
      run_at: `2026-03-${day}T08:00:00Z`,
      text,
      citations: current ? ['https://acme-rp.example.com/pricing'] : [],
      retrieved: current ? ['https://g2.com/crm', 'https://acme-rp.example.com/pricing'] : [],
    });
  }
  await importAnswers(s, w.a.key, site.id, items);
}, sharedServer);

const create = (body: Record<string, unknown>, key = w.a.key) => call(s, 'POST', '/api/v1/reports', { key, body });
const page = async (url: string) => {
  const r = await fetch(url.replace(/^https?:\/\/[^/]+/, s.url));
  return { status: r.status, text: await r.text(), headers: r.headers };
};

describe('POST /api/v1/reports', () => {
  it('given a period, when a report is made, then 201 with its link, and the page shows the same numbers as the API, noindex, with nothing fetched', async () => {
    const r = await create({ website_id: site.id, start_date: '2026-03-06', end_date: '2026-03-10' });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    const rep = r.body.report;
    expect(rep).toMatchObject({ website_id: site.id, start_date: '2026-03-06', end_date: '2026-03-10', title: 'Acme: 2026-03-06 to 2026-03-10' });
    expect(rep.report_url).toMatch(/\/reports\/[A-Za-z0-9_-]{32}$/);

    const api = await call(s, 'POST', '/api/v1/metrics/mention-rate/cumulative', {
      key: w.a.key,
      body: { website_id: site.id, filters: { start_date: '2026-03-06', end_date: '2026-03-10' } },
    });
    expect(api.body.data.Acme.mention_rate).toBe(100);
    expect(api.body.data.Globex.mention_rate).toBe(40);

    const one = await call(s, 'GET', `/api/v1/reports/${rep.id}`, { key: w.a.key });
    const snap = one.body.report.snapshot;
    expect(snap.previous).toEqual({ start_date: '2026-03-01', end_date: '2026-03-05' });
    expect(snap.rates.find((x: { name: string }) => x.name === 'Acme')).toMatchObject({ mention_rate: 100, mentions: 5, responses: 5 });
    expect(snap.comparison.find((x: { name: string }) => x.name === 'Acme')).toMatchObject({ current: 100, previous: 20, change: 80, verdict: 'up' });
    expect(snap.share_of_voice_by_model.map((m: { model: string }) => m.model)).toEqual(['chatgpt']);
    expect(snap.trend).toHaveLength(5);
    expect(snap.sources).toContainEqual({ domain: 'acme-rp.example.com', retrieved: 5, cited: 5 });
    expect(snap.sources).toContainEqual({ domain: 'g2.com', retrieved: 5, cited: 0 });
    expect(snap.crawlers).toEqual([]);

    const p = await page(rep.report_url);
    expect(p.status).toBe(200);
    expect(p.headers.get('content-type')).toMatch(/^text\/html/);
    expect(p.headers.get('x-robots-tag')).toBe('noindex, nofollow');
    expect(p.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(p.text).toContain('<meta name="robots" content="noindex, nofollow">');
    expect(p.text).not.toMatch(/<script|src="http|href="http/);
    expect(p.text).toContain('Acme: 100.0%');
    expect(p.text).toContain('Globex: 40.0%');
    expect(p.text).toContain('+80.0 pts (up)');
    expect(p.text).toContain('g2.com');
    expect(p.text).toContain('No verified AI crawler visits in this period');
  });

  it('given a report, when new answers arrive for its period, then its page still shows the numbers taken at creation', async () => {
    const r = await create({ website_id: site.id, start_date: '2026-03-06', end_date: '2026-03-10', title: 'Frozen' });
    expect(r.status).toBe(201);
    await importAnswers(s, w.a.key, site.id, [
      { prompt_id: site.prompts[0].id, model: 'claude', run_at: '2026-03-08T09:00:00Z', text: 'Nobody here.' },
    ]);
    const p = await page(r.body.report.report_url);
    expect(p.text).toContain('<h1>Frozen</h1>');
    expect(p.text).toContain('Acme: 100.0%');
    expect(p.text).not.toContain('claude');
  });

  it('given alerts fired in and after the period, then the report lists those of the period only, escaped', async () => {
    const rule = await call(s, 'POST', '/api/v1/alert-rules', {
      key: w.a.key,
      body: { website_id: site.id, name: 'Watch', kind: 'metric_change', params: { metric: 'mention_rate' } },
    });
    expect(rule.status).toBe(201);
    const ctx = { store: s.rt.store, organizationId: w.a.organization_id, websiteId: site.id, actor: SYSTEM_ACTOR };
    const fired = (key: string, fired_at: string, summary: string) =>
      fireAlert(ctx, rule.body.rule.id, key, { website_id: site.id, kind: 'metric_change', fired_at, summary, details: {}, webhook_ids: [] });
    await fired('2026-03-08/up', '2026-03-08T09:00:00.000Z', 'mention_rate of the brand went up <b>40</b> points');
    await fired('2026-03-12/down', '2026-03-12T09:00:00.000Z', 'after the period');
    await until('both alerts listed', async () => {
      const listed = await call(s, 'GET', '/api/v1/alerts', { key: w.a.key, query: { website_id: site.id } });
      return listed.body.alerts.length === 2;
    });

    const r = await create({ website_id: site.id, start_date: '2026-03-06', end_date: '2026-03-10', title: 'With alerts' });
    expect(r.status).toBe(201);
    expect(r.body.report.snapshot.alerts).toEqual([
      { kind: 'metric_change', fired_at: '2026-03-08T09:00:00.000Z', summary: 'mention_rate of the brand went up <b>40</b> points' },
    ]);
    const p = await page(r.body.report.report_url);
    const section = p.text.match(/<section class="card" id="alerts">[\s\S]*?<\/section>/)![0];
    expect(section).toContain('mention_rate of the brand went up &lt;b&gt;40&lt;/b&gt; points');
    expect(section).toContain('2026-03-08 09:00');
    expect(section).not.toContain('after the period');
  });

  it('given a period with no answers, then every section says it has no data', async () => {
    const r = await create({ website_id: site.id, start_date: '2025-01-01', end_date: '2025-01-31' });
    expect(r.status).toBe(201);
    const p = await page(r.body.report.report_url);
    expect(p.status).toBe(200);
    for (const section of ['rates', 'share-of-voice', 'trend', 'sources', 'crawlers', 'alerts']) {
      expect(p.text).toMatch(new RegExp(`<section class="card" id="${section}">[\\s\\S]*?class="muted empty"`));
    }
  });

  for (const [name, body, message] of [
    ['inverted dates', { start_date: '2026-03-10', end_date: '2026-03-06' }, 'end_date: is before start_date (2026-03-10)'],
    ['more than 366 days', { start_date: '2025-01-01', end_date: '2026-01-02' }, 'end_date: must be at most 366 days after start_date'],
    ['a date that does not exist', { start_date: '2026-02-30', end_date: '2026-03-06' }, 'start_date: must be a date YYYY-MM-DD'],
    ['a date out of range', { start_date: '1999-12-31', end_date: '2000-01-02' }, 'start_date: must be between 2000-01-01 and 2099-12-31'],
    ['a missing end date', { start_date: '2026-03-06' }, 'end_date'],
    ['a title too long', { start_date: '2026-03-06', end_date: '2026-03-10', title: 'x'.repeat(201) }, 'title: must be at most 200 characters'],
  ] as const) {
    it(`given ${name}, then 400 naming the field and nothing written`, async () => {
      const before = await s.head();
      const r = await create({ website_id: site.id, ...body });
      expect(r.status, JSON.stringify(r.body)).toBe(400);
      expect(r.body.error).toContain(message);
      expect(await s.head()).toBe(before);
    });
  }

  it('366 days are allowed', async () => {
    const r = await create({ website_id: site.id, start_date: '2025-03-11', end_date: '2026-03-11' });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
  });

  websiteTenancyChecks(() => w, 'POST', '/api/v1/reports', { start_date: '2026-03-06', end_date: '2026-03-10' });
  websiteTenancyChecks(() => w, 'GET', '/api/v1/reports');
});

describe('GET and DELETE /api/v1/reports', () => {
  it('given a report, when it is deleted, then 204, it leaves the list and its link answers 404', async () => {
    const r = await create({ website_id: site.id, start_date: '2026-03-01', end_date: '2026-03-05', title: 'To delete' });
    const rep = r.body.report;
    const list = await call(s, 'GET', '/api/v1/reports', { key: w.a.key, query: { website_id: site.id } });
    expect(list.status).toBe(200);
    expect(list.body.reports.map((x: { id: string }) => x.id)).toContain(rep.id);

    const other = await call(s, 'DELETE', `/api/v1/reports/${rep.id}`, { key: w.b.key });
    expect(other.status).toBe(404);
    const scoped = await call(s, 'DELETE', `/api/v1/reports/${rep.id}`, { key: w.a.scoped });
    expect(scoped.status).toBe(403);

    const d = await call(s, 'DELETE', `/api/v1/reports/${rep.id}`, { key: w.a.key });
    expect(d.status).toBe(204);
    const after = await call(s, 'GET', '/api/v1/reports', { key: w.a.key, query: { website_id: site.id } });
    expect(after.body.reports.map((x: { id: string }) => x.id)).not.toContain(rep.id);
    const p = await page(rep.report_url);
    expect(p.status).toBe(404);
    expect(p.text).toContain('Report not found');
    expect((await call(s, 'DELETE', `/api/v1/reports/${rep.id}`, { key: w.a.key })).status).toBe(404);
  });

  it('given an unknown token, then the page is 404', async () => {
    expect((await page(`${s.url}/reports/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA`)).status).toBe(404);
    expect((await page(`${s.url}/reports/x`)).status).toBe(404);
  });
});
