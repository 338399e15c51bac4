import { isUtf8 } from 'node:buffer';
import { hash } from 'node:crypto';
import type { Knex } from 'knex';
import {
  type BotMatcher,
  botMatcher,
  type CrawlerBot,
  combinedTime,
  type LogFormat,
  lineParser,
  newCombinedScan,
  scanCombined,
} from '../../src/analysis/crawler-logs';
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
/** New AI-crawler lines per batch: one insert of their hashes. */
const BATCH = 5000;
/** Rows per event (an event stays under a megabyte). */
const EVENT_ROWS = 5000;
/**
 * The batches' new hits are summed per (day, bot, page, status, verification) over the import and appended once this
 * many rows (or HELD_HITS hits) are held, and at its end: a page a bot fetched a hundred times a day is one row, not one
 * per batch it came in.
 */
const HELD_ROWS = 50_000;
const HELD_HITS = 500_000;

type Verification = 'verified' | 'unverified' | 'unverifiable';
type Row = EventData<'CrawlerHitsImported'>['rows'][number];

interface Pending {
  /** SHA-256 of the line, as a 32-character latin1 string */
  hash: string;
  day: number;
  bot: string;
  /** the bot's place in the matcher's list */
  botIndex: number;
  url: string;
  status: number;
  verification: Verification;
  time: number;
}

const DAY_MS = 86_400_000;
const VERIFICATIONS: Verification[] = ['verified', 'unverified', 'unverifiable'];
/** more than the bots of infra/ai-crawlers.json (a row's key is a number: day, bot, status, verification) */
const BOT_SLOTS = 64;

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
  /** rows held before an append (HELD_ROWS; tests set fewer) */
  heldRows?: number;
}

/**
 * Streams a log into the website's crawler hits: lines split across chunks, each AI-crawler line hashed, a batch's
 * new hashes inserted (a line seen before, in an earlier import or this body, adds nothing), the new hits summed per
 * row over the import and appended as events of aggregates (HELD_ROWS). Memory stays at one batch, the held rows and
 * one line whatever the body's size. Held rows whose events cannot be appended take their hashes back, so sending the
 * body again imports them.
 *
 * Combined lines are read from their bytes (scanCombined): a chunk's whole lines are checked for NUL and UTF-8 at once,
 * and a line becomes strings only when its agent (looked up by its bytes) is an AI crawler's.
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
  const combined = deps.format === 'combined';
  const scan = newCombinedScan();
  const importId = newId();
  const urls = new Map<string, string | null>();
  const verdicts = new Map<string, Verification | null>();
  // the bot of an agent, by the agent's bytes as latin1 (one string per distinct byte sequence); null: no AI crawler
  const agents = new Map<string, CrawlerBot | null>();
  const dayText = new Map<number, string>();
  const botIndexes = new Map(bots.bots.map((b, i) => [b, i]));
  if (bots.bots.length > BOT_SLOTS) throw new Error(`more than ${BOT_SLOTS} bots in the list`);
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
  const botOf = (b: Buffer, start: number, end: number): CrawlerBot | null => {
    const key = b.toString('latin1', start, end);
    let bot = agents.get(key);
    if (bot === undefined) {
      bot = bots.match(b.toString('utf8', start, end)) ?? null;
      if (agents.size > 50_000) agents.clear();
      agents.set(key, bot);
    }
    return bot;
  };

  /** An AI crawler's hit: kept for the next batch, or counted rejected. */
  const hitOf = (line: Buffer, start: number, end: number, bot: CrawlerBot, ip: string, path: string, status: number, time: number) => {
    const url = pageOf(path);
    const verification = verdictOf(bot.token, ranges.get(bot.token.toLowerCase()), ip);
    // as new Date(time) reads it: whole milliseconds, NaN outside its range
    const dayMs = Math.abs(time) <= 8.64e15 ? Math.trunc(time) : Number.NaN;
    if (url === null || verification === null || Number.isNaN(dayMs)) {
      counts.rejected++;
      return;
    }
    pending.push({
      hash: hash('sha256', start === 0 && end === line.length ? line : line.subarray(start, end), 'binary'),
      day: Math.floor(dayMs / DAY_MS),
      bot: bot.token,
      botIndex: botIndexes.get(bot) as number,
      url,
      status,
      verification,
      time,
    });
  };

  /** A line [start, end) of `buf` (no newline, no CR); `checked`: its bytes are known to be UTF-8 without NUL. */
  const line = (buf: Buffer, start: number, end: number, checked: boolean) => {
    if (end === start) return;
    if (buf[start] === 0x23) {
      parser.header(buf.toString('utf8', start, end));
      return;
    }
    counts.lines++;
    if (!checked) {
      const l = buf.subarray(start, end);
      if (l.indexOf(0) !== -1 || !isUtf8(l)) {
        counts.rejected++;
        return;
      }
    }
    if (combined) {
      if (!scanCombined(buf, start, end, scan)) {
        counts.rejected++;
        return;
      }
      const bot = botOf(buf, scan.uaStart, scan.uaEnd);
      if (bot === null) return;
      hitOf(
        buf,
        start,
        end,
        bot,
        buf.toString('utf8', start, scan.ipEnd),
        buf.toString('utf8', scan.pathStart, scan.pathEnd),
        scan.status,
        combinedTime(buf, scan.timeAt),
      );
      return;
    }
    const hit = parser.parse(buf.toString('utf8', start, end));
    if (!hit) {
      counts.rejected++;
      return;
    }
    const bot = bots.match(hit.ua);
    if (!bot) return;
    hitOf(buf, start, end, bot, hit.ip, hit.path, hit.status, hit.time);
  };

  // the new hits summed per row since the last append, and their hashes (taken back if the append fails)
  let held = new Map<string, Map<number, Row & { last: number }>>();
  let heldHashes: Buffer[] = [];
  let heldHits = 0;
  let heldRows = 0;

  const takeBack = async (hashes: Buffer[]) => {
    for (const h of hashes)
      await deps.db.raw(
        `delete from aivis_crawler_lines where website_id = ?
           and hash = any(array(select substring(?::bytea from i * 32 + 1 for 32) from generate_series(0, ?::int - 1) i))`,
        [deps.website.id, h, h.length / 32],
      );
  };

  /** Appends the held rows as events of EVENT_ROWS rows, in one append. */
  const append = async () => {
    if (heldRows === 0) return;
    const rows: Row[] = [];
    for (const page of held.values()) for (const { last, ...r } of page.values()) rows.push({ ...r, last_seen: new Date(last).toISOString() });
    const hashes = heldHashes;
    held = new Map();
    heldHashes = [];
    heldHits = 0;
    heldRows = 0;
    const events = [];
    for (let i = 0; i < rows.length; i += EVENT_ROWS)
      events.push({
        type: 'CrawlerHitsImported' as const,
        data: { website_id: deps.website.id, import_id: importId, rows: rows.slice(i, i + EVENT_ROWS) },
      });
    try {
      const appended = await deps.ctx.store.append(`${CRAWLER_STREAM_PREFIX}${deps.website.id}`, newEventsFor(deps.ctx, events), 'any');
      position = appended.position;
    } catch (e) {
      await takeBack(hashes);
      throw e;
    }
  };

  const flush = async (last: boolean) => {
    const batch = pending;
    pending = [];
    if (batch.length > 0) {
      const unique = new Map<string, Pending>();
      for (const p of batch) {
        if (unique.has(p.hash)) counts.duplicates++;
        else unique.set(p.hash, p);
      }
      const all = Buffer.allocUnsafe(unique.size * 32);
      let at = 0;
      for (const k of unique.keys()) at += all.write(k, at, 'latin1');
      const r = await deps.db.raw(
        `with added as (
           insert into aivis_crawler_lines (website_id, hash)
           select ?, substring(?::bytea from i * 32 + 1 for 32) from generate_series(0, ?::int - 1) i
           on conflict do nothing returning hash)
         select count(*)::int as n, string_agg(hash, ''::bytea) as fresh from added`,
        [deps.website.id, all, unique.size],
      );
      const { n, fresh } = (r.rows as { n: number; fresh: Buffer | null }[])[0];
      counts.duplicates += unique.size - n;
      if (n > 0) heldHashes.push(n === unique.size ? all : (fresh as Buffer));
      // every line new (a first import): no need to find them by their hashes
      const added: Iterable<Pending> =
        n === unique.size
          ? unique.values()
          : Array.from({ length: n }, (_, i) => unique.get((fresh as Buffer).toString('latin1', i * 32, i * 32 + 32)) as Pending);
      for (const p of added) {
        counts.ai_hits++;
        counts[p.verification]++;
        heldHits++;
        // per page (the cached URL string: its hash is computed once), then a number for the rest of the row's key
        let rows = held.get(p.url);
        if (!rows) {
          rows = new Map();
          held.set(p.url, rows);
        }
        const key = ((p.day * BOT_SLOTS + p.botIndex) * 500 + (p.status - 100)) * 3 + VERIFICATIONS.indexOf(p.verification);
        const row = rows.get(key);
        if (row) {
          row.hits++;
          if (p.time > row.last) row.last = p.time;
        } else {
          let day = dayText.get(p.day);
          if (day === undefined) {
            day = new Date(p.day * DAY_MS).toISOString().slice(0, 10);
            dayText.set(p.day, day);
          }
          rows.set(key, { day, bot: p.bot, url: p.url, status: p.status, verification: p.verification, hits: 1, last_seen: '', last: p.time });
          heldRows++;
        }
      }
    }
    if (last || heldRows >= (deps.heldRows ?? HELD_ROWS) || heldHits >= HELD_HITS) await append();
  };

  // one batch written while the next is read: parsing and the database's work overlap, batches still written in order
  let writing = null as Promise<void> | null;
  const write = async (last = false) => {
    if (writing) await writing;
    writing = flush(last);
    writing.catch(() => {});
  };
  let carry: Buffer | null = null;
  let oversize = false;
  const whole = (buf: Buffer, start: number, nl: number, checked: boolean) => {
    const end = nl > start && buf[nl - 1] === 13 ? nl - 1 : nl;
    if (end - start > MAX_LINE_BYTES) {
      counts.lines++;
      counts.rejected++;
    } else line(buf, start, end, checked);
  };
  try {
    for await (const chunk of body) {
      const buf = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      bytes += buf.length;
      let start = 0;
      let nl = buf.indexOf(10);
      if (nl !== -1) {
        // the line that began in earlier chunks, if any
        if (oversize) {
          oversize = false;
          counts.lines++;
          counts.rejected++;
        } else if (carry) {
          const l = Buffer.concat([carry, buf.subarray(0, nl)]);
          carry = null;
          whole(l, 0, l.length, false);
        } else whole(buf, 0, nl, false);
        start = nl + 1;
        // the chunk's other whole lines, checked at once: NUL and UTF-8 (a newline is never inside a character)
        const lastNl = buf.lastIndexOf(10);
        let checked = false;
        if (lastNl > start) {
          const span = buf.subarray(start, lastNl);
          checked = span.indexOf(0) === -1 && isUtf8(span);
        }
        for (;;) {
          nl = buf.indexOf(10, start);
          if (nl === -1) break;
          whole(buf, start, nl, checked);
          start = nl + 1;
        }
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
    if (oversize) {
      counts.lines++;
      counts.rejected++;
    } else if (carry) {
      whole(carry, 0, carry.length, false);
    }
    await write(true);
    await writing;
  } catch (e) {
    // the batch under way ends (its hashes inserted), then what is held is appended (or its hashes taken back)
    await writing?.catch(() => {});
    await append().catch(() => {});
    throw e;
  }
  deps.onProgress?.(bytes, counts);
  return { ...counts, position };
}
