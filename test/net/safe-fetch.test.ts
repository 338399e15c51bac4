import type http from 'node:http';
import { gzipSync } from 'node:zlib';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createSafeFetcher, isPublicAddress, SafeFetchError, type SafeFetcherOptions } from '../../src/net/safe-fetch';
import { allowLoopback, fakeResolver, guardConnections, startFixtureServer, type FixtureServer } from '../support/net';
import { rejection } from '../support/rejection';

// Every test resolver answers from this table only: no test ever asks a real DNS server.
const lookup = fakeResolver({
  'site.test': ['127.0.0.1'],
  'other.test': ['127.0.0.1'],
  'intranet.test': ['10.0.0.7'],
  'metadata.test': ['169.254.169.254'],
  'mixed.test': ['127.0.0.1', '10.0.0.8'],
  'ula.test': ['fd00::1'],
  'mapped.test': ['::ffff:192.168.1.1'],
  'empty.test': [],
});
const resolved: string[] = [];
const testResolver = async (hostname: string): Promise<string[]> => {
  resolved.push(hostname);
  return lookup(hostname);
};
const fetcher = (opts: SafeFetcherOptions = {}) => createSafeFetcher({ resolver: testResolver, allowAddress: allowLoopback, ...opts });

// Records every address any client socket in this process tries to connect to.
// Hard rule: nothing in this file may try to reach anything but loopback.
const { attempts } = guardConnections();

let server: FixtureServer;
let port: number;
const hits: Array<{ host: string; url: string; headers: http.IncomingHttpHeaders }> = [];

function route(req: http.IncomingMessage, res: http.ServerResponse): void {
  const path = req.url ?? '/';
  if (path === '/ok') {
    res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8', 'x-cache': 'HIT', 'set-cookie': ['a=1', 'b=2'] });
    res.end('hello ✓');
  } else if (path === '/redirect-relative') {
    res.writeHead(302, { location: '/ok' }).end();
  } else if (path === '/redirect-other-host') {
    res.writeHead(301, { location: `http://other.test:${port}/echo` }).end();
  } else if (path === '/echo') {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ method: req.method, authorization: req.headers.authorization ?? null, ua: req.headers['user-agent'] }));
  } else if (path.startsWith('/loop')) {
    const n = Number(path.slice(5) || '0');
    res.writeHead(302, { location: `/loop${n + 1}` }).end();
  } else if (path.startsWith('/to?')) {
    res.writeHead(302, { location: decodeURIComponent(path.slice(4)) }).end();
  } else if (path === '/see-other') {
    res.writeHead(303, { location: '/echo' }).end();
  } else if (path === '/big') {
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end('x'.repeat(10_000));
  } else if (path === '/gzip') {
    res.writeHead(200, { 'content-type': 'text/plain', 'content-encoding': 'gzip' });
    res.end(gzipSync('compressed body'));
  } else if (path === '/hang') {
    // never answers
  } else if (path === '/slow-body') {
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.write('first part');
    // never ends
  } else {
    res.writeHead(404).end('not found');
  }
}

beforeAll(async () => {
  server = await startFixtureServer((req, res) => {
    hits.push({ host: req.headers.host ?? '', url: req.url ?? '', headers: req.headers });
    route(req, res);
  });
  port = server.port;
});

afterAll(async () => {
  await server.close();
});

afterEach(() => {
  hits.length = 0;
  resolved.length = 0;
});

const failure = (p: Promise<unknown>) => rejection(p, SafeFetchError);

describe('isPublicAddress', () => {
  it.each([
    ['93.184.216.34', true],
    ['8.8.8.8', true],
    ['2606:4700:4700::1111', true],
    ['127.0.0.1', false],
    ['10.1.2.3', false],
    ['172.16.0.1', false],
    ['192.168.0.1', false],
    ['100.64.0.1', false],
    ['169.254.169.254', false],
    ['0.0.0.0', false],
    ['224.0.0.1', false],
    ['255.255.255.255', false],
    ['192.0.2.1', false],
    ['198.18.0.1', false],
    ['240.0.0.1', false],
    ['::', false],
    ['::1', false],
    ['fe80::1', false],
    ['fc00::1', false],
    ['fd12:3456::1', false],
    ['ff02::1', false],
    ['::ffff:127.0.0.1', false],
    ['::ffff:10.0.0.1', false],
    ['::ffff:93.184.216.34', true],
    ['::10.0.0.1', false],
    ['64:ff9b::a00:1', false],
    ['2002:a00:1::', false],
    ['2001:db8::1', false],
    ['not-an-ip', false],
  ])('given %s, then public is %s', (ip, expected) => {
    expect(isPublicAddress(ip)).toBe(expected);
  });
});

describe('safeFetch', () => {
  it('given a reachable host, when fetched, then status, lower-case headers, decoded body and timing come back', async () => {
    const res = await fetcher()(`http://site.test:${port}/ok`);
    expect(res.status).toBe(200);
    expect(res.body).toBe('hello ✓');
    expect(res.truncated).toBe(false);
    expect(res.headers['x-cache']).toBe('HIT');
    expect(res.headers['set-cookie']).toBe('a=1, b=2');
    expect(res.finalUrl).toBe(`http://site.test:${port}/ok`);
    expect(res.redirects).toEqual([]);
    expect(res.durationMs).toBeGreaterThanOrEqual(0);
    expect(resolved).toEqual(['site.test']);
    expect(hits[0].headers['user-agent']).toMatch(/aivis/);
  });

  it('given a custom user agent, when fetched, then the server sees it', async () => {
    const res = await fetcher()(`http://site.test:${port}/echo`, { headers: { 'User-Agent': 'GPTBot/1.1' } });
    expect(JSON.parse(res.body).ua).toBe('GPTBot/1.1');
  });

  it('given a relative redirect, when fetched, then it is followed and recorded', async () => {
    const res = await fetcher()(`http://site.test:${port}/redirect-relative`);
    expect(res.status).toBe(200);
    expect(res.finalUrl).toBe(`http://site.test:${port}/ok`);
    expect(res.redirects).toEqual([{ url: `http://site.test:${port}/redirect-relative`, status: 302 }]);
  });

  it('given a redirect to another origin, when fetched, then credentials headers are dropped', async () => {
    const res = await fetcher()(`http://site.test:${port}/redirect-other-host`, { headers: { authorization: 'Bearer secret' } });
    expect(JSON.parse(res.body).authorization).toBeNull();
    expect(res.finalUrl).toBe(`http://other.test:${port}/echo`);
  });

  it('given a 303 after a POST, when followed, then the next hop is a GET without body', async () => {
    const res = await fetcher()(`http://site.test:${port}/see-other`, { method: 'POST', body: 'x=1', headers: { 'content-type': 'text/plain' } });
    expect(JSON.parse(res.body).method).toBe('GET');
  });

  it('given a redirect loop, when fetched, then TOO_MANY_REDIRECTS after the cap', async () => {
    const err = await failure(fetcher()(`http://site.test:${port}/loop0`, { maxRedirects: 2 }));
    expect(err.code).toBe('TOO_MANY_REDIRECTS');
    expect(hits.map((h) => h.url)).toEqual(['/loop0', '/loop1', '/loop2']);
  });

  it('given a body over maxBytes, when fetched, then it is truncated by default', async () => {
    const res = await fetcher()(`http://site.test:${port}/big`, { maxBytes: 1024 });
    expect(res.body.length).toBe(1024);
    expect(res.truncated).toBe(true);
  });

  it('given a body over maxBytes and onBodyTooLarge error, when fetched, then BODY_TOO_LARGE', async () => {
    const err = await failure(fetcher()(`http://site.test:${port}/big`, { maxBytes: 1024, onBodyTooLarge: 'error' }));
    expect(err.code).toBe('BODY_TOO_LARGE');
  });

  it('given a gzip-encoded body, when fetched, then it is decompressed', async () => {
    const res = await fetcher()(`http://site.test:${port}/gzip`);
    expect(res.body).toBe('compressed body');
  });

  it('given a HEAD request, when fetched, then the body is empty', async () => {
    const res = await fetcher()(`http://site.test:${port}/ok`, { method: 'HEAD' });
    expect(res.status).toBe(200);
    expect(res.body).toBe('');
  });

  it('given a server that never answers, when fetched with a short timeout, then TIMEOUT', async () => {
    const t0 = Date.now();
    const err = await failure(fetcher()(`http://site.test:${port}/hang`, { timeoutMs: 150 }));
    expect(err.code).toBe('TIMEOUT');
    expect(Date.now() - t0).toBeLessThan(2_000);
  });

  it('given a body that never ends, when fetched with a short timeout, then TIMEOUT', async () => {
    const err = await failure(fetcher()(`http://site.test:${port}/slow-body`, { timeoutMs: 150 }));
    expect(err.code).toBe('TIMEOUT');
  });

  it('given a resolver that never answers, when fetched with a short timeout, then TIMEOUT', async () => {
    const f = createSafeFetcher({ resolver: () => new Promise<string[]>(() => undefined), allowAddress: allowLoopback });
    const err = await failure(f(`http://site.test:${port}/ok`, { timeoutMs: 100 }));
    expect(err.code).toBe('TIMEOUT');
  });

  it('given a name that does not resolve, when fetched, then DNS_FAILURE', async () => {
    const err = await failure(fetcher()(`http://nowhere.test:${port}/ok`));
    expect(err.code).toBe('DNS_FAILURE');
  });

  it('given a name with no addresses, when fetched, then DNS_FAILURE', async () => {
    const err = await failure(fetcher()(`http://empty.test:${port}/ok`));
    expect(err.code).toBe('DNS_FAILURE');
  });

  it('given an allowed address with nothing listening, when fetched, then CONNECTION_ERROR', async () => {
    const closed = await startFixtureServer(() => undefined);
    await closed.close();
    const err = await failure(fetcher()(`http://site.test:${closed.port}/`));
    expect(err.code).toBe('CONNECTION_ERROR');
  });

  it.each([['not a url'], ['ftp://site.test/file'], ['file:///etc/passwd'], ['http://user:pass@site.test/'], ['http://user@site.test/']])(
    'given %s, when fetched, then BAD_URL without any lookup',
    async (url) => {
      const err = await failure(fetcher()(url));
      expect(err.code).toBe('BAD_URL');
      expect(resolved).toEqual([]);
    },
  );
});

describe('safeFetch address refusal (before any connection)', () => {
  it.each([
    ['http://127.0.0.1/'],
    ['http://10.0.0.1/'],
    ['http://169.254.169.254/latest/meta-data/'],
    ['http://100.64.0.1/'],
    ['http://0.0.0.0/'],
    ['http://224.0.0.1/'],
    ['http://255.255.255.255/'],
    ['http://[::1]/'],
    ['http://[fc00::1]/'],
    ['http://[fe80::1]/'],
    ['http://[::ffff:10.0.0.1]/'],
    ['http://2130706433/'],
    ['http://0x7f.1/'],
  ])('given the production fetcher and the IP literal %s, then BLOCKED_ADDRESS and no connection attempt', async (url) => {
    const err = await failure(createSafeFetcher({ resolver: testResolver })(url));
    expect(err.code).toBe('BLOCKED_ADDRESS');
    expect(attempts).toEqual([]);
    expect(resolved).toEqual([]);
  });

  it('given the production fetcher, when the fixture server is addressed by a name resolving to 127.0.0.1, then refused and the server sees nothing', async () => {
    const err = await failure(createSafeFetcher({ resolver: testResolver })(`http://site.test:${port}/ok`));
    expect(err.code).toBe('BLOCKED_ADDRESS');
    expect(err.address).toBe('127.0.0.1');
    expect(attempts).toEqual([]);
    expect(hits).toEqual([]);
  });

  it.each([
    ['intranet.test', '10.0.0.7'],
    ['metadata.test', '169.254.169.254'],
    ['mixed.test', '10.0.0.8'],
    ['ula.test', 'fd00::1'],
    ['mapped.test', '::ffff:192.168.1.1'],
  ])('given %s resolving to a private address, when fetched, then BLOCKED_ADDRESS and no connection attempt', async (host, ip) => {
    const err = await failure(fetcher()(`http://${host}:${port}/ok`));
    expect(err.code).toBe('BLOCKED_ADDRESS');
    expect(err.address).toBe(ip);
    expect(attempts).toEqual([]);
    expect(hits).toEqual([]);
  });

  it.each([['http://10.0.0.1/'], ['http://169.254.169.254/latest/meta-data/'], ['http://intranet.test/'], ['http://[::1]/']])(
    'given a redirect to %s, when followed, then BLOCKED_ADDRESS before connecting to it',
    async (target) => {
      const err = await failure(fetcher()(`http://site.test:${port}/to?${encodeURIComponent(target)}`));
      expect(err.code).toBe('BLOCKED_ADDRESS');
      expect(err.url).toBe(target);
      expect(attempts).toEqual(['127.0.0.1']);
      expect(hits).toHaveLength(1);
    },
  );

  it('given a redirect to a file: URL, when followed, then BAD_URL', async () => {
    const err = await failure(fetcher()(`http://site.test:${port}/to?${encodeURIComponent('file:///etc/passwd')}`));
    expect(err.code).toBe('BAD_URL');
  });
});
