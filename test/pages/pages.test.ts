import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import Fastify, { type FastifyInstance } from 'fastify';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { barChart, stackedBar, table } from '../../src/pages/charts';
import { html, REFUSED_URL } from '../../src/pages/html';
import { contentSecurityPolicy, renderPage, sendPage } from '../../src/pages/layout';
import { DESKTOP, launchBrowser, PHONE, screenshotPage, visit } from '../support/browser';
import { BIDI_NAME, HOSTILE_NAME, sampleBody, sentimentSegments } from './sample-page';

describe('the page layout', () => {
  it('given a page, when rendered, then its stylesheet is the one the CSP allows by hash and nothing else may load', () => {
    const doc = renderPage({ title: 'T', body: html`<p>x</p>` });
    const css = /<style>([\s\S]*)<\/style>/.exec(doc)![1];
    const hash = createHash('sha256').update(css).digest('base64');
    const csp = contentSecurityPolicy();
    expect(csp).toContain(`style-src 'sha256-${hash}'`);
    expect(csp).toMatch(/^default-src 'none'; /);
    expect(csp).toContain("form-action 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(doc).toMatch(/^<!doctype html>\n<html lang="en">/);
    expect(doc).toContain('<meta name="viewport" content="width=device-width, initial-scale=1">');
    expect(doc).not.toContain('noindex');
  });

  it('given noindex and a refresh, when rendered, then robots are told and the page reloads itself without a script', () => {
    const doc = renderPage({ title: '<T>', body: html``, noindex: true, refreshSeconds: 10 });
    expect(doc).toContain('<meta name="robots" content="noindex, nofollow">');
    expect(doc).toContain('<meta http-equiv="refresh" content="10">');
    expect(doc).toContain('<title>&lt;T&gt;</title>');
    expect(doc).not.toContain('<script');
  });

  it('given a sign-in form that redirects to a client, when its origin is named, then form-action allows it', () => {
    expect(contentSecurityPolicy({ formActions: ['http://127.0.0.1:33418'] })).toContain("form-action 'self' http://127.0.0.1:33418");
  });
});

describe('the charts', () => {
  it('given bars, when drawn, then each is an accessible, escaped image with its data as text', () => {
    const svg = barChart({
      id: 'Share of voice',
      title: 'Share <by> competitor',
      bars: [
        { label: HOSTILE_NAME, value: 3 },
        { label: 'B', value: 6, highlight: true },
      ],
    }).toString();
    expect(svg).toContain('role="img" aria-labelledby="share-of-voice-title share-of-voice-desc"');
    expect(svg).toContain('<title id="share-of-voice-title">Share &lt;by&gt; competitor</title>');
    expect(svg).toContain(
      '<desc id="share-of-voice-desc">&lt;img src=x onerror=&quot;document.title=&#39;pwned&#39;&quot;&gt;Evil Corp: 3; B: 6</desc>',
    );
    expect(svg).not.toContain('<img');
    // the largest value is the full width unless a max is given
    expect(svg).toContain('class="bar self" x="0" y="70" width="100.00%"');
    expect(svg).toContain('class="bar" x="0" y="24" width="50.00%"');
  });

  it('given no bars, when drawn, then the chart says there is no data', () => {
    expect(barChart({ id: 'x', title: 't', bars: [] }).toString()).toContain('No data');
  });

  it('given sentiment counts, when stacked, then the parts add up to the whole width and the legend gives the shares', () => {
    const out = stackedBar({
      id: 's',
      title: 'Sentiment',
      segments: sentimentSegments(1, 2, 1),
    }).toString();
    const widths = [...out.matchAll(/<rect class="(?:positive|neutral|negative)" x="([\d.]+)%" y="0" width="([\d.]+)%"/g)].map((m) => [
      Number(m[1]),
      Number(m[2]),
    ]);
    expect(widths).toEqual([
      [0, 25],
      [25, 50],
      [75, 25],
    ]);
    expect(out).toContain('Neutral: <strong>2</strong> <span class="muted">(50%)</span>');
  });

  it('given a table, when drawn, then headers are column headers, numbers align right and cells are escaped', () => {
    const out = table({ caption: 'C', columns: [{ label: 'Name' }, { label: 'Count', numeric: true }], rows: [['<b>', 1234]] }).toString();
    expect(out).toContain('<th scope="col" class="num">Count</th>');
    expect(out).toContain('<td class="">&lt;b&gt;</td><td class="num">1,234</td>');
    expect(table({ caption: 'C', columns: [{ label: 'A' }], rows: [], empty: 'No sources yet' }).toString()).toContain('No sources yet');
  });
});

describe('pages in a real browser', () => {
  let app: FastifyInstance;
  let base: string;
  let browser: Browser;

  beforeAll(async () => {
    app = Fastify();
    app.get('/r/sample', (_req, reply) => sendPage(reply, { title: 'Zentro: AI visibility report', body: sampleBody('completed'), noindex: true }));
    app.get('/r/processing', (_req, reply) =>
      sendPage(reply, { title: 'Zentro: preparing', body: sampleBody('processing'), noindex: true, refreshSeconds: 2 }),
    );
    // pages that do what a page must not: the harness has to catch each
    app.get('/bad/inline-style', (_req, reply) => sendPage(reply, { title: 'bad', body: html`<p style="color:red">styled</p>` }));
    app.get('/bad/outside-image', (_req, reply) => sendPage(reply, { title: 'bad', body: html`<img src="${'https://cdn.example/x.png'}" alt="">` }));
    app.get('/bad/no-csp', (_req, reply) =>
      reply.type('text/html').send('<!doctype html><title>x</title><img src="http://127.0.0.2:9/x.png" alt="">'),
    );
    app.get('/bad/missing', (_req, reply) => reply.type('text/html').send('<!doctype html><title>x</title><img src="/nope.png" alt="">'));
    await app.listen({ host: '127.0.0.1', port: 0 });
    const addr = app.server.address();
    base = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
    browser = await launchBrowser();
  });

  afterAll(async () => {
    await browser?.close();
    await app?.close();
  });

  it('given the sample report, when opened on a phone, a desktop and in print, then nothing is blocked or fetched elsewhere, and screenshots are taken', async () => {
    const paths = await screenshotPage(browser, `${base}/r/sample`, 'sample-report');
    expect(paths).toHaveLength(3);
    for (const p of paths) expect(existsSync(p)).toBe(true);
  });

  it('given the sample report, when sent, then it carries the security headers', async () => {
    const res = await fetch(`${base}/r/sample`);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('content-security-policy')).toBe(contentSecurityPolicy());
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('referrer-policy')).toBe('no-referrer');
    expect(res.headers.get('x-frame-options')).toBe('DENY');
    expect(res.headers.get('x-robots-tag')).toBe('noindex, nofollow');
    expect(res.headers.get('cache-control')).toBe('no-store');
  });

  it('given hostile names and a script link, when the page is read by the browser, then they are text and the link goes nowhere', async () => {
    const v = await visit(browser, `${base}/r/sample`, PHONE);
    try {
      await v.assertClean();
      const page = v.page;
      expect(await page.title()).toBe('Zentro: AI visibility report');
      expect(await page.locator('img').count()).toBe(0);
      expect(await page.locator('td', { hasText: 'Evil Corp' }).first().textContent()).toBe(HOSTILE_NAME);
      // the bidi override is gone: the name reads in the order it was written
      expect(await page.locator('svg.chart text', { hasText: 'gnp.exe' }).first().textContent()).toBe(BIDI_NAME.replace('\u202E', ''));
      expect(await page.getByText('a link that must go nowhere').getAttribute('href')).toBe(REFUSED_URL);
      // charts are images with a name, for screen readers
      const names = await page.locator('svg[role="img"]').evaluateAll((els) => els.map((e) => e.querySelector('title')?.textContent));
      expect(names).toEqual(['Share of mentions by competitor', 'Sentiment of the answers that mention Zentro']);
      // nothing is wider than the phone's screen but the tables, which scroll inside their frame
      const overflow = await page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth');
      expect(overflow).toBe(0);
    } finally {
      await v.close();
    }
  });

  it('given a processing page, when left open, then it reloads itself with no script', async () => {
    await screenshotPage(browser, `${base}/r/processing`, 'sample-processing', [PHONE]);
    const v = await visit(browser, `${base}/r/processing`, DESKTOP);
    try {
      const reloaded = await v.page.waitForEvent('load', { timeout: 10_000 }).then(() => true);
      expect(reloaded).toBe(true);
      expect(await v.page.locator('script').count()).toBe(0);
      await v.assertClean();
    } finally {
      await v.close();
    }
  });

  it('given no Chromium where it is looked for, when the browser is launched, then the test fails saying how to install it', async () => {
    await expect(launchBrowser('/nonexistent/chromium')).rejects.toThrow(
      /Chromium not found at \/nonexistent\/chromium: .*apt-get install -y chromium/,
    );
  });

  for (const [path, problem] of [
    ['/bad/inline-style', /CSP violation: style-src-attr|Refused to apply inline style/],
    ['/bad/outside-image', /img-src|cdn\.example/],
    ['/bad/no-csp', /request to another origin: http:\/\/127\.0\.0\.2:9\/x\.png/],
    ['/bad/missing', /subresource .*\/nope\.png answered 404/],
  ] as const) {
    it(`given a page that breaks the rules (${path}), when visited, then the harness fails it`, async () => {
      const v = await visit(browser, `${base}${path}`, DESKTOP);
      try {
        await expect(v.assertClean()).rejects.toThrow(problem);
      } finally {
        await v.close();
      }
    });
  }
});
