import { Transform, type Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { z } from 'zod';
import { PlainDay } from '../domain/dates';
import { importCrawlerLog } from '../../commands/crawlers/import-crawler-log';
import { crawledPages, crawlerActivity } from '../../queries/crawlers/read';
import type { CrawledPages, CrawlerActivity } from '../../queries/crawlers/views';
import { botMatcher, LOG_FORMATS, type LogFormat } from '../analysis/crawler-logs';
import type { Need } from '../domain/principal';
import { PageNum, PageSize, text, WebsiteId } from '../domain/schemas';
import { type Caller, caughtUp, commandContextOf, dbOf, flagStale, type Reads, websiteFor } from './context';
import { badRequest, ProblemError } from './problem';

/** AI crawler analytics (docs/api/crawlers.md): log ingestion, verified activity, crawled and cited pages. */

const IMPORT: Need = { category: 'integrations', level: 'edit' };
const VIEW: Need = { category: 'analytics', level: 'view' };
const READS: Reads = ['crawlers'];
/** The largest log body, as sent (compressed or not). */
export const MAX_LOG_BYTES = 1024 ** 3;
export const NOT_GZIP = 'body: is not gzip data, as Content-Encoding: gzip declares';

const Day = PlainDay;

export const CrawlerLogQuery = z.strictObject({
  website_id: WebsiteId,
  format: z.enum(LOG_FORMATS, { error: `must be one of ${LOG_FORMATS.join(', ')}` }).describe('combined, json (Cloudflare or Vercel) or cloudfront'),
});

const period = {
  start_date: Day.optional().describe('first UTC day, YYYY-MM-DD (default: 29 days before end_date)'),
  end_date: Day.optional().describe('last UTC day, YYYY-MM-DD (default: today)'),
};

export const CrawlerActivityInput = z.strictObject({
  website_id: WebsiteId,
  ...period,
  bots: text().max(2000, 'must be at most 2000 characters').optional().describe('comma-separated robots tokens (e.g. GPTBot,ClaudeBot); default all'),
  verification: z.enum(['verified', 'unverified', 'unverifiable', 'all']).default('verified').describe('which hits count (default verified)'),
  group_by: z.enum(['bot', 'day', 'path', 'status']).default('bot').describe('one row per bot (default), or per bot and day, path or status'),
});

export const CrawledPagesInput = z.strictObject({
  website_id: WebsiteId,
  ...period,
  only: z.enum(['crawled_not_cited', 'cited_not_crawled']).optional().describe('only pages crawled and never cited, or cited and never crawled'),
  page_num: PageNum(true),
  page_size: PageSize(true),
});

function dayRange(input: { start_date?: string; end_date?: string }): { start: string; end: string } {
  const end = input.end_date ?? new Date().toISOString().slice(0, 10);
  const start = input.start_date ?? new Date(Date.parse(`${end}T00:00:00Z`) - 29 * 86_400_000).toISOString().slice(0, 10);
  if (end < start) throw badRequest(`end_date: is before start_date (${start})`);
  return { start, end };
}

/** The host of a website's normalized URL: a crawled page is that host plus the request path. */
const hostOf = (normalizedUrl: string) => normalizedUrl.split(/[/?]/)[0];

class BodyTooLarge extends Error {}

/** POST /api/v1/crawler-logs: streams the body (gunzipped when declared) into the website's crawler hits. */
export async function importCrawlerLogs(
  c: Caller,
  input: z.output<typeof CrawlerLogQuery>,
  body: Readable,
  headers: { encoding?: string; length?: string },
) {
  const w = await websiteFor(c, input.website_id, IMPORT);
  const encoding = (headers.encoding ?? 'identity').trim().toLowerCase();
  if (encoding !== 'gzip' && encoding !== 'identity' && encoding !== '') {
    throw badRequest(`Content-Encoding: ${headers.encoding} is not accepted (gzip or none)`);
  }
  if (headers.length !== undefined && Number(headers.length) > MAX_LOG_BYTES)
    throw new ProblemError(413, 'Request body is too large (at most 1 GiB)');
  let sent = 0;
  const limit = new Transform({
    transform(chunk: Buffer, _enc, done) {
      sent += chunk.length;
      if (sent > MAX_LOG_BYTES) return done(new BodyTooLarge());
      done(null, chunk);
    },
  });
  const counted = body.pipe(limit);
  body.on('error', (e) => limit.destroy(e));
  let source: Readable = counted;
  let gzipFailed = false;
  if (encoding === 'gzip') {
    const gunzip = createGunzip();
    counted.on('error', (e) => gunzip.destroy(e));
    gunzip.on('error', (e) => {
      if ((e as { code?: string }).code?.startsWith('Z_')) gzipFailed = true;
    });
    source = counted.pipe(gunzip);
  }
  try {
    const r = await importCrawlerLog(
      { db: dbOf(c), ctx: commandContextOf(c, w.id), website: { id: w.id, host: hostOf(w.normalized_url) }, format: input.format as LogFormat },
      source,
    );
    await caughtUp(c.deps, r.position, READS);
    const { position: _p, ...counts } = r;
    return counts;
  } catch (e) {
    if (e instanceof BodyTooLarge) throw new ProblemError(413, 'Request body is too large (at most 1 GiB)');
    if (gzipFailed || (e as { code?: string }).code?.startsWith('Z_')) throw badRequest(NOT_GZIP);
    throw e;
  } finally {
    body.resume();
  }
}

export async function getCrawlerActivity(c: Caller, input: z.output<typeof CrawlerActivityInput>): Promise<CrawlerActivity> {
  const w = await websiteFor(c, input.website_id, VIEW);
  const known = botMatcher().byToken;
  // tokens compare case-insensitively: each is read as the list spells it
  const bots = input.bots
    ?.split(',')
    .map((b) => b.trim())
    .filter(Boolean)
    .map((b) => known.get(b.toLowerCase())?.token ?? b);
  const range = dayRange(input);
  return flagStale(c, w.id, READS, crawlerActivity(dbOf(c), w.id, { ...range, bots, verification: input.verification, group_by: input.group_by }));
}

export async function getCrawledPages(c: Caller, input: z.output<typeof CrawledPagesInput>): Promise<CrawledPages> {
  const w = await websiteFor(c, input.website_id, VIEW);
  const range = dayRange(input);
  return flagStale(
    c,
    w.id,
    ['crawlers', 'answers'],
    crawledPages(dbOf(c), w.id, hostOf(w.normalized_url), { ...range, only: input.only }, { page_num: input.page_num, page_size: input.page_size }),
  );
}
