import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MODELS } from '../../src/domain/models';
import { join } from 'node:path';
import { launchBrowser, PHONE, SCREENSHOT_DIR, screenshotPage, visit } from '../support/browser';
import { enginesRefusing } from '../support/pitch-jobs';
import { HOSTILE, HOSTILE_NAME, PROSPECT, PROSPECT_NAME, type PitchSites, REFUSED, SLOW, startPitchSites, UNRESOLVED } from '../support/pitch-site';
import { call, startServer, type TestServer } from '../support/server';
import { until } from '../support/until';

let s: TestServer;
let sites: PitchSites;
let browser: Browser;
let org: { key: string; organization_id: string };
beforeAll(async () => {
  sites = await startPitchSites();
  s = await startServer({}, { outbound: sites.outbound }, undefined, { engines: enginesRefusing(REFUSED) });
  org = await s.org('Pages');
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await s?.close();
  await sites?.close();
});

let n = 0;
const create = async (website_url: string) => {
  const r = await call(s, 'POST', '/api/v1/pitches', { key: org.key, body: { website_url }, headers: { 'Idempotency-Key': `page-${++n}` } });
  expect(r.status).toBe(202);
  // the page is served by this server whatever PUBLIC_BASE_URL says: its path is the report's
  return { id: r.body.pitch_id as string, url: `${s.url}${new URL(r.body.report_url).pathname}` };
};
const ended = (id: string) =>
  until(`pitch ${id} to end`, async () => {
    const r = await call(s, 'GET', `/api/v1/pitches/${id}`, { key: org.key });
    return r.body.pitch.status !== 'processing' && r.body;
  });

/** One completed report on the prospect, made by the first test that asks: the tests that only read it share it. */
let prospect: Promise<{ id: string; url: string; report: any }> | undefined;
const completed = () =>
  (prospect ??= (async () => {
    const { id, url } = await create(PROSPECT);
    return { id, url, report: await ended(id) };
  })());

// three viewports with full-page screenshots: several seconds of Chromium CPU each on a slow 2-core machine
describe('the public report page', { timeout: 60_000 }, () => {
  it('given a completed report, when opened without a key on a phone, a desktop and in print, then every block is drawn and nothing is fetched elsewhere', async () => {
    const { id, url, report } = await completed();
    expect(report.pitch.status).toBe('completed');
    const paths = await screenshotPage(browser, url, 'pitch-completed');
    expect(paths).toHaveLength(3);

    const res = await fetch(url);
    expect(res.status).toBe(200);
    expect(res.headers.get('x-robots-tag')).toBe('noindex, nofollow');
    expect(res.headers.get('content-security-policy')).toMatch(/^default-src 'none'/);
    const page = await res.text();
    expect(page).toContain('<meta name="robots" content="noindex, nofollow">');
    expect(page).not.toContain('http-equiv="refresh"');
    expect(page).not.toContain('<script');
    for (const heading of ['Share of mentions by competitor', 'Sentiment', 'Sources the answers cite', 'What the answers say', 'Models', 'Prompts']) {
      expect(page).toContain(`<h2>${heading}</h2>`);
    }
    expect(page).toContain(PROSPECT_NAME);
    for (const c of report.competitors) expect(page).toContain(c.name);
    for (const src of report.sources) expect(page).toContain(src.domain);
    for (const p of report.prompts) expect(page).toContain(p.prompt.replaceAll("'", '&#39;'));
    for (const m of MODELS) expect(page).toContain(m.label);
    expect(page.match(/not measured/g)).toHaveLength(MODELS.length - 4);
    // nothing of the organization, the key or the report's internal ids
    for (const secret of [
      org.key,
      org.organization_id,
      id,
      ...report.competitors.map((c: { id: string }) => c.id),
      ...report.prompts.map((p: { id: string }) => p.id),
    ]) {
      expect(page).not.toContain(secret);
    }
  });

  it('given a completed report on a phone, then nothing overflows the screen sideways', async () => {
    const { url, report } = await completed();
    expect(report.pitch.status).toBe('completed');
    const v = await visit(browser, url, PHONE);
    try {
      await v.assertClean();
      expect(await v.page.evaluate('document.documentElement.scrollWidth <= window.innerWidth')).toBe(true);
      // each card at phone size, to look at
      const cards = v.page.locator('section.card');
      for (let i = 0; i < (await cards.count()); i++) {
        const path = join(SCREENSHOT_DIR, `pitch-phone-card-${i + 1}.png`);
        await cards.nth(i).screenshot({ path });
        console.log(`screenshot: ${path}`);
      }
    } finally {
      await v.close();
    }
  });

  /** What no state of the page may show: the organization's key and id, the report's id (its token is the address). */
  const nothingInternal = (page: string, id: string) => {
    for (const secret of [org.key, org.organization_id, id]) expect(page).not.toContain(secret);
  };

  it('given a report still processing, when opened, then it says so and refreshes itself every 10 seconds', async () => {
    const { id, url } = await create(SLOW);
    const res = await fetch(url);
    expect(res.headers.get('x-robots-tag')).toBe('noindex, nofollow');
    const page = await res.text();
    expect(page).toContain('<meta http-equiv="refresh" content="10">');
    expect(page).toContain('Researching');
    expect(page).toContain(SLOW);
    expect(page).toContain('<meta name="robots" content="noindex, nofollow">');
    nothingInternal(page, id);
    await screenshotPage(browser, url, 'pitch-processing');
    sites.release();
  });

  it('given a failed report, when opened, then it says it could not be completed', async () => {
    const { id, url } = await create(REFUSED);
    expect((await ended(id)).pitch.status).toBe('failed');
    const res = await fetch(url);
    expect(res.headers.get('x-robots-tag')).toBe('noindex, nofollow');
    const page = await res.text();
    expect(page).toContain('This report could not be completed');
    expect(page).toContain('the provider key was refused');
    expect(page).not.toContain('http-equiv="refresh"');
    expect(page).toContain('<meta name="robots" content="noindex, nofollow">');
    nothingInternal(page, id);
    await screenshotPage(browser, url, 'pitch-failed');
  });

  it('given a prospect whose domain does not resolve, when its completed report is opened, then every block is drawn and a note says the website could not be read', async () => {
    const { id, url } = await create(UNRESOLVED);
    const report = await ended(id);
    expect(report.pitch.status).toBe('completed');
    const page = await (await fetch(url)).text();
    expect(page).toContain('<p class="notice research-note">The website could not be read: the domain does not resolve.');
    for (const heading of ['Share of mentions by competitor', 'Sentiment', 'Sources the answers cite', 'What the answers say', 'Models', 'Prompts']) {
      expect(page).toContain(`<h2>${heading}</h2>`);
    }
    for (const c of report.competitors) expect(page).toContain(c.name);
    nothingInternal(page, id);
    await screenshotPage(browser, url, 'pitch-unreadable');
  });

  it('given a prospect whose page names it with markup, then the report shows the text and runs nothing', async () => {
    const { id, url } = await create(HOSTILE);
    const report = await ended(id);
    expect(report.pitch.company_name).toBe(HOSTILE_NAME);
    const page = await (await fetch(url)).text();
    expect(page).not.toContain('<img');
    expect(page).not.toContain('<script');
    expect(page).toContain('&lt;img src=x onerror=&quot;document.title=1&quot;&gt;Evil');
    const v = await visit(browser, url);
    try {
      await v.assertClean();
      expect(await v.page.title()).toContain('Evil');
      expect(await v.page.locator('h1').textContent()).toContain(HOSTILE_NAME);
    } finally {
      await v.close();
    }
  });

  it('given an unknown or malformed token, then 404 and a page that says so, noindex', async () => {
    for (const token of ['A'.repeat(32), 'x', '..%2F..%2Fetc']) {
      const res = await fetch(`${s.url}/r/${token}`);
      expect(res.status).toBe(404);
      expect(res.headers.get('x-robots-tag')).toBe('noindex, nofollow');
      expect(await res.text()).toContain('Report not found');
    }
  });
});
