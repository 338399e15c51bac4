import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importCrawlerLog } from '../../commands/crawlers/import-crawler-log';
import { botMatcher, parseCombined } from '../../src/analysis/crawler-logs';
import { NOT_GZIP } from '../../src/app/crawlers';
import { crawlerRanges, inRanges, NOT_OPERATOR_FORMAT, replaceRanges } from '../../src/analysis/crawler-ranges';
import { SYSTEM_ACTOR } from '../../src/domain/events';
import { MODEL_IDS } from '../../src/domain/models';
import { seededRandom } from '../../src/domain/random';
import { tryNormalizeUrl } from '../../src/domain/urls';
import { cliHost } from '../support/cli';
import { BROWSER_UA, CLAUDEBOT_UA, GOOGLEBOT_UA, GPTBOT_UA, uploadCrawlerLog } from '../support/crawlers';
import { newSite, postCreated } from '../support/http';
import { call, sharedServer, type TestServer } from '../support/server';
import { useWorld, type World } from '../support/tenancy';

// the ranges this file's server verifies against (read when the server first verifies)
const RANGES = mkdtempSync(join(tmpdir(), 'crawler-ranges-'));
writeFileSync(join(RANGES, 'GPTBot.json'), JSON.stringify({ prefixes: [{ ipv4Prefix: '20.171.206.0/24' }, { ipv6Prefix: '2a0d:1234::/32' }] }));
writeFileSync(join(RANGES, 'Googlebot.json'), JSON.stringify({ prefixes: [{ ipv4Prefix: '66.249.64.0/27' }] }));
process.env.CRAWLER_RANGES_DIR = RANGES;

let s: TestServer;
let w: World;
useWorld((ctx) => ({ s, w } = ctx), sharedServer);

const YESTERDAY = new Date(Date.now() - 86_400_000);
const DAY = YESTERDAY.toISOString().slice(0, 10);
const MON = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const clf = (d: Date, hh: string) => `${String(d.getUTCDate()).padStart(2, '0')}/${MON[d.getUTCMonth()]}/${d.getUTCFullYear()}:${hh}:00:00 +0000`;
const combined = (ip: string, ua: string, path: string, status = 200, hh = '10') =>
  `${ip} - - [${clf(YESTERDAY, hh)}] "GET ${path} HTTP/1.1" ${status} 512 "-" "${ua}"`;

const upload = (site: string, body: string | Buffer, o: { format?: string; key?: string; headers?: Record<string, string> } = {}) =>
  uploadCrawlerLog(s, o.key ?? w.a.key, site, body, o);

const activity = async (site: string, query: Record<string, string> = {}) => {
  const r = await call(s, 'GET', '/api/v1/crawlers/activity', {
    key: w.a.key,
    query: { website_id: site, start_date: DAY, end_date: DAY, ...query },
  });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.data as any[];
};

describe('POST /api/v1/crawler-logs (combined)', () => {
  let site: string;
  const log = [
    '#Version: 1.0',
    combined('20.171.206.10', GPTBOT_UA, '/pricing'),
    combined('20.171.206.11', GPTBOT_UA, '/pricing/', 200, '11'),
    combined('203.0.113.7', GPTBOT_UA, '/admin', 403),
    combined('66.249.64.5', GOOGLEBOT_UA, '/blog?utm_source=x&b=2&a=1'),
    combined('198.51.100.2', CLAUDEBOT_UA, '/'),
    combined('198.51.100.3', BROWSER_UA, '/pricing'),
    '',
    'not a log line at all',
    combined('20.171.206.12', GPTBOT_UA, '/nul\u0000byte'),
    combined('20.171.206.13', `${GPTBOT_UA} ${'x'.repeat(100_000)}`, '/long'),
  ].join('\n');
  const withBadUtf8 = Buffer.concat([Buffer.from(`${log}\n`), Buffer.from([0x31, 0x20, 0xff, 0xfe, 0x0a])]);

  beforeAll(async () => {
    site = await newSite(s, w.a.key, 'Logs', 'https://www.logs.example.com');
  });

  it('given a log with AI crawlers, a spoofed agent, a browser and bad lines, when imported, then every line is counted exactly', async () => {
    const r = await upload(site, withBadUtf8);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    // 10 non-empty, non-header lines: 6 well formed (5 AI), 4 rejected (malformed, NUL, 100 KB agent, invalid UTF-8)
    expect(r.body).toEqual({ lines: 10, ai_hits: 5, verified: 3, unverified: 1, unverifiable: 1, duplicates: 0, rejected: 4 });
  });

  it('when the same log is sent again, then it adds nothing and says so', async () => {
    const before = await activity(site, { verification: 'all' });
    const r = await upload(site, gzipSync(withBadUtf8), { headers: { 'content-encoding': 'gzip' } });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toEqual({ lines: 10, ai_hits: 0, verified: 0, unverified: 0, unverifiable: 0, duplicates: 5, rejected: 4 });
    expect(await activity(site, { verification: 'all' })).toEqual(before);
  });

  it('then the activity counts verified hits per bot by default, with operator, purpose and distinct pages', async () => {
    expect(await activity(site)).toEqual([
      { bot: 'GPTBot', operator: 'OpenAI', purpose: 'training', hits: 2, pages: 1, last_seen: `${DAY}T11:00:00.000Z` },
      { bot: 'Googlebot', operator: 'Google', purpose: 'conversational', hits: 1, pages: 1, last_seen: `${DAY}T10:00:00.000Z` },
    ]);
    expect(await activity(site, { verification: 'unverified' })).toEqual([
      { bot: 'GPTBot', operator: 'OpenAI', purpose: 'training', hits: 1, pages: 1, last_seen: `${DAY}T10:00:00.000Z` },
    ]);
    const unverifiable = await activity(site, { verification: 'unverifiable' });
    expect(unverifiable.map((r) => [r.bot, r.hits])).toEqual([['ClaudeBot', 1]]);
  });

  it('then group_by day, path and status split the rows; bots filters case-insensitively', async () => {
    const byPath = await activity(site, { verification: 'all', group_by: 'path', bots: 'gptbot' });
    expect(byPath.map((r) => [r.bot, r.path, r.hits])).toEqual([
      ['GPTBot', '/admin', 1],
      ['GPTBot', '/pricing', 2],
    ]);
    const byStatus = await activity(site, { verification: 'all', group_by: 'status', bots: 'GPTBot' });
    expect(byStatus.map((r) => [r.status, r.hits])).toEqual([
      [200, 2],
      [403, 1],
    ]);
    const byDay = await activity(site, { verification: 'all', group_by: 'day' });
    expect(byDay.map((r) => [r.bot, r.day, r.hits])).toEqual([
      ['ClaudeBot', DAY, 1],
      ['GPTBot', DAY, 3],
      ['Googlebot', DAY, 1],
    ]);
  });

  it('then a day outside the period holds nothing', async () => {
    const r = await call(s, 'GET', '/api/v1/crawlers/activity', {
      key: w.a.key,
      query: { website_id: site, start_date: '2020-01-01', end_date: '2020-01-31' },
    });
    expect(r.body).toEqual({ data: [] });
  });
});

describe('the JSON and CloudFront formats', () => {
  it('given Cloudflare and Vercel lines, when imported as json, then both are read', async () => {
    const site = await newSite(s, w.a.key);
    const ns = BigInt(YESTERDAY.getTime()) * 1_000_000n;
    const lines = [
      JSON.stringify({
        ClientIP: '20.171.206.1',
        ClientRequestUserAgent: GPTBOT_UA,
        ClientRequestMethod: 'GET',
        ClientRequestPath: '/a',
        EdgeResponseStatus: 200,
        EdgeStartTimestamp: `${YESTERDAY.toISOString()}`,
      }),
      `{"ClientIP":"20.171.206.2","ClientRequestUserAgent":"${GPTBOT_UA}","ClientRequestMethod":"GET","ClientRequestPath":"/b","EdgeResponseStatus":404,"EdgeStartTimestamp":${ns}}`,
      JSON.stringify({
        timestamp: YESTERDAY.getTime(),
        proxy: { clientIp: '2a0d:1234::5', userAgent: [GPTBOT_UA], method: 'GET', path: '/c', statusCode: 200 },
      }),
      '{"ClientIP": 1}',
      '[1,2]',
    ];
    const r = await upload(site, lines.join('\n'), { format: 'json' });
    expect(r.body).toEqual({ lines: 5, ai_hits: 3, verified: 3, unverified: 0, unverifiable: 0, duplicates: 0, rejected: 2 });
    const rows = await activity(site, { group_by: 'status' });
    expect(rows.map((x) => [x.status, x.hits])).toEqual([
      [200, 2],
      [404, 1],
    ]);
  });

  it('given a CloudFront standard log with its #Fields header, when imported, then its URL-encoded agents are read', async () => {
    const site = await newSite(s, w.a.key);
    const fields =
      '#Fields: date time x-edge-location sc-bytes c-ip cs-method cs(Host) cs-uri-stem sc-status cs(Referer) cs(User-Agent) cs-uri-query';
    const row = (ip: string, path: string) =>
      [DAY, '09:30:00', 'IAD89-C1', '512', ip, 'GET', 'd1.cloudfront.net', path, '200', '-', encodeURIComponent(GOOGLEBOT_UA), '-'].join('\t');
    const r = await upload(site, ['#Version: 1.0', fields, row('66.249.64.1', '/x'), row('10.0.0.1', '/y'), 'short\tline'].join('\n'), {
      format: 'cloudfront',
    });
    expect(r.body).toEqual({ lines: 3, ai_hits: 2, verified: 1, unverified: 1, unverifiable: 0, duplicates: 0, rejected: 1 });
  });
});

describe('activity over a period of several days and months', () => {
  it('given crawls on days of two months, then a page counts in a period only when it was crawled on one of its days', async () => {
    const site = await newSite(s, w.a.key);
    const at = (d: string, path: string, status = 200) =>
      combined('20.171.206.10', GPTBOT_UA, path, status).replace(clf(YESTERDAY, '10'), `${d}:10:00:00 +0000`);
    const r = await upload(
      site,
      [at('30/Sep/2026', '/a'), at('02/Oct/2026', '/b'), at('31/Oct/2026', '/b', 404), at('01/Nov/2026', '/c')].join('\n'),
    );
    expect(r.body).toMatchObject({ ai_hits: 4, verified: 4, rejected: 0 });
    const read = async (start_date: string, end_date: string, group_by = 'bot') =>
      (
        await call(s, 'GET', '/api/v1/crawlers/activity', { key: w.a.key, query: { website_id: site, start_date, end_date, group_by } })
      ).body.data.map((x: any) => [x.status ?? x.bot, x.hits, x.pages]);
    expect(await read('2026-10-01', '2026-10-31')).toEqual([['GPTBot', 2, 1]]);
    expect(await read('2026-09-30', '2026-11-01')).toEqual([['GPTBot', 4, 3]]);
    expect(await read('2026-10-03', '2026-10-30')).toEqual([]);
    expect(await read('2026-10-01', '2026-10-31', 'status')).toEqual([
      [200, 1, 1],
      [404, 1, 1],
    ]);
  });
});

describe('bad input writes nothing', () => {
  const refused = async (o: Parameters<typeof upload>[2] & { site?: string; body?: string | Buffer }, status: number, error: string | RegExp) => {
    const before = await s.head();
    const r = await upload(o.site ?? w.a.a1, o.body ?? combined('20.171.206.10', GPTBOT_UA, '/p'), o);
    expect(r.status, JSON.stringify(r.body)).toBe(status);
    if (typeof error === 'string') expect(r.body.error).toBe(error);
    else expect(r.body.error).toMatch(error);
    expect(await s.head()).toBe(before);
  };

  it('an unknown or missing format is a 400 naming format', async () => {
    await refused({ format: 'apache2' }, 400, /^format: /);
    await refused({ format: '' }, 400, /^format: /);
  });

  it('a body that is not the gzip it declares is a 400', async () => {
    await refused({ headers: { 'content-encoding': 'gzip' } }, 400, NOT_GZIP);
  });

  it('an encoding other than gzip is a 400 naming Content-Encoding', async () => {
    await refused({ headers: { 'content-encoding': 'br' } }, 400, /^Content-Encoding: /);
  });

  it("another organization's website is a 403, a scoped key on another website a 403, an unknown website a 404", async () => {
    await refused({ site: w.b.b1 }, 403, /./);
    await refused({ key: w.a.scoped, site: w.a.a1 }, 403, /./);
    await refused({ site: '00000000-0000-4000-8000-000000000000' }, 404, 'Website not found');
    await refused({ key: w.b.key }, 403, /./);
  });

  it('the reads refuse bad dates, values and other organizations', async () => {
    const bad = async (query: Record<string, string>, status: number, error: RegExp, path = '/api/v1/crawlers/activity') => {
      const r = await call(s, 'GET', path, { key: w.a.key, query: { website_id: w.a.a1, ...query } });
      expect(r.status, JSON.stringify(r.body)).toBe(status);
      expect(r.body.error).toMatch(error);
    };
    await bad({ start_date: '2026-02-30' }, 400, /^start_date: /);
    await bad({ start_date: '2026-03-02', end_date: '2026-03-01' }, 400, /^end_date: /);
    await bad({ verification: 'maybe' }, 400, /^verification: /);
    await bad({ group_by: 'week' }, 400, /^group_by: /);
    await bad({ only: 'both' }, 400, /^only: /, '/api/v1/crawlers/pages');
    await bad({ page_size: '1000' }, 400, /^page_size: /, '/api/v1/crawlers/pages');
    await bad({ website_id: w.b.b1 }, 403, /./);
  });
});

describe('ranges', () => {
  it("given a bot's ranges replaced while the server runs, then hits imported afterwards are verified against them", async () => {
    const site = await newSite(s, w.a.key);
    const r1 = await upload(site, combined('192.0.2.10', GPTBOT_UA, '/one'));
    expect(r1.body).toMatchObject({ ai_hits: 1, unverified: 1 });
    replaceRanges('GPTBot', JSON.stringify({ prefixes: [{ ipv4Prefix: '20.171.206.0/24' }, { ipv4Prefix: '192.0.2.0/24' }] }), 'test', RANGES);
    // the server looks at the folder at most every 2 s
    await new Promise((r) => setTimeout(r, 2100));
    const r2 = await upload(site, combined('192.0.2.10', GPTBOT_UA, '/two'));
    expect(r2.body).toMatchObject({ ai_hits: 1, verified: 1 });
    expect(JSON.parse(readFileSync(join(RANGES, 'GPTBot.json'), 'utf8'))).toMatchObject({ source: 'test' });
  });

  it("a ranges file that is not the operators' format is refused and leaves the ranges as they were", () => {
    const before = readFileSync(join(RANGES, 'Googlebot.json'), 'utf8');
    expect(() => replaceRanges('Googlebot', JSON.stringify({ ranges: ['66.249.64.0/27'] }), 'x', RANGES)).toThrow(NOT_OPERATOR_FORMAT);
    expect(() => replaceRanges('Googlebot', JSON.stringify({ prefixes: [{ ipv4Prefix: '2001:db8::/32' }] }), 'x', RANGES)).toThrow(
      NOT_OPERATOR_FORMAT,
    );
    expect(() => replaceRanges('Googlebot', '{"prefixes": [{"ipv4Prefix": "300.1.1.1/8"}]}', 'x', RANGES)).toThrow(NOT_OPERATOR_FORMAT);
    expect(readFileSync(join(RANGES, 'Googlebot.json'), 'utf8')).toBe(before);
  });
});

describe('GET /api/v1/crawlers/pages', () => {
  let site: string;
  beforeAll(async () => {
    site = await newSite(s, w.a.key, 'Pages', 'https://pages.example.com');
    const topic = (await postCreated(s, w.a.key, '/api/v1/topics', { website_id: site, name: 'Pricing' })).topic.id;
    const prompt = (await postCreated(s, w.a.key, '/api/v1/prompts', { website_id: site, topic_id: topic, text: 'What does Pages cost?' })).prompt.id;
    const answer = (citations: string[], hour: number) => ({
      prompt_id: prompt,
      model: MODEL_IDS[0],
      run_at: `${DAY}T0${hour}:00:00.000Z`,
      text: 'Pages is fine.',
      citations,
    });
    await postCreated(s, w.a.key, '/api/v1/responses/import', {
      website_id: site,
      responses: [
        answer(['https://pages.example.com/pricing'], 1),
        answer(['https://www.pages.example.com/pricing/', 'https://pages.example.com/faq'], 2),
      ],
    });
    await upload(
      site,
      [
        combined('20.171.206.10', GPTBOT_UA, '/pricing'),
        combined('66.249.64.5', GOOGLEBOT_UA, '/blog'),
        combined('66.249.64.5', GOOGLEBOT_UA, '/blog', 200, '12'),
        combined('203.0.113.1', GPTBOT_UA, '/spoofed'),
      ].join('\n'),
    );
  });

  const pages = async (query: Record<string, string> = {}) => {
    const r = await call(s, 'GET', '/api/v1/crawlers/pages', { key: w.a.key, query: { website_id: site, start_date: DAY, end_date: DAY, ...query } });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return r.body;
  };

  it('joins pages crawled by verified bots with the answers citing them; a spoofed crawl is not a crawl', async () => {
    const r = await pages();
    expect(r.data).toEqual([
      { url: 'pages.example.com/blog', crawls: 2, bots: ['Googlebot'], last_crawled: `${DAY}T12:00:00.000Z`, cited: 0, last_cited: null },
      {
        url: 'pages.example.com/pricing',
        crawls: 1,
        bots: ['GPTBot'],
        last_crawled: `${DAY}T10:00:00.000Z`,
        cited: 2,
        last_cited: `${DAY}T02:00:00.000Z`,
      },
      { url: 'pages.example.com/faq', crawls: 0, bots: [], last_crawled: null, cited: 1, last_cited: `${DAY}T02:00:00.000Z` },
    ]);
    expect(r).toMatchObject({ page_num: 0, page_size: 40, has_more: false });
  });

  it('only=crawled_not_cited and cited_not_crawled show the gaps; pages page', async () => {
    expect((await pages({ only: 'crawled_not_cited' })).data.map((p: any) => p.url)).toEqual(['pages.example.com/blog']);
    expect((await pages({ only: 'cited_not_crawled' })).data.map((p: any) => p.url)).toEqual(['pages.example.com/faq']);
    const first = await pages({ page_size: '2' });
    expect(first.has_more).toBe(true);
    expect((await pages({ page_size: '2', page_num: '1' })).data.map((p: any) => p.url)).toEqual(['pages.example.com/faq']);
  });
});

// the operator CLI against this file's server's database and ranges folder (skipped on the in-memory store)
describe('CLI crawlers:import and crawlers:ranges', () => {
  const host = cliHost();
  afterAll(() => host.close());
  const cli = (...args: string[]) => {
    const env: Record<string, string> = { ...(process.env as Record<string, string>), LOG_LEVEL: 'warn', CRAWLER_RANGES_DIR: RANGES };
    delete env.NATS_URL;
    env.DATABASE_URL = s.databaseUrl!;
    return host.run(args, env);
  };
  const PERPLEXITY = 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; PerplexityBot/1.0; +https://perplexity.ai/perplexitybot)';

  it('given a gzip log, when imported with crawlers:import, then it shows progress and the exact counts, and a re-run adds nothing', async (t) => {
    if (!s.databaseUrl) t.skip();
    const site = await newSite(s, w.a.key, 'Cli', 'https://cli-crawl.example.com');
    const file = join(RANGES, '..', `crawler-cli-${process.pid}.log.gz`);
    const log = [
      combined('20.171.206.10', GPTBOT_UA, '/a'),
      combined('203.0.113.7', GPTBOT_UA, '/b'),
      combined('198.51.100.1', CLAUDEBOT_UA, '/c'),
      combined('198.51.100.2', BROWSER_UA, '/d'),
      'not a log line',
    ];
    writeFileSync(file, gzipSync(`${log.join('\n')}\n`));
    const r = await cli('crawlers:import', '--website', site, '--file', file);
    expect(r.status, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ lines: 5, ai_hits: 3, verified: 1, unverified: 1, unverifiable: 1, duplicates: 0, rejected: 1 });
    const size = readFileSync(file).length;
    expect(r.stderr).toContain(`importing: ${size}/${size} 100%`);
    expect(r.stderr).toContain('importing: 5 lines, 3 AI hits, 0 duplicates, 1 rejected');
    const again = await cli('crawlers:import', '--website', site, '--file', file);
    expect(JSON.parse(again.stdout)).toMatchObject({ lines: 5, ai_hits: 0, duplicates: 3, rejected: 1 });
    expect(await activity(site, { verification: 'all' })).toEqual([
      expect.objectContaining({ bot: 'ClaudeBot', hits: 1, pages: 1 }),
      expect.objectContaining({ bot: 'GPTBot', hits: 2, pages: 2 }),
    ]);
    expect((await cli('crawlers:import', '--website', site, '--file', file, '--format', 'w3c')).status).toBe(1);
  }, 120_000);

  it("given crawlers:ranges, then a file not in the operators' format is refused and a good one takes effect on the running server", async (t) => {
    if (!s.databaseUrl) t.skip();
    const site = await newSite(s, w.a.key, 'Ranges', 'https://cli-ranges.example.com');
    expect((await upload(site, combined('192.0.2.77', PERPLEXITY, '/one'))).body).toMatchObject({ ai_hits: 1, unverifiable: 1 });
    const bad = join(RANGES, '..', `perplexity-bad-${process.pid}.json`);
    writeFileSync(bad, JSON.stringify({ ranges: ['192.0.2.0/24'] }));
    const refused = await cli('crawlers:ranges', '--bot', 'perplexitybot', '--file', bad);
    expect(refused.status).toBe(1);
    expect(refused.stderr).toContain(NOT_OPERATOR_FORMAT);
    expect(existsSync(join(RANGES, 'PerplexityBot.json'))).toBe(false);
    const good = join(RANGES, '..', `perplexity-${process.pid}.json`);
    writeFileSync(good, JSON.stringify({ creationTime: '2026-11-01', prefixes: [{ ipv4Prefix: '192.0.2.0/24' }] }));
    const ok = await cli('crawlers:ranges', '--bot', 'perplexitybot', '--file', good, '--source', 'https://www.perplexity.com/perplexitybot.json');
    expect(ok.status, ok.stderr).toBe(0);
    expect(JSON.parse(ok.stdout)).toMatchObject({ bot: 'PerplexityBot', prefixes: 1 });
    // the server looks at the folder at most every 2 s
    await new Promise((r) => setTimeout(r, 2100));
    expect((await upload(site, combined('192.0.2.77', PERPLEXITY, '/two'))).body).toMatchObject({ ai_hits: 1, verified: 1 });
    expect((await upload(site, combined('198.51.100.9', PERPLEXITY, '/three'))).body).toMatchObject({ ai_hits: 1, unverified: 1 });
  }, 120_000);
});

// the import itself, with fewer rows held before an append than a server holds (100), so that one body makes several appends
describe('importCrawlerLog: a large body in odd chunks', () => {
  const HOST = 'big-crawl.example.com';
  const rand = seededRandom(11);
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(rand() * xs.length)];
  const stamp = (ms: number, offsetMin: number) => {
    const d = new Date(ms + offsetMin * 60_000);
    const p = (n: number) => String(n).padStart(2, '0');
    const off = `${offsetMin < 0 ? '-' : '+'}${p(Math.floor(Math.abs(offsetMin) / 60))}${p(Math.abs(offsetMin) % 60)}`;
    return `${p(d.getUTCDate())}/${MON[d.getUTCMonth()]}/${d.getUTCFullYear()}:${p(d.getUTCHours())}:${p(d.getUTCMinutes())}:${p(d.getUTCSeconds())} ${off}`;
  };
  // 9,000 lines over three days around midnights, in three time zones: AI crawlers (verified, spoofed, unverifiable),
  // browsers, repeated lines, CRLF endings, broken lines, a NUL, invalid UTF-8, a multi-byte agent and path
  const t0 = Date.parse('2026-10-30T20:00:00Z');
  const lines: Buffer[] = [];
  for (let i = 0; i < 9000; i++) {
    const r = rand();
    if (r < 0.01 && lines.length) {
      lines.push(lines[Math.floor(rand() * lines.length)]);
      continue;
    }
    const ip = pick(['20.171.206.7', '20.171.206.99', '66.249.64.3', '203.0.113.5', '198.51.100.8', '2a0d:1234::9', '10.1.2.3']);
    const ua = pick([
      GPTBOT_UA,
      CLAUDEBOT_UA,
      GOOGLEBOT_UA,
      BROWSER_UA,
      BROWSER_UA,
      'Mozilla/5.0 (Ünïcode) GPTBot/1.2',
      'Mozilla/5.0 navigateur « spécial »',
    ]);
    const path = pick(['/', '/pricing', '/pricing/', '/docs/a?x=1&b=2', '/blog/ça-va', '/blog?utm_source=z', '/b%20c']);
    const status = pick([200, 200, 200, 404, 301, 500]);
    let l = `${ip} - - [${stamp(t0 + Math.floor(rand() * 3 * 86_400_000), pick([0, -300, 330]))}] "GET ${path} HTTP/1.1" ${status} ${i} "-" "${ua}"`;
    if (r > 0.995) l = l.slice(0, Math.floor(rand() * l.length));
    const b = Buffer.from(r > 0.9 ? `${l}\r` : l);
    if (r > 0.993 && r < 0.994) b[5] = 0;
    if (r > 0.994 && r < 0.995) b[b.length - 3] = 0xff;
    lines.push(b);
  }
  const body = Buffer.concat(lines.flatMap((l) => [l, Buffer.from('\n')]));

  /** What a line-by-line reading of the body gives (parseCombined, the bot list, the test's ranges, no caches). */
  function expected() {
    const bots = botMatcher();
    const counts = { lines: 0, ai_hits: 0, verified: 0, unverified: 0, unverifiable: 0, duplicates: 0, rejected: 0 };
    const seen = new Set<string>();
    const rows = new Map<string, { day: string; bot: string; url: string; status: number; verification: string; hits: number; last_seen: string }>();
    for (let l of lines) {
      if (l.length && l[l.length - 1] === 13) l = l.subarray(0, l.length - 1);
      if (l.length === 0) continue;
      counts.lines++;
      const text = l.toString();
      const hit = l.includes(0) || !Buffer.from(text).equals(l) ? null : parseCombined(text);
      if (!hit) {
        counts.rejected++;
        continue;
      }
      const bot = bots.match(hit.ua);
      if (!bot) continue;
      const key = l.toString('hex');
      if (seen.has(key)) {
        counts.duplicates++;
        continue;
      }
      seen.add(key);
      // the ranges as the file's other tests left them (inRanges has its own test against ipaddr.js)
      const published = crawlerRanges().current().get(bot.token.toLowerCase());
      const verification = !published ? 'unverifiable' : inRanges(published, hit.ip) ? 'verified' : 'unverified';
      counts.ai_hits++;
      counts[verification]++;
      const url = `${HOST}${hit.path}`.replace(/\/$/, '');
      const day = new Date(hit.time).toISOString().slice(0, 10);
      const k = [day, bot.token, hit.path, hit.status, verification].join(' ');
      const row = rows.get(k);
      const last = new Date(hit.time).toISOString();
      if (row) {
        row.hits++;
        if (last > row.last_seen) row.last_seen = last;
      } else rows.set(k, { day, bot: bot.token, url, status: hit.status, verification, hits: 1, last_seen: last });
    }
    return { counts, rows: [...rows.values()] };
  }

  const chunks = async function* () {
    for (let at = 0; at < body.length; ) {
      const n = 1 + Math.floor(rand() * 700);
      yield body.subarray(at, at + n);
      at += n;
    }
  };

  it('given the body sent in chunks of 1 to 700 bytes, then the counts and hits are what reading it line by line gives; sent again, it adds nothing', async () => {
    const site = await newSite(s, w.a.key, 'Big', `https://${HOST}`);
    const db = s.rt.database.db;
    const deps = {
      db,
      ctx: { store: s.rt.store, organizationId: w.a.organization_id, websiteId: site, actor: SYSTEM_ACTOR },
      website: { id: site, host: HOST },
      format: 'combined' as const,
      heldRows: 100,
    };
    const want = expected();
    const appendedBefore = await s.rt.store.lastPosition();
    const got = await importCrawlerLog(deps, chunks());
    expect(got.position).not.toBeNull();
    const { position, ...counts } = got;
    expect(counts).toEqual(want.counts);
    // several batches of hashes and several appends
    expect(want.counts.ai_hits).toBeGreaterThan(5000);
    expect(want.rows.length).toBeGreaterThan(300);
    await s.rt.runners.get('crawlers')!.waitFor(position!, 60_000);
    const stored = async () =>
      (
        await db.raw(
          `select to_char(day, 'YYYY-MM-DD') as day, bot, url, status, verification, hits::int as hits, last_seen
             from rm_crawler_hits where website_id = ? order by 1, 2, 3, 4, 5`,
          [site],
        )
      ).rows.map((r: any) => ({ ...r, last_seen: r.last_seen.toISOString() }));
    const order = (rows: any[]) => [...rows].sort((a, b) => (JSON.stringify(a) < JSON.stringify(b) ? -1 : 1));
    // a page is its normalized URL: /pricing and /pricing/ are one row, so compare sums per normalized row
    const merged = new Map<string, any>();
    for (const r of want.rows) {
      const url = tryNormalizeUrl(`https://${HOST}${r.url.slice(HOST.length)}`);
      const k = [r.day, r.bot, url, r.status, r.verification].join(' ');
      const m = merged.get(k);
      if (m) {
        m.hits += r.hits;
        if (r.last_seen > m.last_seen) m.last_seen = r.last_seen;
      } else merged.set(k, { ...r, url });
    }
    const before = await stored();
    expect(order(before)).toEqual(order([...merged.values()]));
    expect(before.length).toBeGreaterThan(0);
    expect(appendedBefore).not.toBe(position);

    const again = await importCrawlerLog(deps, chunks());
    expect(again).toMatchObject({
      ...want.counts,
      ai_hits: 0,
      verified: 0,
      unverified: 0,
      unverifiable: 0,
      duplicates: want.counts.ai_hits + want.counts.duplicates,
      position: null,
    });
    expect(await stored()).toEqual(before);
  }, 120_000);

  const depsOf = (site: string, store: typeof s.rt.store, held: { heldRows?: number; heldHits?: number } = { heldRows: 100 }) => ({
    db: s.rt.database.db,
    ctx: { store, organizationId: w.a.organization_id, websiteId: site, actor: SYSTEM_ACTOR },
    website: { id: site, host: HOST },
    format: 'combined' as const,
    ...held,
  });
  const hashesOf = async (site: string) =>
    (await s.rt.database.db.raw('select count(*)::int as n from aivis_crawler_lines where website_id = ?', [site])).rows[0].n as number;
  const eventsOf = async (site: string) =>
    (await s.rt.database.db.raw('select count(*)::int as n from aivis_events where stream_id = ?', [`crawlerlogs-${site}`])).rows[0].n as number;
  const storeDown = () => Promise.reject(new Error('store down'));

  it('given an append that fails, then the lines it held are taken back: sent again, they are imported', async () => {
    const site = await newSite(s, w.a.key, 'Fails', `https://${HOST}`);
    const store = s.rt.store;
    expect(store.transact).toBeDefined();
    // the append inside the transaction of the hashes fails (Postgres)
    const failing = {
      ...store,
      append: storeDown,
      transact: (work: any) => store.transact!((tx) => work({ ...tx, append: storeDown })),
    } as unknown as typeof store;
    await expect(importCrawlerLog(depsOf(site, failing), chunks())).rejects.toThrow('store down');
    expect(await hashesOf(site)).toBe(0);
    expect(await eventsOf(site)).toBe(0);
    const r = await importCrawlerLog(depsOf(site, store), Readable.from([body]));
    expect(r.ai_hits).toBe(expected().counts.ai_hits);
  }, 120_000);

  it('given a store without transactions whose append fails, then the hashes its insert added are taken back, and only those', async () => {
    const site = await newSite(s, w.a.key, 'Fails apart', `https://${HOST}`);
    const store = s.rt.store;
    // the same store appending: the hashes and their events, one after the other
    const apart = { ...store, transact: undefined } as unknown as typeof store;
    const failing = { ...store, append: storeDown, transact: undefined } as unknown as typeof store;
    const head = Buffer.concat(lines.slice(0, 1000).flatMap((l) => [l, Buffer.from('\n')]));
    const first = await importCrawlerLog(depsOf(site, apart), Readable.from([head]));
    expect(first.ai_hits).toBeGreaterThan(100);
    expect(await hashesOf(site)).toBe(first.ai_hits);
    await expect(importCrawlerLog(depsOf(site, failing), chunks())).rejects.toThrow('store down');
    // the lines imported before keep theirs: sent again they are still duplicates
    expect(await hashesOf(site)).toBe(first.ai_hits);
    const r = await importCrawlerLog(depsOf(site, apart), Readable.from([body]));
    const want = expected().counts;
    expect(r).toMatchObject({ lines: want.lines, rejected: want.rejected, ai_hits: want.ai_hits - first.ai_hits });
    expect(r.duplicates).toBe(want.duplicates + first.ai_hits);
    expect(await hashesOf(site)).toBe(want.ai_hits);
  }, 120_000);

  it('given the process dies after the hashes and the event were written but before the commit, then neither is stored: sent again, the lines are imported', async () => {
    const site = await newSite(s, w.a.key, 'Crash', `https://${HOST}`);
    const store = s.rt.store;
    // the transaction's work ends in an error after its append, as a crash before the commit would end it
    const crashing = {
      ...store,
      transact: (work: any) =>
        store.transact!(async (tx) => {
          await work(tx);
          // inside the transaction both are there
          const n = await tx.trx.raw(
            `select (select count(*) from aivis_crawler_lines where website_id = ?)::int as hashes,
                    (select count(*) from aivis_events where stream_id = ?)::int as events`,
            [site, `crawlerlogs-${site}`],
          );
          expect(n.rows[0].hashes).toBeGreaterThan(0);
          expect(n.rows[0].events).toBeGreaterThan(0);
          throw new Error('crash');
        }),
    } as unknown as typeof store;
    await expect(importCrawlerLog(depsOf(site, crashing), chunks())).rejects.toThrow('crash');
    expect(await hashesOf(site)).toBe(0);
    expect(await eventsOf(site)).toBe(0);
    const r = await importCrawlerLog(depsOf(site, store), Readable.from([body]));
    expect(r).toMatchObject(expected().counts);
    expect(await hashesOf(site)).toBe(r.ai_hits);
    expect(await eventsOf(site)).toBeGreaterThan(0);
  }, 120_000);

  it('given a line sent again after its held set was written, then it is a duplicate; the first copy counts once', async () => {
    const site = await newSite(s, w.a.key, 'Across', `https://${HOST}`);
    const a = combined('20.171.206.7', GPTBOT_UA, '/a');
    const b = combined('20.171.206.7', GPTBOT_UA, '/b');
    const c = combined('66.249.64.3', GOOGLEBOT_UA, '/a');
    // two AI lines a held set: a and b are written before a comes again
    const r = await importCrawlerLog(depsOf(site, s.rt.store, { heldHits: 2 }), Readable.from([[a, b, c, a, b, a, c].join('\n')]));
    expect(r).toMatchObject({ lines: 7, ai_hits: 3, duplicates: 4, verified: 3, rejected: 0 });
    await s.rt.runners.get('crawlers')!.waitFor(r.position!, 60_000);
    const hits = await s.rt.database.db.raw('select url, bot, hits::int as hits from rm_crawler_hits where website_id = ? order by url, bot', [site]);
    expect(hits.rows).toEqual([
      { url: `${HOST}/a`, bot: 'GPTBot', hits: 1 },
      { url: `${HOST}/a`, bot: 'Googlebot', hits: 1 },
      { url: `${HOST}/b`, bot: 'GPTBot', hits: 1 },
    ]);
    expect(await hashesOf(site)).toBe(3);
  }, 120_000);
});
