import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildSite, importAnswers } from '../support/answers';
import { DESKTOP, launchBrowser, PRINT, SCREENSHOT_DIR, visit } from '../support/browser';
import { call, sharedServer, type TestServer } from '../support/server';

let s: TestServer;
let browser: Browser;
let org: { key: string; organization_id: string };
beforeAll(async () => {
  s = await sharedServer();
  org = await s.org('Reports');
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await s?.close();
});

const SECTIONS = ['rates', 'comparison', 'share-of-voice', 'trend', 'sources', 'crawlers', 'alerts'];

describe('the website report page in Chromium', () => {
  it('given a report, when opened without a key, then no console error, nothing fetched elsewhere, every chart named, the figures equal the API, and it prints on A4', async () => {
    const site = await buildSite(s, org.key, {
      name: 'Acme',
      url: 'https://acme-pg.example.com',
      competitors: [{ name: 'Globex', url: 'https://globex-pg.example.net' }],
      prompts: [{ text: 'p1' }],
    });
    const items: object[] = [];
    for (let d = 1; d <= 14; d++)
      for (const model of ['chatgpt', 'claude'])
        items.push({
          prompt_id: site.prompts[0].id,
          model,
          run_at: `2026-04-${String(d).padStart(2, '0')}T08:00:00Z`,
          text: d % 3 === 0 ? 'Globex only.' : d % 2 ? 'Acme, then Globex.' : 'Acme alone.',
          citations: ['https://acme-pg.example.com/docs'],
          retrieved: ['https://g2.com/crm'],
        });
    await importAnswers(s, org.key, site.id, items);
    const r = await call(s, 'POST', '/api/v1/reports', {
      key: org.key,
      body: { website_id: site.id, start_date: '2026-04-08', end_date: '2026-04-14' },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    const url = `${s.url}${new URL(r.body.report.report_url).pathname}`;
    const api = await call(s, 'POST', '/api/v1/metrics/mention-rate/cumulative', {
      key: org.key,
      body: { website_id: site.id, filters: { start_date: '2026-04-08', end_date: '2026-04-14' } },
    });
    expect(api.status).toBe(200);

    const v = await visit(browser, url, DESKTOP);
    try {
      await v.assertClean();
      const charts = await v.page.locator('svg[role="img"]').all();
      expect(charts.length).toBeGreaterThanOrEqual(4);
      for (const chart of charts) {
        const ids = ((await chart.getAttribute('aria-labelledby')) ?? '').split(' ').filter(Boolean);
        expect(ids.length).toBeGreaterThan(0);
        const parts = await Promise.all(ids.map((id) => v.page.locator(`[id="${id}"]`).textContent()));
        const name = parts.join(' ').trim();
        expect(name.length).toBeGreaterThan(5);
      }
      expect(await v.page.getByRole('img', { name: 'Mention rate by brand' }).count()).toBe(1);
      expect(await v.page.getByRole('img', { name: /Daily mention rate of Acme/ }).count()).toBe(1);
      // the rates table's figures are the API's
      const rows = await v.page
        .locator('#rates table tbody tr')
        .evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent)));
      expect(rows).toHaveLength(Object.keys(api.body.data).length);
      for (const [name, value] of Object.entries<{ mention_rate: number; sample: { mention_rate: { numerator: number; denominator: number } } }>(
        api.body.data,
      )) {
        const row = rows.find((x) => x[0] === name);
        expect(row, name).toBeDefined();
        expect(row?.slice(1, 4)).toEqual([
          String(value.sample.mention_rate.numerator),
          String(value.sample.mention_rate.denominator),
          `${value.mention_rate.toFixed(1)}%`,
        ]);
      }
      await v.assertClean();
    } finally {
      await v.close();
    }

    const p = await visit(browser, url, PRINT);
    try {
      for (const id of SECTIONS) {
        const box = await p.page.locator(`section#${id}`).boundingBox();
        expect(box, id).not.toBeNull();
        expect(box?.width ?? 0, id).toBeGreaterThan(0);
      }
      const pdf = await p.page.pdf({ format: 'A4', printBackground: true });
      mkdirSync(SCREENSHOT_DIR, { recursive: true });
      writeFileSync(join(SCREENSHOT_DIR, 'website-report.pdf'), pdf);
      expect(pdf.subarray(0, 5).toString()).toBe('%PDF-');
      const text = pdf.toString('latin1');
      // A4 is 595 x 842 points
      expect(text).toMatch(/\/MediaBox\s*\[\s*0\s+0\s+595(\.\d+)?\s+841(\.\d+)?|\/MediaBox\s*\[\s*0\s+0\s+595(\.\d+)?\s+842/);
      expect((text.match(/\/Type\s*\/Page[^s]/g) ?? []).length).toBeGreaterThanOrEqual(2);
      await p.assertClean();
    } finally {
      await p.close();
    }
  });
});
