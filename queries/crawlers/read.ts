import type { Knex } from 'knex';
import { botMatcher } from '../../src/analysis/crawler-logs';
import { type PageRequest, pageInfo, pageRows } from '../paging';
import type { CrawledPages, CrawlerActivity } from './views';

export interface DayRange {
  start: string;
  end: string;
}

export interface ActivityRequest extends DayRange {
  bots?: string[];
  verification: 'verified' | 'unverified' | 'unverifiable' | 'all';
  group_by: 'bot' | 'day' | 'path' | 'status';
}

const iso = (d: Date | string) => (d instanceof Date ? d.toISOString() : new Date(d).toISOString());
const dayText = (d: Date | string) => (d instanceof Date ? d.toISOString().slice(0, 10) : String(d).slice(0, 10));
/** The path of a normalized URL (host/path?query): from its first "/" or "?". */
const pathOf = (url: string) => {
  const i = url.search(/[/?]/);
  return i < 0 ? '/' : url[i] === '?' ? `/${url.slice(i)}` : url.slice(i);
};

/** The filters every activity read shares: website, verification, bots (table alias-free); `allStored`: a table with 'all' rows. */
function filters(websiteId: string, r: ActivityRequest, allStored = false): { sql: string; params: Knex.Value[] } {
  const where: string[] = ['website_id = ?'];
  const params: Knex.Value[] = [websiteId];
  if (r.verification !== 'all' || allStored) {
    where.push('verification = ?');
    params.push(r.verification);
  }
  if (r.bots?.length) {
    where.push('bot = any(?::text[])');
    params.push(r.bots);
  }
  return { sql: where.join(' and '), params };
}

type Grouped = { bot: string; g?: unknown; hits: string; pages: number; last_seen: Date }[];

/**
 * Per bot (or bot and status): hits from the daily rollup, distinct pages from the pages' crawl days (a page counts when
 * its days overlap the period), so a long period reads one row per page rather than one per page and day.
 */
async function fromRollups(db: Knex, websiteId: string, r: ActivityRequest): Promise<Grouped> {
  const f = filters(websiteId, r);
  const g = r.group_by === 'status' ? ', status' : '';
  const on = r.group_by === 'status' ? 'and p.status = h.status' : '';
  // per bot: one row per page (verification 'all' folded in by the projection); per status with one verification: one row
  // per page too; per status over all verifications: a page's verifications folded here
  const days = `days && daterange(?::date, ?::date, '[]')`;
  const folded = filters(websiteId, r, true);
  const pages = !g
    ? `select bot, count(*)::int as pages from rm_crawler_bot_pages where ${folded.sql} and ${days} group by bot`
    : r.verification !== 'all'
      ? `select bot, status, count(*)::int as pages from rm_crawler_url_days where ${f.sql} and ${days} group by bot, status`
      : `select bot, status, count(*)::int as pages from (
           select distinct bot, status, url from rm_crawler_url_days where ${f.sql} and ${days}
         ) d group by bot, status`;
  const pageParams = !g ? folded.params : f.params;
  return (
    await db.raw(
      `with h as (
         select bot${g}, sum(hits)::bigint as hits, max(last_seen) as last_seen from rm_crawler_daily
         where ${f.sql} and day between ?::date and ?::date group by bot${g}
       ), p as (${pages})
       select h.bot${g ? ', h.status as g' : ''}, h.hits, coalesce(p.pages, 0) as pages, h.last_seen
       from h left join p on p.bot = h.bot ${on} order by h.bot${g ? ', h.status' : ''}`,
      [...f.params, r.start, r.end, ...pageParams, r.start, r.end],
    )
  ).rows;
}

/** Per bot and day or page: the hits table itself (a day's or a page's rows). */
async function fromHits(db: Knex, websiteId: string, r: ActivityRequest): Promise<Grouped> {
  const f = filters(websiteId, r);
  const g = r.group_by === 'day' ? 'day' : 'url';
  const pages = g === 'url' ? '1' : 'count(distinct url)';
  return (
    await db.raw(
      `select bot, ${g} as g, sum(hits)::bigint as hits, ${pages}::int as pages, max(last_seen) as last_seen
       from rm_crawler_hits where ${f.sql} and day between ?::date and ?::date group by bot, g order by bot, g`,
      [...f.params, r.start, r.end],
    )
  ).rows;
}

/** GET /api/v1/crawlers/activity: hits, distinct pages and last visit per bot, or per bot and day, page or status. */
export async function crawlerActivity(db: Knex, websiteId: string, r: ActivityRequest): Promise<CrawlerActivity> {
  const rows = r.group_by === 'bot' || r.group_by === 'status' ? await fromRollups(db, websiteId, r) : await fromHits(db, websiteId, r);
  const bots = botMatcher().byToken;
  return {
    data: rows.map((x) => {
      const b = bots.get(x.bot.toLowerCase());
      const row: CrawlerActivity['data'][number] = {
        bot: x.bot,
        operator: b?.operator ?? '',
        purpose: b?.purpose ?? 'conversational',
        hits: Number(x.hits),
        pages: x.pages,
        last_seen: iso(x.last_seen),
      };
      if (r.group_by === 'day') row.day = dayText(x.g as Date);
      if (r.group_by === 'path') row.path = pathOf(String(x.g));
      if (r.group_by === 'status') row.status = Number(x.g);
      return row;
    }),
  };
}

export interface PagesRequest extends DayRange {
  only?: 'crawled_not_cited' | 'cited_not_crawled';
}

const likeEscape = (s: string) => s.replace(/[\\%_]/g, (c) => `\\${c}`);

/**
 * GET /api/v1/crawlers/pages: the website's pages crawled by verified AI bots in the period, joined by normalized URL
 * with the answers citing them in the period (rm_content_cites, the answers read model's citation join).
 */
export async function crawledPages(db: Knex, websiteId: string, host: string, r: PagesRequest, page: PageRequest): Promise<CrawledPages> {
  const only =
    r.only === 'crawled_not_cited' ? 'where coalesce(c.cited, 0) = 0' : r.only === 'cited_not_crawled' ? 'where coalesce(k.crawls, 0) = 0' : '';
  const h = likeEscape(host);
  const rows = (
    await db.raw(
      `with k as (
         select url, sum(hits)::bigint as crawls, array_agg(distinct bot order by bot) as bots, max(last_seen) as last_crawled
         from rm_crawler_hits where website_id = ? and verification = 'verified' and day between ?::date and ?::date group by url
       ), c as (
         select normalized_url as url, count(distinct response_id)::bigint as cited, max(run_at) as last_cited
         from rm_content_cites
         where website_id = ? and run_at >= ?::date and run_at < ?::date + 1
           and (normalized_url = ? or normalized_url like ? or normalized_url like ?)
         group by normalized_url
       )
       select coalesce(k.url, c.url) as url, coalesce(k.crawls, 0) as crawls, coalesce(k.bots, '{}') as bots, k.last_crawled,
              coalesce(c.cited, 0) as cited, c.last_cited
       from k full outer join c on c.url = k.url ${only}
       order by coalesce(k.crawls, 0) desc, coalesce(c.cited, 0) desc, 1
       offset ? limit ?`,
      [websiteId, r.start, r.end, websiteId, r.start, r.end, host, `${h}/%`, `${h}?%`, page.page_num * page.page_size, page.page_size + 1],
    )
  ).rows as { url: string; crawls: string; bots: string[]; last_crawled: Date | null; cited: string; last_cited: Date | null }[];
  const shown = pageRows(rows, page).map((x) => ({
    url: x.url,
    crawls: Number(x.crawls),
    bots: x.bots,
    last_crawled: x.last_crawled ? iso(x.last_crawled) : null,
    cited: Number(x.cited),
    last_cited: x.last_cited ? iso(x.last_cited) : null,
  }));
  return { data: shown, ...pageInfo(rows, page) };
}
