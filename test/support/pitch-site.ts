/**
 * Prospects' home pages for the pitch tests, served on 127.0.0.1 and reached through the real safe fetcher (allowed
 * to reach the fixture, names answered by a fixed resolver): what the pitch worker researches.
 */
import type { ServerResponse } from 'node:http';
import { createSafeFetcher, type Outbound } from '../../src/net/safe-fetch';
import { allowLoopback, fakeResolver, startFixtureServer } from './net';

export const PROSPECT = 'zentro.example';
export const PROSPECT_NAME = 'Zentro';
export const PROSPECT_DESCRIPTION = 'Zentro is modern project management software for growing teams & agencies.';
/** answers 500 */
export const BROKEN = 'broken.example';
/** does not resolve */
export const UNRESOLVED = 'nowhere.example';
/** a page like any other, about which the answer engines of enginesRefusing (pitch-jobs.ts) refuse for good */
export const REFUSED = 'refused.example';
/** holds its answer until released */
export const SLOW = 'slow.example';
/** answers 503 to its first request, then its page */
export const FLAKY = 'flaky.example';
/** names itself with markup and a link that must stay text */
export const HOSTILE = 'evil.example';
export const HOSTILE_NAME = '<img src=x onerror="document.title=1">Evil';

const HOME = `<!doctype html><html><head>
<title>${PROSPECT_NAME} | Project management that flows</title>
<meta name="description" content="${PROSPECT_DESCRIPTION.replace('&', '&amp;')}">
</head><body><h1>Plan, track, ship.</h1><p>Loved by 10,000 teams.</p></body></html>`;

export interface PitchSites {
  outbound: Outbound;
  /** hosts asked, in order */
  requests: string[];
  /** lets every held request of SLOW answer */
  release(): void;
  close(): Promise<void>;
}

/** Any other name in `names` is served the prospect's page with its own name (a page per test organization). */
export async function startPitchSites(names: readonly string[] = []): Promise<PitchSites> {
  const requests: string[] = [];
  let held: ServerResponse[] = [];
  let released = false;
  const page = (name: string) => HOME.replaceAll(PROSPECT_NAME, name);
  const server = await startFixtureServer((req, res) => {
    const host = (req.headers.host ?? '').replace(/:\d+$/, '');
    requests.push(host);
    if (host === BROKEN) return void res.writeHead(500).end('down');
    if (host === FLAKY && requests.filter((h) => h === FLAKY).length === 1) return void res.writeHead(503).end('busy');
    if (host === SLOW && !released) return void held.push(res);
    if (host === HOSTILE) {
      const escaped = HOSTILE_NAME.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('"', '&quot;');
      return void res
        .writeHead(200, { 'content-type': 'text/html' })
        .end(`<title>${escaped}</title><meta name="description" content="&lt;script&gt;document.title=2&lt;/script&gt; javascript:alert(1)">`);
    }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(page(host === PROSPECT ? PROSPECT_NAME : host.split('.')[0]));
  });
  const hosts = [PROSPECT, BROKEN, SLOW, HOSTILE, FLAKY, REFUSED, ...names];
  const fetch = createSafeFetcher({ allowAddress: allowLoopback, resolver: fakeResolver(Object.fromEntries(hosts.map((h) => [h, ['127.0.0.1']]))) });
  return {
    outbound: { fetch, baseUrl: (d) => `http://${d}:${server.port}` },
    requests,
    release() {
      released = true;
      for (const res of held) res.writeHead(200, { 'content-type': 'text/html' }).end(page('Slowco'));
      held = [];
    },
    close: () => {
      for (const res of held) res.destroy();
      return server.close();
    },
  };
}
