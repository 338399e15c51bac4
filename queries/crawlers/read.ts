import type { Knex } from 'knex';
import { botMatcher } from '../../src/analysis/crawler-logs';
import { type PageRequest, pageInfo, pageRows } from '../paging';
import { codePointCompare, dayNumber, dayOfNumber, daysOfPeriod, type HitsIndex, hitsIndexOf, pageMarks } from './hits-index';
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
/** The path of a normalized URL (host/path?query): from its first "/" or "?". */
const pathOf = (url: string) => {
  const i = url.search(/[/?]/);
  return i < 0 ? '/' : url[i] === '?' ? `/${url.slice(i)}` : url.slice(i);
};

/** Hits, distinct pages and last visit of one group (a bot, or a bot and a day, page or status). */
interface Group {
  bot: number;
  g: number;
  hits: number;
  pages: number;
  last: number;
}

/**
 * The website's activity over the period from its hits held in memory, grouped per bot (or bot and day, page or status),
 * in the order of bot then the group's value.
 */
function activityGroups(x: HitsIndex, r: ActivityRequest): Group[] {
  const [first, end] = daysOfPeriod(x, dayNumber(r.start), dayNumber(r.end));
  const wanted = r.bots?.length ? new Set(r.bots) : null;
  const botOk = Uint8Array.from(x.bots, (b) => (!wanted || wanted.has(b) ? 1 : 0));
  const verification = r.verification === 'all' ? -1 : x.verifications.indexOf(r.verification);
  if (r.verification !== 'all' && verification < 0) return [];
  const by = r.group_by;
  const byDay = by === 'day';
  const byPath = by === 'path';
  // the group's part after the bot: a column of the row, or the day
  const sub = by === 'status' ? x.rowStatus : byPath ? x.rowUrl : null;
  const width = by === 'bot' ? 1 : by === 'status' ? x.statuses.length : byPath ? x.urls.length : end - first;
  const groups = x.bots.length * width;
  const hits = new Float64Array(groups);
  const pages = new Int32Array(groups);
  const last = new Float64Array(groups);
  // a page counts once per group: marked with the day's stamp per (bot, page) by day (rows come a day at a time), else per (group, page)
  const nu = x.urls.length;
  const marks = pageMarks(byPath ? 0 : (byDay ? x.bots.length : groups) * nu);
  const { rowBot, rowUrl, rowVerification, rowHits, rowLast } = x;
  for (let d = first; d < end; d++) {
    const stamp = byDay ? d - first + 1 : 1;
    for (let i = x.dayStart[d]; i < x.dayStart[d + 1]; i++) {
      const bot = rowBot[i];
      if (botOk[bot] === 0 || (verification >= 0 && rowVerification[i] !== verification)) continue;
      const g = bot * width + (sub ? sub[i] : byDay ? d - first : 0);
      if (pages[g] === 0 || rowLast[i] > last[g]) last[g] = rowLast[i];
      hits[g] += rowHits[i];
      if (byPath) {
        if (pages[g] === 0) pages[g] = 1;
        continue;
      }
      const k = (byDay ? bot : g) * nu + rowUrl[i];
      if (marks.dense) {
        if (marks.dense[k] !== stamp) {
          marks.dense[k] = stamp;
          pages[g]++;
        }
      } else if (marks.sparse.get(k) !== stamp) {
        marks.sparse.set(k, stamp);
        pages[g]++;
      }
    }
  }
  const out: Group[] = [];
  for (let g = 0; g < groups; g++)
    if (pages[g] > 0) out.push({ bot: Math.floor(g / width), g: g % width, hits: hits[g], pages: pages[g], last: last[g] });
  return out;
}

/** GET /api/v1/crawlers/activity: hits, distinct pages and last visit per bot, or per bot and day, page or status. */
export async function crawlerActivity(db: Knex, websiteId: string, r: ActivityRequest): Promise<CrawlerActivity> {
  const x = await hitsIndexOf(db, websiteId);
  const bots = botMatcher().byToken;
  const [first] = daysOfPeriod(x, dayNumber(r.start), dayNumber(r.end));
  return {
    data: activityGroups(x, r).map((a) => {
      const token = x.bots[a.bot];
      const b = bots.get(token.toLowerCase());
      const row: CrawlerActivity['data'][number] = {
        bot: token,
        operator: b?.operator ?? '',
        purpose: b?.purpose ?? 'conversational',
        hits: a.hits,
        pages: a.pages,
        last_seen: new Date(a.last).toISOString(),
      };
      if (r.group_by === 'day') row.day = dayOfNumber(x.days[first + a.g]);
      if (r.group_by === 'path') row.path = pathOf(x.urls[a.g]);
      if (r.group_by === 'status') row.status = x.statuses[a.g];
      return row;
    }),
  };
}

export interface PagesRequest extends DayRange {
  only?: 'crawled_not_cited' | 'cited_not_crawled';
}

const likeEscape = (s: string) => s.replace(/[\\%_]/g, (c) => `\\${c}`);

interface PageRow {
  url: string;
  crawls: number;
  bots: string[];
  last_crawled: string | null;
  cited: number;
  last_cited: string | null;
}

/** Per page crawled by verified bots in the period: hits, its bots in order and the last crawl. */
function crawledInPeriod(x: HitsIndex, r: DayRange): Map<string, PageRow> {
  const [first, end] = daysOfPeriod(x, dayNumber(r.start), dayNumber(r.end));
  const verified = x.verifications.indexOf('verified');
  const crawls = new Float64Array(x.urls.length);
  const last = new Float64Array(x.urls.length);
  const firstBot = pageMarks(x.urls.length * x.bots.length);
  const botsOf: number[][] = [];
  for (let i = x.dayStart[first]; i < x.dayStart[end]; i++) {
    if (x.rowVerification[i] !== verified) continue;
    const u = x.rowUrl[i];
    if (crawls[u] === 0 || x.rowLast[i] > last[u]) last[u] = x.rowLast[i];
    crawls[u] += x.rowHits[i];
    const k = u * x.bots.length + x.rowBot[i];
    if (firstBot.dense ? firstBot.dense[k] === 0 : !firstBot.sparse.has(k)) {
      if (firstBot.dense) firstBot.dense[k] = 1;
      else firstBot.sparse.set(k, 1);
      (botsOf[u] ??= []).push(x.rowBot[i]);
    }
  }
  const out = new Map<string, PageRow>();
  botsOf.forEach((bots, u) => {
    const row = { crawls: crawls[u], bots: bots.sort((a, b) => a - b).map((b) => x.bots[b]), last_crawled: new Date(last[u]).toISOString() };
    out.set(x.urls[u], { url: x.urls[u], ...row, cited: 0, last_cited: null });
  });
  return out;
}

/**
 * GET /api/v1/crawlers/pages: the website's pages crawled by verified AI bots in the period (its hits held in memory),
 * joined by normalized URL with the answers citing them in the period (rm_content_cites, the answers read model's
 * citation join).
 */
export async function crawledPages(db: Knex, websiteId: string, host: string, r: PagesRequest, page: PageRequest): Promise<CrawledPages> {
  const h = likeEscape(host);
  const [x, cites] = await Promise.all([
    hitsIndexOf(db, websiteId),
    db.raw(
      `select normalized_url as url, count(distinct response_id)::bigint as cited, max(run_at) as last_cited
         from rm_content_cites
        where website_id = ? and run_at >= ?::date and run_at < ?::date + 1
          and (normalized_url = ? or normalized_url like ? or normalized_url like ?)
        group by normalized_url`,
      [websiteId, r.start, r.end, host, `${h}/%`, `${h}?%`],
    ),
  ]);
  const pages = crawledInPeriod(x, r);
  for (const c of cites.rows as { url: string; cited: string; last_cited: Date }[]) {
    const p = pages.get(c.url);
    const cited = { cited: Number(c.cited), last_cited: iso(c.last_cited) };
    if (p) Object.assign(p, cited);
    else pages.set(c.url, { url: c.url, crawls: 0, bots: [], last_crawled: null, ...cited });
  }
  const rows = [...pages.values()]
    .filter((p) => (r.only === 'crawled_not_cited' ? p.cited === 0 : r.only === 'cited_not_crawled' ? p.crawls === 0 : true))
    .sort((a, b) => b.crawls - a.crawls || b.cited - a.cited || codePointCompare(a.url, b.url));
  const shown = rows.slice(page.page_num * page.page_size, page.page_num * page.page_size + page.page_size + 1);
  return { data: pageRows(shown, page), ...pageInfo(shown, page) };
}
