import { isUtf8 } from 'node:buffer';
import { hash } from 'node:crypto';
import type { Knex } from 'knex';
import { type BotMatcher, botMatcher, type LogFormat, lineParser } from '../../src/analysis/crawler-logs';
import { type BotRanges, crawlerRanges, inRanges } from '../../src/analysis/crawler-ranges';
import { CRAWLER_STREAM_PREFIX, type EventData } from '../../src/domain/events';
import { newId } from '../../src/domain/ids';
import { tryNormalizeUrl } from '../../src/domain/urls';
import type { Position } from '../../src/eventstore/port';
import { type CommandContext, newEventsFor } from '../handle';

/** What an import counts: `ai_hits` = verified + unverified + unverifiable, the new AI-crawler hits it added. */
export interface CrawlerImportCounts {
  lines: number;
  ai_hits: number;
  verified: number;
  unverified: number;
  unverifiable: number;
  duplicates: number;
  rejected: number;
}

/** A line longer than this is rejected (a 100 KB user agent is no crawler's). */
export const MAX_LINE_BYTES = 16 * 1024;
/** New hits per batch: one insert of their hashes and one event. */
const BATCH = 5000;

type Verification = 'verified' | 'unverified' | 'unverifiable';
type Row = EventData<'CrawlerHitsImported'>['rows'][number];

interface Pending {
  hash: Buffer;
  day: string;
  bot: string;
  url: string;
  status: number;
  verification: Verification;
  time: number;
}

const migrated = new WeakMap<Knex, Promise<void>>();
/** The write side's record of imported lines (a SHA-256 per line per website): what makes a re-sent line a duplicate. */
export function migrateCrawlerLines(db: Knex): Promise<void> {
  let p = migrated.get(db);
  if (!p) {
    p = db
      .transaction(async (trx) => {
        await trx.raw(`select pg_advisory_xact_lock(hashtextextended('aivis-migrate-crawler-lines', 0))`);
        await trx.raw(
          `create table if not exists aivis_crawler_lines (website_id uuid not null, hash bytea not null, primary key (website_id, hash))`,
        );
      })
      .catch((e) => {
        migrated.delete(db);
        throw e;
      });
    migrated.set(db, p);
  }
  return p;
}

export interface ImportDeps {
  db: Knex;
  ctx: CommandContext;
  /** the website's id and host (its normalized URL's host): a page is the host plus the request path */
  website: { id: string; host: string };
  format: LogFormat;
  onProgress?: (bytes: number, counts: CrawlerImportCounts) => void;
}

/**
 * Streams a log into the website's crawler hits: lines split across chunks, each AI-crawler line hashed, the batch's
 * new hashes inserted (a line seen before, in an earlier import or this body, adds nothing) and the batch's new hits
 * appended as one event of aggregates. Memory stays at one batch and one line whatever the body's size. A batch whose
 * event cannot be appended takes its hashes back, so sending the body again imports it.
 */
export async function importCrawlerLog(
  deps: ImportDeps,
  body: AsyncIterable<Buffer | string>,
): Promise<CrawlerImportCounts & { position: Position | null }> {
  await migrateCrawlerLines(deps.db);
  const counts: CrawlerImportCounts = { lines: 0, ai_hits: 0, verified: 0, unverified: 0, unverifiable: 0, duplicates: 0, rejected: 0 };
  const bots: BotMatcher = botMatcher();
  const ranges = crawlerRanges().current();
  const parser = lineParser(deps.format);
  const importId = newId();
  const urls = new Map<string, string | null>();
  const verdicts = new Map<string, Verification | null>();
  let pending: Pending[] = [];
  let position: Position | null = null;
  let bytes = 0;

  const pageOf = (path: string): string | null => {
    let u = urls.get(path);
    if (u === undefined) {
      u = path.length > 2048 ? null : tryNormalizeUrl(`https://${deps.website.host}${path}`);
      if (urls.size > 50_000) urls.clear();
      urls.set(path, u);
    }
    return u;
  };
  const verdictOf = (bot: string, published: BotRanges | undefined, ip: string): Verification | null => {
    const key = `${bot}\t${ip}`;
    let v = verdicts.get(key);
    if (v === undefined) {
      const inside = published ? inRanges(published, ip) : inRanges({ v4: new Uint32Array(), v6: [], count: 0 }, ip);
      v = inside === null ? null : !published ? 'unverifiable' : inside ? 'verified' : 'unverified';
      if (verdicts.size > 50_000) verdicts.clear();
      verdicts.set(key, v);
    }
    return v;
  };

  const line = (buf: Buffer) => {
    if (buf.length === 0) return;
    if (buf[0] === 0x23) {
      parser.header(buf.toString('utf8'));
      return;
    }
    counts.lines++;
    if (buf.indexOf(0) !== -1 || !isUtf8(buf)) {
      counts.rejected++;
      return;
    }
    const hit = parser.parse(buf.toString('utf8'));
    if (!hit) {
      counts.rejected++;
      return;
    }
    const bot = bots.match(hit.ua);
    if (!bot) return;
    const url = pageOf(hit.path);
    const verification = verdictOf(bot.token, ranges.get(bot.token.toLowerCase()), hit.ip);
    const day = new Date(hit.time);
    if (url === null || verification === null || Number.isNaN(day.getTime())) {
      counts.rejected++;
      return;
    }
    pending.push({
      hash: hash('sha256', buf, 'buffer'),
      day: day.toISOString().slice(0, 10),
      bot: bot.token,
      url,
      status: hit.status,
      verification,
      time: hit.time,
    });
  };

  const flush = async () => {
    if (pending.length === 0) return;
    const batch = pending;
    pending = [];
    const unique = new Map<string, Pending>();
    for (const p of batch) {
      const k = p.hash.toString('base64');
      if (unique.has(k)) counts.duplicates++;
      else unique.set(k, p);
    }
    const hashes = [...unique.values()].map((p) => p.hash);
    const r = await deps.db.raw(
      `insert into aivis_crawler_lines (website_id, hash) select ?, unnest(?::bytea[]) on conflict do nothing returning hash`,
      [deps.website.id, hashes],
    );
    const fresh = new Set<string>((r.rows as { hash: Buffer }[]).map((x) => x.hash.toString('base64')));
    counts.duplicates += unique.size - fresh.size;
    const rows = new Map<string, Row>();
    for (const [k, p] of unique) {
      if (!fresh.has(k)) continue;
      counts.ai_hits++;
      counts[p.verification]++;
      const key = `${p.day}\t${p.bot}\t${p.url}\t${p.status}\t${p.verification}`;
      const seen = new Date(p.time).toISOString();
      const row = rows.get(key);
      if (row) {
        row.hits++;
        if (seen > row.last_seen) row.last_seen = seen;
      } else rows.set(key, { day: p.day, bot: p.bot, url: p.url, status: p.status, verification: p.verification, hits: 1, last_seen: seen });
    }
    if (rows.size === 0) return;
    const freshHashes = [...fresh].map((k) => Buffer.from(k, 'base64'));
    try {
      const appended = await deps.ctx.store.append(
        `${CRAWLER_STREAM_PREFIX}${deps.website.id}`,
        newEventsFor(deps.ctx, [
          { type: 'CrawlerHitsImported', data: { website_id: deps.website.id, import_id: importId, rows: [...rows.values()] } },
        ]),
        'any',
      );
      position = appended.position;
    } catch (e) {
      await deps.db.raw(`delete from aivis_crawler_lines where website_id = ? and hash = any(?::bytea[])`, [deps.website.id, freshHashes]);
      throw e;
    }
  };

  // one batch written while the next is read: parsing and the database's work overlap, batches still appended in order
  let writing = null as Promise<void> | null;
  const write = async () => {
    if (writing) await writing;
    writing = flush();
    writing.catch(() => {});
  };
  let carry: Buffer | null = null;
  let oversize = false;
  try {
    for await (const chunk of body) {
      const buf = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      bytes += buf.length;
      let start = 0;
      for (;;) {
        const nl = buf.indexOf(10, start);
        if (nl === -1) break;
        if (oversize) {
          oversize = false;
          counts.lines++;
          counts.rejected++;
        } else {
          let l = carry ? Buffer.concat([carry, buf.subarray(start, nl)]) : buf.subarray(start, nl);
          carry = null;
          if (l.length > 0 && l[l.length - 1] === 13) l = l.subarray(0, l.length - 1);
          if (l.length > MAX_LINE_BYTES) {
            counts.lines++;
            counts.rejected++;
          } else line(l);
        }
        start = nl + 1;
      }
      if (start < buf.length && !oversize) {
        const rest = buf.subarray(start);
        carry = carry ? Buffer.concat([carry, rest]) : Buffer.from(rest);
        if (carry.length > MAX_LINE_BYTES) {
          carry = null;
          oversize = true;
        }
      }
      if (pending.length >= BATCH) await write();
      deps.onProgress?.(bytes, counts);
    }
  } catch (e) {
    // the batch under way ends (appended, or its hashes taken back) before the failure is answered
    await writing?.catch(() => {});
    throw e;
  }
  if (oversize) {
    counts.lines++;
    counts.rejected++;
  } else if (carry) {
    let l = carry;
    if (l.length > 0 && l[l.length - 1] === 13) l = l.subarray(0, l.length - 1);
    line(l);
  }
  await write();
  await writing;
  deps.onProgress?.(bytes, counts);
  return { ...counts, position };
}
