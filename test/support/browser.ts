// Real-browser page tests: Debian's Chromium driven by playwright-core. A visit fails on any console error, page
// error, Content-Security-Policy violation, failed subresource or request to a host other than the server's.
import { existsSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { type Browser, type BrowserContext, chromium, type Page, type Response } from 'playwright-core';

/**
 * Debian's headless shell (package chromium-headless-shell: Chromium's engine without the browser around it, as
 * playwright runs headless by default) when it is there, else Debian's chromium: the same pages' tests spent about 20 s
 * of CPU with the shell against 36-37 s with the whole browser.
 */
export const CHROMIUM_PATH =
  process.env.CHROMIUM_PATH ?? ['/usr/bin/chromium-headless-shell', '/usr/bin/chromium'].find((p) => existsSync(p)) ?? '/usr/bin/chromium';
/** gitignored; CI may keep it as an artifact */
export const SCREENSHOT_DIR = resolve(process.env.SCREENSHOT_DIR ?? 'test-output/screenshots');

export interface Viewport {
  name: string;
  width: number;
  height: number;
  isMobile?: boolean;
  deviceScaleFactor?: number;
  /** render with print styles (at an A4 page's width) */
  print?: boolean;
}

export const PHONE: Viewport = { name: 'phone', width: 390, height: 844, isMobile: true, deviceScaleFactor: 2 };
export const DESKTOP: Viewport = { name: 'desktop', width: 1280, height: 800 };
export const PRINT: Viewport = { name: 'print', width: 794, height: 1123, print: true };

/** Starts Chromium; fails (never skips: CI installs it) with how to install it when it is missing. */
export async function launchBrowser(executablePath = CHROMIUM_PATH): Promise<Browser> {
  if (!existsSync(executablePath)) {
    throw new Error(
      `Chromium not found at ${executablePath}: page tests drive a real browser. Install Debian's package ` +
        '(`sudo apt-get install -y chromium-headless-shell`; .ci/run does it) or set CHROMIUM_PATH to a Chromium binary.',
    );
  }
  return chromium.launch({ executablePath });
}

export interface Visit {
  page: Page;
  /** the document's response */
  response: Response | null;
  /** what went wrong so far: console errors, page errors, CSP violations, outside requests, failed subresources */
  problems(): Promise<string[]>;
  /** throws listing every problem */
  assertClean(): Promise<void>;
  /** a full-page PNG in SCREENSHOT_DIR; the path is printed and returned */
  screenshot(name: string): Promise<string>;
  close(): Promise<void>;
}

/** Records CSP violations in the page; playwright injects it over the DevTools protocol, so the page's CSP allows it. */
const RECORD_CSP_VIOLATIONS = `
  window.__cspViolations = [];
  document.addEventListener('securitypolicyviolation', (e) => {
    window.__cspViolations.push(e.violatedDirective + ' blocked ' + (e.blockedURI || 'inline') + (e.sample ? ' (' + e.sample + ')' : ''));
  });
`;

/** Opens url in a fresh context at the viewport's size, watching for anything a public page must never do. */
export async function visit(browser: Browser, url: string, viewport: Viewport = DESKTOP): Promise<Visit> {
  const origin = new URL(url).origin;
  const context: BrowserContext = await browser.newContext({
    viewport: { width: viewport.width, height: viewport.height },
    deviceScaleFactor: viewport.deviceScaleFactor ?? 1,
    isMobile: viewport.isMobile ?? false,
    hasTouch: viewport.isMobile ?? false,
    javaScriptEnabled: true,
  });
  const seen: string[] = [];
  // recorded from the requests (a request the headless shell was redirected to is not routed), blocked where routed
  context.on('request', (r) => {
    if (new URL(r.url()).origin !== origin) seen.push(`request to another origin: ${r.url()}`);
  });
  await context.route('**/*', (route) => (new URL(route.request().url()).origin !== origin ? route.abort('blockedbyclient') : route.continue()));
  await context.addInitScript(RECORD_CSP_VIOLATIONS);
  const page = await context.newPage();
  let mainRequest: unknown = null;
  page.once('request', (r) => (mainRequest = r));
  page.on('console', (m) => {
    if (m.type() === 'error') seen.push(`console error: ${m.text()}`);
  });
  page.on('pageerror', (e) => seen.push(`page error: ${e.message}`));
  page.on('response', (r) => {
    if (r.request() !== mainRequest && r.status() >= 400) seen.push(`subresource ${r.url()} answered ${r.status()}`);
  });
  if (viewport.print) await page.emulateMedia({ media: 'print' });
  const response = await page.goto(url, { waitUntil: 'load' });

  const problems = async () => {
    const csp = (await page.evaluate('window.__cspViolations ?? []').catch(() => [])) as string[];
    return [...seen, ...csp.map((v) => `CSP violation: ${v}`)];
  };
  return {
    page,
    response,
    problems,
    async assertClean() {
      const p = await problems();
      if (p.length) throw new Error(`the page at ${url} (${viewport.name}) did what a page must not:\n  ${p.join('\n  ')}`);
    },
    async screenshot(name: string) {
      mkdirSync(SCREENSHOT_DIR, { recursive: true });
      const path = join(SCREENSHOT_DIR, `${name}-${viewport.name}.png`);
      await page.screenshot({ path, fullPage: true });
      console.log(`screenshot: ${path}`);
      return path;
    },
    close: () => context.close(),
  };
}

/** Visits url at each viewport (phone, desktop and print by default), asserts each is clean, screenshots each. */
export async function screenshotPage(
  browser: Browser,
  url: string,
  name: string,
  viewports: readonly Viewport[] = [PHONE, DESKTOP, PRINT],
): Promise<string[]> {
  const paths: string[] = [];
  for (const v of viewports) {
    const page = await visit(browser, url, v);
    try {
      await page.assertClean();
      paths.push(await page.screenshot(name));
      await page.assertClean();
    } finally {
      await page.close();
    }
  }
  return paths;
}
