import { describe, expect, it } from 'vitest';
import { claimPeriod } from '../../commands/reports/schedule';
import { appDepsOf } from '../../src/app/context';
import { CLAIM_TAKEOVER_MS, duePeriod, sendDueReports } from '../../src/app/report-schedules';
import { SYSTEM_ACTOR } from '../../src/domain/events';
import { createSafeFetcher } from '../../src/net/safe-fetch';
import { buildSite, importAnswers, type Site } from '../support/answers';
import { onRealPostgres } from '../support/db';
import { call, caughtUp, startServer, type TestServer } from '../support/server';
import type { TestSmtp } from '../support/smtp';
import { useWorldWithSmtp, websiteTenancyChecks, type World } from '../support/tenancy';
import { until } from '../support/until';

let s: TestServer;
let w: World;
let smtp: TestSmtp;
let site: Site;

const MAIL = { MAIL_FROM: 'aivis <no-reply@aivis.test>' };
const R = '/api/v1/report-schedules';
const DAY = 86_400_000;

useWorldWithSmtp(async (ctx) => {
  ({ s, w, smtp } = ctx);
  site = await buildSite(s, w.a.key, { name: 'Acme <b>&</b>', competitors: [{ name: 'Globex', url: 'https://globex-rs.example.net' }] });
  // one answer now: in the week and the month of the schedules the tests make
  await importAnswers(s, w.a.key, site.id, [
    { prompt_id: site.prompts[0].id, model: 'chatgpt', run_at: new Date(Date.now() - 60_000).toISOString(), text: 'Acme <b>&</b>, then Globex.' },
  ]);
});

const pass = (server: TestServer, now: Date) => sendDueReports(appDepsOf(server.rt, { fetch: createSafeFetcher() }), now);
const create = async (body: Record<string, unknown>, key = w.a.key) => call(s, 'POST', R, { key, body });
let n = 0;
/** Addresses no other test mails. */
const addresses = (count: number) => Array.from({ length: count }, () => `r${++n}@example.com`);
/**
 * Thursday noon (UTC) of the week after the creation's: the creation's Monday-to-Sunday week has ended, and an hour
 * or a few minutes later the same week is still the one due (8 days after a Saturday evening, an hour later is Monday).
 */
const weekAfter = (created: string, extraMs = 0) => {
  const c = new Date(created);
  const monday = Date.UTC(c.getUTCFullYear(), c.getUTCMonth(), c.getUTCDate()) - ((c.getUTCDay() + 6) % 7) * DAY;
  return new Date(monday + 10 * DAY + 12 * 3600_000 + extraMs);
};
const reportsOf = async () => (await call(s, 'GET', '/api/v1/reports', { key: w.a.key, query: { website_id: site.id } })).body.reports;

describe('report periods', () => {
  it('weekly: the last Monday-to-Sunday week that has ended, once it ended on or after the creation day', () => {
    const created = new Date('2026-11-25T10:00:00Z'); // a Wednesday
    expect(duePeriod('weekly', created, new Date('2026-11-29T23:59:00Z'))).toBeNull();
    expect(duePeriod('weekly', created, new Date('2026-11-30T00:01:00Z'))).toEqual({
      key: 'weekly:2026-11-23',
      start_date: '2026-11-23',
      end_date: '2026-11-29',
    });
    expect(duePeriod('weekly', created, new Date('2026-12-03T12:00:00Z'))?.key).toBe('weekly:2026-11-23');
    expect(duePeriod('weekly', created, new Date('2026-12-08T12:00:00Z'))?.key).toBe('weekly:2026-11-30');
  });

  it('monthly: the last calendar month that has ended', () => {
    const created = new Date('2026-02-10T10:00:00Z');
    expect(duePeriod('monthly', created, new Date('2026-02-28T23:00:00Z'))).toBeNull();
    expect(duePeriod('monthly', created, new Date('2026-03-01T00:00:00Z'))).toEqual({
      key: 'monthly:2026-02',
      start_date: '2026-02-01',
      end_date: '2026-02-28',
    });
    expect(duePeriod('monthly', new Date('2026-12-31T10:00:00Z'), new Date('2027-01-05T00:00:00Z'))).toEqual({
      key: 'monthly:2026-12',
      start_date: '2026-12-01',
      end_date: '2026-12-31',
    });
  });
});

describe('POST, GET, PATCH and DELETE /api/v1/report-schedules', () => {
  it('given a schedule, then it is listed, read, changed and deleted; another organization sees none of it', async () => {
    const made = await create({ website_id: site.id, frequency: 'weekly', recipients: ['a@example.com', 'b@example.com', 'a@example.com'] });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    const sc = made.body.schedule;
    expect(sc).toMatchObject({ website_id: site.id, frequency: 'weekly', recipients: ['a@example.com', 'b@example.com'], last_sent: null });

    const list = await call(s, 'GET', R, { key: w.a.key, query: { website_id: site.id } });
    expect(list.body.schedules.map((x: { id: string }) => x.id)).toContain(sc.id);
    expect((await call(s, 'GET', `${R}/${sc.id}`, { key: w.a.key })).body.schedule.id).toBe(sc.id);

    const patched = await call(s, 'PATCH', `${R}/${sc.id}`, { key: w.a.key, body: { frequency: 'monthly', recipients: ['c@example.com'] } });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    expect(patched.body.schedule).toMatchObject({ frequency: 'monthly', recipients: ['c@example.com'] });

    const before = await s.head();
    for (const [method, body] of [['GET'], ['PATCH', { frequency: 'weekly' }], ['DELETE']] as const) {
      expect((await call(s, method, `${R}/${sc.id}`, { key: w.b.key, body })).status).toBe(404);
      expect((await call(s, method, `${R}/${sc.id}`, { key: w.a.scoped, body })).status).toBe(403);
    }
    expect(await s.head()).toBe(before);

    expect((await call(s, 'DELETE', `${R}/${sc.id}`, { key: w.a.key })).status).toBe(204);
    const after = await call(s, 'GET', R, { key: w.a.key, query: { website_id: site.id } });
    expect(after.body.schedules.map((x: { id: string }) => x.id)).not.toContain(sc.id);
    expect((await call(s, 'DELETE', `${R}/${sc.id}`, { key: w.a.key })).status).toBe(404);

    await caughtUp(s, ['activity']);
    const feed = await call(s, 'GET', '/api/v1/activity', { key: w.a.key, query: { website_id: site.id, entity_type: 'report_schedule' } });
    const mine = feed.body.data.filter((e: { entity_ids: string[] }) => e.entity_ids.includes(sc.id));
    expect(mine.map((e: { change_type: string }) => e.change_type)).toEqual(['deleted', 'updated', 'created']);
  });

  for (const [name, body, message] of [
    ['no recipients', { recipients: [] }, 'recipients: must list 1 to 20 email addresses'],
    ['21 recipients', { recipients: Array.from({ length: 21 }, (_, i) => `x${i}@example.com`) }, 'recipients: must list 1 to 20 email addresses'],
    ['a recipient that is not an email', { recipients: ['ok@example.com', 'nope'] }, 'recipients[1]: must be an email address'],
    ['a frequency that is not weekly or monthly', { frequency: 'daily' }, 'frequency: must be weekly or monthly'],
    ['no recipients at all', { recipients: undefined }, 'recipients'],
  ] as const) {
    it(`given ${name}, then 400 naming the field and nothing written`, async () => {
      const before = await s.head();
      const base: Record<string, unknown> = { website_id: site.id, frequency: 'weekly', recipients: ['ok@example.com'] };
      const r = await create({ ...base, ...body });
      expect(r.status, JSON.stringify(r.body)).toBe(400);
      expect(r.body.error).toContain(message);
      expect(await s.head()).toBe(before);
    });
  }

  it('given a schedule, when a PATCH lists 21 recipients, then 400 and the schedule is unchanged', async () => {
    const sc = (await create({ website_id: site.id, frequency: 'weekly', recipients: ['keep@example.com'] })).body.schedule;
    const before = await s.head();
    const r = await call(s, 'PATCH', `${R}/${sc.id}`, {
      key: w.a.key,
      body: { recipients: Array.from({ length: 21 }, (_, i) => `x${i}@example.com`) },
    });
    expect(r.status).toBe(400);
    expect(r.body.error).toContain('recipients: must list 1 to 20 email addresses');
    expect(await s.head()).toBe(before);
    expect((await call(s, 'GET', `${R}/${sc.id}`, { key: w.a.key })).body.schedule.recipients).toEqual(['keep@example.com']);
  });

  websiteTenancyChecks(() => w, 'POST', R, { frequency: 'weekly', recipients: ['t@example.com'] });
  websiteTenancyChecks(() => w, 'GET', R);
});

describe('sending each period', () => {
  it('given a weekly schedule, when its week ends, then one report is made and each recipient gets one email of tables with its link', async () => {
    const to = addresses(2);
    const sc = (await create({ website_id: site.id, frequency: 'weekly', recipients: to })).body.schedule;
    // the week has not ended yet
    expect(await pass(s, new Date(Date.parse(sc.created_at) + 1000))).not.toContain(sc.id);

    const later = weekAfter(sc.created_at);
    expect(await pass(s, later)).toContain(sc.id);
    expect(await pass(s, new Date(later.getTime() + 3600_000))).not.toContain(sc.id);

    const period = duePeriod('weekly', new Date(sc.created_at), later)!;
    const read = await until('the period recorded as sent', async () => {
      const r = (await call(s, 'GET', `${R}/${sc.id}`, { key: w.a.key })).body.schedule;
      return r.last_sent ? r : false;
    });
    expect(read.last_sent.period).toBe(period.key);
    const made = (await reportsOf()).filter((r: { id: string }) => r.id === read.last_sent.report_id);
    expect(made).toHaveLength(1);
    expect(made[0]).toMatchObject({
      title: `Acme <b>&</b>: weekly report, ${period.start_date} to ${period.end_date}`,
      start_date: period.start_date,
      end_date: period.end_date,
    });

    for (const address of to) {
      const [m] = await smtp.waitFor(address, 1, 20_000);
      const htmlPart = String(m.mail.html);
      expect(htmlPart).toContain('<table');
      expect(htmlPart).toContain('Acme &lt;b&gt;&amp;&lt;/b&gt;');
      expect(htmlPart).toContain(`href="${made[0].report_url}"`);
      expect(htmlPart).not.toMatch(/<img|<script|src=/i);
      expect(m.mail.text).toContain(made[0].report_url);
      expect(m.mail.text).toMatch(/Mention rate\n.*Brand/);
      expect(m.mail.subject).toContain('weekly report');
    }
    const page = await fetch(made[0].report_url.replace(/^https?:\/\/[^/]+/, s.url));
    expect(page.status).toBe(200);
    // nothing more for anyone, later
    await pass(s, new Date(later.getTime() + 2 * 3600_000));
    for (const address of to) expect(smtp.to(address)).toHaveLength(1);
  });

  it('given the server was down when the week ended, when it passes four days late, then that week is still sent, once', async () => {
    const [to] = addresses(1);
    const sc = (await create({ website_id: site.id, frequency: 'weekly', recipients: [to] })).body.schedule;
    const period = duePeriod('weekly', new Date(sc.created_at), weekAfter(sc.created_at))!;
    const late = new Date(Date.parse(`${period.end_date}T00:00:00Z`) + 5 * DAY);
    expect(duePeriod('weekly', new Date(sc.created_at), late)?.key).toBe(period.key);
    expect(await pass(s, late)).toContain(sc.id);
    expect(await pass(s, new Date(late.getTime() + 60_000))).not.toContain(sc.id);
    await smtp.waitFor(to, 1, 20_000);
    expect(smtp.to(to)).toHaveLength(1);
  });

  it('given a deleted schedule, then its period sends nothing', async () => {
    const [to] = addresses(1);
    const sc = (await create({ website_id: site.id, frequency: 'weekly', recipients: [to] })).body.schedule;
    expect((await call(s, 'DELETE', `${R}/${sc.id}`, { key: w.a.key })).status).toBe(204);
    expect(await pass(s, weekAfter(sc.created_at))).not.toContain(sc.id);
    expect(smtp.dataCount(to)).toBe(0);
  });
});

describe("a website's deletion", () => {
  it('given a website with a report and a schedule, when it is deleted, then the link answers 404 and the schedule sends nothing', async () => {
    const other = await buildSite(s, w.a.key, { name: 'Doomed' });
    const rep = await call(s, 'POST', '/api/v1/reports', {
      key: w.a.key,
      body: { website_id: other.id, start_date: '2026-03-01', end_date: '2026-03-05' },
    });
    expect(rep.status).toBe(201);
    const link = rep.body.report.report_url.replace(/^https?:\/\/[^/]+/, s.url);
    expect((await fetch(link)).status).toBe(200);
    const [to] = addresses(1);
    const sc = (await create({ website_id: other.id, frequency: 'weekly', recipients: [to] })).body.schedule;

    expect((await call(s, 'DELETE', `/api/v1/websites/${other.id}`, { key: w.a.key })).status).toBe(200);
    expect((await fetch(link)).status).toBe(404);
    expect(await pass(s, weekAfter(sc.created_at))).not.toContain(sc.id);
    expect(smtp.dataCount(to)).toBe(0);
  });
});

(onRealPostgres ? describe : describe.skip)('two instances and a restart', () => {
  it('given two instances passing at once, then one report and one email per recipient', async () => {
    const b = await startServer({ SMTP_URL: smtp.url, ...MAIL }, {}, s);
    try {
      const to = addresses(3);
      const sc = (await create({ website_id: site.id, frequency: 'monthly', recipients: to })).body.schedule;
      const created = new Date(sc.created_at);
      const later = new Date(Date.UTC(created.getUTCFullYear(), created.getUTCMonth() + 1, 2));
      const passes = await Promise.all([pass(s, later), pass(b, later), pass(s, later), pass(b, later)]);
      expect(passes.filter((p) => p.includes(sc.id))).toHaveLength(1);
      const period = duePeriod('monthly', created, later)!;
      for (const address of to) await smtp.waitFor(address, 1, 20_000);
      // the outbox has had time to send any second copy
      await pass(b, new Date(later.getTime() + CLAIM_TAKEOVER_MS + 60_000));
      const made = (await reportsOf()).filter((r: { title: string }) => r.title.includes(`monthly report, ${period.start_date}`));
      expect(made).toHaveLength(1);
      for (const address of to) expect(smtp.to(address)).toHaveLength(1);
    } finally {
      await b.close();
    }
  });

  it('given an instance that claimed a period and died, when another passes, then it waits for the claim to lapse and sends once', async () => {
    const [to] = addresses(1);
    const sc = (await create({ website_id: site.id, frequency: 'weekly', recipients: [to] })).body.schedule;
    const later = weekAfter(sc.created_at);
    const period = duePeriod('weekly', new Date(sc.created_at), later)!;
    // the instance that dies: it claims the period, then stops before making the report
    const dying = await startServer({ SMTP_URL: smtp.url, ...MAIL }, {}, s);
    const ctx = { store: dying.rt.store, organizationId: w.a.organization_id, websiteId: site.id, actor: SYSTEM_ACTOR, now: () => later };
    const claim = await claimPeriod(ctx, sc.id, period);
    expect('result' in claim && claim.result.claimed).toBe(true);
    await dying.close();

    const restarted = await startServer({ SMTP_URL: smtp.url, ...MAIL }, {}, s);
    try {
      expect(await pass(restarted, new Date(later.getTime() + 60_000))).not.toContain(sc.id);
      expect(smtp.dataCount(to)).toBe(0);
      const lapsed = new Date(later.getTime() + CLAIM_TAKEOVER_MS + 1000);
      expect(await pass(restarted, lapsed)).toContain(sc.id);
      expect(await pass(s, new Date(lapsed.getTime() + 60_000))).not.toContain(sc.id);
      await smtp.waitFor(to, 1, 20_000);
      expect(smtp.to(to)).toHaveLength(1);
    } finally {
      await restarted.close();
    }
  });
});
