import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { crawlersProjection } from '../../../projections/crawlers';
import { type ActivityRequest, crawledPages, crawlerActivity } from '../../../queries/crawlers/read';
import type { TestDatabase } from '../../support/db';
import { sharedStore } from '../../support/per-worker';

/** The crawler reads' in-memory answers against the same grouping done by Postgres over rm_crawler_hits. */
let t: TestDatabase;
beforeAll(async () => {
  t = await sharedStore();
  await crawlersProjection.migrate(t.db);
  await t.db.raw(`create table rm_content_cites (response_id uuid not null, website_id uuid not null, normalized_url text not null,
    run_at timestamptz not null, primary key (response_id, normalized_url))`);
});
afterAll(() => t?.close());

const HOST = 'example.com';
const BOTS = ['GPTBot', 'ClaudeBot', 'bingbot', 'ChatGPT-User', 'Amazonbot', 'PerplexityBot'];
const VERIFICATIONS = ['verified', 'unverified', 'unverifiable'];
const STATUSES = [200, 404, 301, 500];
const PATHS = ['/', '/a', '/B', '/a?x=1', '/é', '/😀', '/\uff01', '/docs/z', '/docs/a'];

function rng(seed: number) {
  let s = seed;
  return (n: number) => {
    s = (s * 1103515245 + 12345) & 0x7fffffff;
    return s % n;
  };
}

const day = (d: number) => new Date(Date.UTC(2026, 0, 1 + d)).toISOString().slice(0, 10);

async function expectedActivity(w: string, r: ActivityRequest) {
  const g = { bot: '', status: ', status', day: ', day::text', path: ', url' }[r.group_by];
  const q = t.db.raw(
    `select bot${g ? `${g} as g` : ''}, sum(hits)::float8 as hits, ${r.group_by === 'path' ? '1' : 'count(distinct url)'}::int as pages,
            max(last_seen) as last_seen
       from rm_crawler_hits where website_id = ? and day between ?::date and ?::date
        and (?::text = 'all' or verification = ?) and (?::text[] is null or bot = any(?::text[]))
      group by bot${g ? ', 2' : ''} order by bot${g ? ', 2' : ''}`,
    [w, r.start, r.end, r.verification, r.verification, r.bots ?? null, r.bots ?? null],
  );
  return ((await q).rows as { bot: string; g?: unknown; hits: number; pages: number; last_seen: Date }[]).map((x) => ({
    bot: x.bot,
    ...(r.group_by === 'day' ? { day: x.g } : {}),
    ...(r.group_by === 'path' ? { path: String(x.g).slice(HOST.length) || '/' } : {}),
    ...(r.group_by === 'status' ? { status: x.g } : {}),
    hits: x.hits,
    pages: x.pages,
    last_seen: x.last_seen.toISOString(),
  }));
}

async function expectedPages(w: string, start: string, end: string, only: string | undefined) {
  const where =
    only === 'crawled_not_cited' ? 'where coalesce(c.cited, 0) = 0' : only === 'cited_not_crawled' ? 'where coalesce(k.crawls, 0) = 0' : '';
  const rows = (
    await t.db.raw(
      `with k as (
         select url, sum(hits)::float8 as crawls, array_agg(distinct bot order by bot) as bots, max(last_seen) as last_crawled
         from rm_crawler_hits where website_id = ? and verification = 'verified' and day between ?::date and ?::date group by url
       ), c as (
         select normalized_url as url, count(distinct response_id)::int as cited, max(run_at) as last_cited
         from rm_content_cites where website_id = ? and run_at >= ?::date and run_at < ?::date + 1 group by normalized_url
       )
       select coalesce(k.url, c.url) as url, coalesce(k.crawls, 0) as crawls, coalesce(k.bots, '{}') as bots, k.last_crawled,
              coalesce(c.cited, 0) as cited, c.last_cited
       from k full outer join c on c.url = k.url ${where}
       order by coalesce(k.crawls, 0) desc, coalesce(c.cited, 0) desc, 1`,
      [w, start, end, w, start, end],
    )
  ).rows as { url: string; crawls: number; bots: string[]; last_crawled: Date | null; cited: number; last_cited: Date | null }[];
  return rows.map((x) => ({ ...x, last_crawled: x.last_crawled?.toISOString() ?? null, last_cited: x.last_cited?.toISOString() ?? null }));
}

async function givenRandomHits(seed: number) {
  const w = randomUUID();
  const r = rng(seed);
  const urls = [...PATHS, ...Array.from({ length: 120 }, (_, i) => `/p${r(400)}?q=${i % 5}`)].map((p) => `${HOST}${p === '/' ? '' : p}`);
  const rows = new Map<string, Record<string, unknown>>();
  for (let i = 0; i < 4000; i++) {
    const row = {
      website_id: w,
      day: day(r(60)),
      bot: BOTS[r(BOTS.length)],
      url: urls[r(urls.length)],
      status: STATUSES[r(STATUSES.length)],
      verification: VERIFICATIONS[r(3)],
      hits: 1 + r(50),
    };
    const at = Date.parse(`${row.day}T00:00:00Z`) + r(86_400_000);
    rows.set(`${row.day}|${row.bot}|${row.url}|${row.status}|${row.verification}`, {
      ...row,
      last_seen: `${new Date(at).toISOString().slice(0, 19)}.${String(r(1_000_000)).padStart(6, '0')}Z`,
    });
  }
  await t.db('rm_crawler_hits').insert([...rows.values()]);
  const cites = Array.from({ length: 300 }, () => ({
    response_id: randomUUID(),
    website_id: w,
    normalized_url: r(4) === 0 ? `${HOST}/cited-only-${r(30)}` : urls[r(urls.length)],
    run_at: new Date(Date.UTC(2026, 0, 1 + r(60), r(24))).toISOString(),
  }));
  await t.db('rm_content_cites').insert(cites);
  await t.db('rm_crawler_sites').insert({ website_id: w, version: seed });
  return w;
}

const PERIODS: [string, string][] = [
  ['2025-12-01', '2026-12-31'],
  ['2026-01-10', '2026-02-05'],
  ['2026-01-03', '2026-01-03'],
  ['2026-05-01', '2026-05-30'],
];

describe('crawlers: activity and pages from the hits held in memory', () => {
  it('given random hits, when activity is read per bot, day, path and status with filters, then it is what Postgres groups', async () => {
    const w = await givenRandomHits(11);
    for (const [start, end] of PERIODS)
      for (const group_by of ['bot', 'day', 'path', 'status'] as const)
        for (const verification of ['verified', 'unverified', 'unverifiable', 'all'] as const)
          for (const bots of [undefined, ['GPTBot', 'bingbot', 'NoSuchBot']]) {
            const r = { start, end, group_by, verification, bots };
            const got = (await crawlerActivity(t.db, w, r)).data.map(({ operator: _o, purpose: _p, ...x }) => x);
            expect(got, JSON.stringify(r)).toEqual(await expectedActivity(w, r));
          }
  });

  it('given random hits and citations, when pages are read over periods, filters and pages, then they are the SQL join in its order', async () => {
    const w = await givenRandomHits(12);
    for (const [start, end] of PERIODS)
      for (const only of [undefined, 'crawled_not_cited', 'cited_not_crawled'] as const) {
        const all = await expectedPages(w, start, end, only);
        for (const page of [
          { page_num: 0, page_size: 1000 },
          { page_num: 0, page_size: 7 },
          { page_num: 3, page_size: 11 },
        ]) {
          const got = await crawledPages(t.db, w, HOST, { start, end, only }, page);
          const from = page.page_num * page.page_size;
          expect(got.data, `${start} ${end} ${only} ${page.page_num}`).toEqual(all.slice(from, from + page.page_size));
          expect(got.has_more).toBe(all.length > from + page.page_size);
        }
      }
  });

  it('given a website read once, when its hits move with the version, then the next read sees them; at the same version the held hits answer', async () => {
    const w = await givenRandomHits(13);
    const r = { start: '2026-01-01', end: '2026-03-31', group_by: 'bot' as const, verification: 'all' as const };
    const before = (await crawlerActivity(t.db, w, r)).data;
    await t.db('rm_crawler_hits').insert({
      website_id: w,
      day: '2026-01-05',
      bot: 'NewBot',
      url: `${HOST}/new`,
      status: 200,
      verification: 'verified',
      hits: 5,
      last_seen: '2026-01-05T10:00:00Z',
    });
    expect((await crawlerActivity(t.db, w, r)).data).toEqual(before);
    await t.db('rm_crawler_sites').where('website_id', w).update({ version: 1000 });
    const after = (await crawlerActivity(t.db, w, r)).data;
    expect(after.find((x) => x.bot === 'NewBot')).toMatchObject({ hits: 5, pages: 1, last_seen: '2026-01-05T10:00:00.000Z' });
  });
});
