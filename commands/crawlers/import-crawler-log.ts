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
import { type BotRanges, crawlerRanges, inRanges, quadInRanges } from '../../src/analysis/crawler-ranges';
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
/** Rows per event (an event stays under a megabyte). */
const EVENT_ROWS = 5000;
/**
 * The new hits are summed per (day, bot, page, status, verification) over a held set of AI lines, then their hashes
 * are inserted and the rows appended as events of aggregates in one transaction: a page a bot fetched a hundred times
 * a day is one row, and no line's hash is ever stored without the event that counts it. A set is written once it holds
 * WRITE_HITS lines and no other write is under way, or when it is full (HELD_HITS lines, so at most as many rows).
 * Only the new lines are summed, once their hashes are in: a body sent again costs no rows.
 */
const HELD_HITS = 100_000;
const WRITE_HITS = 25_000;

type Verification = 'verified' | 'unverified' | 'unverifiable';
type Row = EventData<'CrawlerHitsImported'>['rows'][number];

/** The AI lines read since the last append: per line its SHA-256, page, day, the rest of its row's key and its time. */
class Held {
  readonly hashes: Buffer;
  readonly url: string[] = [];
  readonly day: Int32Array;
  /** (bot * 500 + status - 100) * 3 + verification */
  readonly code: Int32Array;
  readonly time: Float64Array;
  hits = 0;
  constructor(capacity: number) {
    this.hashes = Buffer.allocUnsafe(capacity * 32);
    this.day = new Int32Array(capacity);
    this.code = new Int32Array(capacity);
    this.time = new Float64Array(capacity);
  }
  clear() {
    this.hits = 0;
    this.url.length = 0;
  }
}

const DAY_MS = 86_400_000;
const VERIFICATIONS: Verification[] = ['verified', 'unverified', 'unverifiable'];
/** more than the bots of infra/ai-crawlers.json (a row's key is a number: day, bot, status, verification) */
const BOT_SLOTS = 64;
/** codes a day: bot, status (100-599), verification */
const CODES = BOT_SLOTS * 500 * 3;

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
  /** AI lines (so rows, at most) held before an append (HELD_HITS; tests set fewer) */
  heldRows?: number;
  /** AI lines held before a write while none is under way (WRITE_HITS), and at most (HELD_HITS); tests set fewer */
  heldHits?: number;
}

/**
 * Streams a log into the website's crawler hits: lines split across chunks, each AI-crawler line hashed and summed into
 * its row; for each held set their hashes are inserted (a line seen before, in an earlier
 * import or this body, adds nothing) and the rows of the new ones appended as events of aggregates, in one transaction
 * where the store has them (Postgres): a crash leaves both or neither. Elsewhere the hashes go in first and are taken
 * back if the append fails. Memory stays at two held sets and one line whatever the body's size.
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
  // per bot (by its place in the list) its published ranges
  const rangesOf = bots.bots.map((b) => ranges.get(b.token.toLowerCase()));
  if (bots.bots.length > BOT_SLOTS) throw new Error(`more than ${BOT_SLOTS} bots in the list`);
  const heldHitsMax = Math.min(deps.heldHits ?? HELD_HITS, deps.heldRows ?? HELD_HITS);
  // one set fills while the other is written
  const spare: Held[] = [];
  let held = new Held(heldHitsMax);
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

  /** An AI crawler's hit: held with its row, or counted rejected (`verification` null: not an IP address). */
  const hitOf = (
    line: Buffer,
    start: number,
    end: number,
    botIndex: number,
    verification: Verification | null,
    path: string,
    status: number,
    time: number,
  ) => {
    const url = pageOf(path);
    // as new Date(time) reads it: whole milliseconds, NaN outside its range
    const dayMs = Math.abs(time) <= 8.64e15 ? Math.trunc(time) : Number.NaN;
    if (url === null || verification === null || Number.isNaN(dayMs)) {
      counts.rejected++;
      return;
    }
    const h = held;
    const i = h.hits++;
    // a latin1 digest written in place: half the CPU of a Buffer digest copied
    h.hashes.write(hash('sha256', start === 0 && end === line.length ? line : line.subarray(start, end), 'binary'), i * 32, 32, 'latin1');
    h.url[i] = url;
    h.day[i] = Math.floor(dayMs / DAY_MS);
    h.code[i] = (botIndex * 500 + (status - 100)) * 3 + (verification === 'verified' ? 0 : verification === 'unverified' ? 1 : 2);
    h.time[i] = time;
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
      const b = botIndexes.get(bot) as number;
      const published = rangesOf[b];
      // a plain dotted quad is looked up from its bytes
      const inside = quadInRanges(published, buf, start, scan.ipEnd);
      hitOf(
        buf,
        start,
        end,
        b,
        inside === null
          ? verdictOf(bot.token, published, buf.toString('utf8', start, scan.ipEnd))
          : !published
            ? 'unverifiable'
            : inside
              ? 'verified'
              : 'unverified',
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
    const b = botIndexes.get(bot) as number;
    hitOf(buf, start, end, b, verdictOf(bot.token, rangesOf[b], hit.ip), hit.path, hit.status, hit.time);
  };

  const stream = `${CRAWLER_STREAM_PREFIX}${deps.website.id}`;
  const transact = deps.ctx.store.transact?.bind(deps.ctx.store);

  /**
   * Inserts the held hashes; returns which held lines are new (null: all of them), each line once. A line in the body
   * twice is inserted once: the statement's second row conflicts with its first.
   */
  const insertHashes = async (q: Knex | Knex.Transaction, h: Held): Promise<{ n: number; fresh: Uint8Array | null; inserted: Buffer }> => {
    const all = h.hashes.subarray(0, h.hits * 32);
    const r = await q.raw(
      `with added as (
         insert into aivis_crawler_lines (website_id, hash)
         select ?, substring(?::bytea from i * 32 + 1 for 32) from generate_series(0, ?::int - 1) i
         on conflict do nothing returning hash)
       select count(*)::int as n, case when count(*) < ?::int then string_agg(hash, ''::bytea) end as fresh from added`,
      [deps.website.id, all, h.hits, h.hits],
    );
    const { n, fresh } = (r.rows as { n: number; fresh: Buffer | null }[])[0];
    if (n === h.hits) return { n, fresh: null, inserted: all };
    const isNew = new Uint8Array(h.hits);
    if (n === 0) return { n, fresh: isNew, inserted: all.subarray(0, 0) };
    const left = new Set<string>();
    for (let i = 0; i < n; i++) left.add((fresh as Buffer).toString('latin1', i * 32, i * 32 + 32));
    for (let i = 0; i < h.hits; i++) if (left.delete(h.hashes.toString('latin1', i * 32, i * 32 + 32))) isNew[i] = 1;
    return { n, fresh: isNew, inserted: fresh as Buffer };
  };

  /** The rows of the new lines as events of EVENT_ROWS rows; the counts they add. */
  const eventsOf = (h: Held, fresh: Uint8Array | null) => {
    // per page (the cached URL string), then per day and code: the row's place
    const byPage = new Map<string, Map<number, number>>();
    const day0 = h.day[0];
    const rowAt: number[] = [];
    const rowHits: number[] = [];
    const rowLast: number[] = [];
    for (let i = 0; i < h.hits; i++) {
      if (fresh !== null && fresh[i] === 0) continue;
      const url = h.url[i];
      let rows = byPage.get(url);
      if (!rows) {
        rows = new Map();
        byPage.set(url, rows);
      }
      // days from the set's first: a small integer key (a heap number would be boxed for every lookup)
      const key = (h.day[i] - day0) * CODES + h.code[i];
      const r = rows.get(key);
      if (r === undefined) {
        rows.set(key, rowHits.length);
        rowAt.push(i);
        rowHits.push(1);
        rowLast.push(h.time[i]);
      } else {
        rowHits[r]++;
        if (h.time[i] > rowLast[r]) rowLast[r] = h.time[i];
      }
    }
    const add = { verified: 0, unverified: 0, unverifiable: 0 };
    const rows: Row[] = [];
    for (let r = 0; r < rowAt.length; r++) {
      const i = rowAt[r];
      const code = h.code[i];
      const verification = VERIFICATIONS[code % 3];
      const dayNum = h.day[i];
      let day = dayText.get(dayNum);
      if (day === undefined) {
        day = new Date(dayNum * DAY_MS).toISOString().slice(0, 10);
        dayText.set(dayNum, day);
      }
      add[verification] += rowHits[r];
      rows.push({
        day,
        bot: bots.bots[Math.floor(code / 1500)].token,
        url: h.url[i],
        status: (Math.floor(code / 3) % 500) + 100,
        verification,
        hits: rowHits[r],
        last_seen: new Date(rowLast[r]).toISOString(),
      });
    }
    const events = [];
    for (let i = 0; i < rows.length; i += EVENT_ROWS)
      events.push({
        type: 'CrawlerHitsImported' as const,
        data: { website_id: deps.website.id, import_id: importId, rows: rows.slice(i, i + EVENT_ROWS) },
      });
    return { events, add };
  };

  /** Deletes the hashes an insert added (a line imported before keeps its hash). */
  const takeBack = (inserted: Buffer) =>
    deps.db.raw(
      `delete from aivis_crawler_lines where website_id = ?
         and hash = any(array(select substring(?::bytea from i * 32 + 1 for 32) from generate_series(0, ?::int - 1) i))`,
      [deps.website.id, inserted, inserted.length / 32],
    );

  /** Inserts a held set's hashes and appends the rows of its new lines, then counts them. */
  const write = async (h: Held) => {
    let done: { n: number; add: Record<Verification, number>; position: Position | null };
    if (transact) {
      done = await transact(async (tx) => {
        const { n, fresh } = await insertHashes(tx.trx, h);
        const { events, add } = eventsOf(h, fresh);
        const appended = events.length ? await tx.append(stream, newEventsFor(deps.ctx, events), 'any') : null;
        return { n, add, position: appended?.position ?? null };
      });
    } else {
      const { n, fresh, inserted } = await insertHashes(deps.db, h);
      const { events, add } = eventsOf(h, fresh);
      let appended = null;
      try {
        if (events.length) appended = await deps.ctx.store.append(stream, newEventsFor(deps.ctx, events), 'any');
      } catch (e) {
        if (n > 0) await takeBack(inserted);
        throw e;
      }
      done = { n, add, position: appended?.position ?? null };
    }
    counts.ai_hits += done.n;
    counts.duplicates += h.hits - done.n;
    for (const v of VERIFICATIONS) counts[v] += done.add[v];
    if (done.position) position = done.position;
  };

  // a held set is written while the next fills: parsing and the database's work overlap, sets still written in order
  let writing = null as Promise<void> | null;
  const flush = async () => {
    if (writing) await writing;
    writing = null;
    if (held.hits === 0) return;
    const h = held;
    held = spare.pop() ?? new Held(heldHitsMax);
    const w: Promise<void> = write(h).then(() => {
      h.clear();
      spare.push(h);
      if (writing === w) writing = null;
    });
    writing = w;
    writing.catch(() => {});
  };
  let carry: Buffer | null = null;
  let oversize = false;
  // the held set is full: written before the next line
  let full = false;
  const whole = (buf: Buffer, start: number, nl: number, checked: boolean) => {
    const end = nl > start && buf[nl - 1] === 13 ? nl - 1 : nl;
    if (end - start > MAX_LINE_BYTES) {
      counts.lines++;
      counts.rejected++;
    } else {
      line(buf, start, end, checked);
      if (held.hits === heldHitsMax) full = true;
    }
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
          if (full) {
            full = false;
            await flush();
          }
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
      if (full || (writing === null && held.hits >= (deps.heldHits ?? WRITE_HITS))) {
        full = false;
        await flush();
      }
      deps.onProgress?.(bytes, counts);
    }
    if (oversize) {
      counts.lines++;
      counts.rejected++;
    } else if (carry) {
      whole(carry, 0, carry.length, false);
    }
    await flush();
    await writing;
  } catch (e) {
    // the set under way is written (or rolled back), then what is held
    await writing?.catch(() => {});
    writing = null;
    await flush()
      .then(() => writing)
      .catch(() => {});
    throw e;
  }
  deps.onProgress?.(bytes, counts);
  return { ...counts, position };
}
