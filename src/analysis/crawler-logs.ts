/**
 * Access log lines (nginx/Apache combined, Cloudflare Logpush or Vercel JSON, CloudFront standard) read into hits,
 * and the AI crawler a hit's user agent names (infra/ai-crawlers.json).
 */
import { aiCrawlers, type AiCrawlers } from './ai-crawlers';

export const LOG_FORMATS = ['combined', 'json', 'cloudfront'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

/** One request as a log line gives it: time in epoch milliseconds. */
export interface LogHit {
  ip: string;
  time: number;
  path: string;
  status: number;
  ua: string;
}

export interface CrawlerBot {
  token: string;
  operator: string;
  purpose: 'conversational' | 'training';
}

/** The bots with a User-Agent of their own, and one matcher over all their tokens. */
export interface BotMatcher {
  bots: CrawlerBot[];
  /** the bot a user agent names, or undefined */
  match(ua: string): CrawlerBot | undefined;
  byToken: Map<string, CrawlerBot>;
}

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

export function botMatcher(list: AiCrawlers = aiCrawlers()): BotMatcher {
  const bots: CrawlerBot[] = [];
  for (const e of Object.values(list.engines)) {
    for (const purpose of ['conversational', 'training'] as const) {
      for (const a of e[purpose].agents) if (a.userAgent !== null) bots.push({ token: a.token, operator: e.vendor, purpose });
    }
  }
  const byToken = new Map(bots.map((b) => [b.token.toLowerCase(), b]));
  // longest first, whole tokens only: "ClaudeBot" is not "Claude-User", "Googlebot-Image" is not "Googlebot"
  const alternatives = [...bots].sort((a, b) => b.token.length - a.token.length).map((b) => escapeRe(b.token));
  const re = new RegExp(`(?<![A-Za-z0-9_-])(${alternatives.join('|')})(?![A-Za-z0-9_-])`, 'i');
  return {
    bots,
    byToken,
    match(ua) {
      const m = re.exec(ua);
      return m ? byToken.get(m[1].toLowerCase()) : undefined;
    },
  };
}

const MONTHS: Record<string, number> = { Jan: 0, Feb: 1, Mar: 2, Apr: 3, May: 4, Jun: 5, Jul: 6, Aug: 7, Sep: 8, Oct: 9, Nov: 10, Dec: 11 };
function validStatus(n: number): boolean {
  return Number.isInteger(n) && n >= 100 && n <= 599;
}

/** The path of a request line (`GET /a?b HTTP/1.1`), or null. */
function requestPath(request: string): string | null {
  const a = request.indexOf(' ');
  if (a <= 0) return null;
  const b = request.indexOf(' ', a + 1);
  const target = b < 0 ? request.slice(a + 1) : request.slice(a + 1, b);
  return target.startsWith('/') ? target : null;
}

const digit = (c: number) => c >= 48 && c <= 57;
const TIME_DIGITS = [0, 1, 7, 8, 9, 10, 12, 13, 15, 16, 18, 19, 22, 23, 24, 25];
const num2 = (l: string, i: number) => (l.charCodeAt(i) - 48) * 10 + (l.charCodeAt(i + 1) - 48);

/**
 * `ip ident user [10/Oct/2000:13:55:36 -0700] "GET /p HTTP/1.1" 200 2326 "referer" "agent"`, read by position (a regex
 * cost five times as much): the agent is the last quoted field, the request the first.
 */
export function parseCombined(line: string): LogHit | null {
  const sp = line.indexOf(' ');
  const open = line.indexOf(' [', sp);
  if (sp <= 0 || open < 0 || line.charCodeAt(open + 28) !== 93 /* ] */ || line.charCodeAt(open + 29) !== 32) return null;
  const t = open + 2;
  // dd/Mon/yyyy:HH:MM:SS +zzzz
  if (line[t + 2] !== '/' || line[t + 6] !== '/' || line[t + 11] !== ':' || line[t + 14] !== ':' || line[t + 17] !== ':' || line[t + 20] !== ' ')
    return null;
  for (const i of TIME_DIGITS) if (!digit(line.charCodeAt(t + i))) return null;
  const month = MONTHS[line.slice(t + 3, t + 6)];
  const sign = line[t + 21];
  if (month === undefined || (sign !== '+' && sign !== '-')) return null;
  const offset = (sign === '-' ? -1 : 1) * (num2(line, t + 22) * 60 + num2(line, t + 24));
  const year = num2(line, t + 7) * 100 + num2(line, t + 9);
  const time = Date.UTC(year, month, num2(line, t), num2(line, t + 12), num2(line, t + 15), num2(line, t + 18)) - offset * 60_000;
  const rq = open + 30;
  if (line.charCodeAt(rq) !== 34 /* " */) return null;
  const rqEnd = line.indexOf('" ', rq + 1);
  if (rqEnd < 0) return null;
  const s = rqEnd + 2;
  if (!digit(line.charCodeAt(s)) || !digit(line.charCodeAt(s + 1)) || !digit(line.charCodeAt(s + 2)) || line.charCodeAt(s + 3) !== 32) return null;
  const status = Number(line.slice(s, s + 3));
  // the agent: the last quoted field, after the referer's
  let end = line.length - 1;
  while (end > s && line.charCodeAt(end) !== 34) end--;
  const uaStart = line.lastIndexOf(' "', end - 1);
  if (uaStart <= s + 4 || line.charCodeAt(uaStart - 1) !== 34) return null;
  const path = requestPath(line.slice(rq + 1, rqEnd));
  if (path === null || !validStatus(status) || Number.isNaN(time)) return null;
  return { ip: line.slice(0, sp), time, path, status, ua: line.slice(uaStart + 2, end) };
}

/** Where scanCombined found a line's fields: byte offsets into the buffer it read, and the status. */
export interface CombinedScan {
  /** the address is [line start, ipEnd) */
  ipEnd: number;
  /** the first byte of the time stamp (dd/Mon/yyyy:HH:MM:SS +zzzz) */
  timeAt: number;
  pathStart: number;
  pathEnd: number;
  status: number;
  uaStart: number;
  uaEnd: number;
}

export const newCombinedScan = (): CombinedScan => ({ ipEnd: 0, timeAt: 0, pathStart: 0, pathEnd: 0, status: 0, uaStart: 0, uaEnd: 0 });

const isDigit = (b: Uint8Array, i: number) => b[i] >= 48 && b[i] <= 57;
const byte2 = (b: Uint8Array, i: number) => (b[i] - 48) * 10 + (b[i + 1] - 48);
/** `Jan`..`Dec` as their three bytes (b0 << 16 | b1 << 8 | b2) -> month index */
const MONTH_BYTES = new Map(Object.entries(MONTHS).map(([m, i]) => [(m.charCodeAt(0) << 16) | (m.charCodeAt(1) << 8) | m.charCodeAt(2), i]));

/**
 * parseCombined over the bytes [start, end) of a buffer (valid UTF-8, as the import checks first), without making a
 * string: whether the line is well formed, its fields' offsets in `out`. Exactly parseCombined's verdicts (the fields
 * it checks by position are ASCII, so byte and character offsets agree there); test/analysis/crawler-scan.test.ts
 * compares the two.
 */
export function scanCombined(b: Buffer, start: number, end: number, out: CombinedScan): boolean {
  let sp = start;
  while (sp < end && b[sp] !== 32) sp++;
  if (sp === start || sp === end) return false;
  let open = sp;
  while (open + 1 < end && !(b[open] === 32 && b[open + 1] === 91)) open++;
  // the stamp's 26 bytes, "] " and the request's opening quote
  const rq = open + 30;
  if (rq >= end || b[open + 28] !== 93 || b[open + 29] !== 32 || b[rq] !== 34) return false;
  const t = open + 2;
  if (b[t + 2] !== 47 || b[t + 6] !== 47 || b[t + 11] !== 58 || b[t + 14] !== 58 || b[t + 17] !== 58 || b[t + 20] !== 32) return false;
  if (!stampDigits(b, t) || !MONTH_BYTES.has((b[t + 3] << 16) | (b[t + 4] << 8) | b[t + 5])) return false;
  if (b[t + 21] !== 43 && b[t + 21] !== 45) return false;
  // the end of the request: its quote and a space (searched natively; past the line is no match)
  let rqEnd = b.indexOf(34, rq + 1);
  while (rqEnd >= 0 && rqEnd + 1 < end && b[rqEnd + 1] !== 32) rqEnd = b.indexOf(34, rqEnd + 1);
  if (rqEnd < 0 || rqEnd + 1 >= end) return false;
  const s = rqEnd + 2;
  if (s + 3 >= end || !isDigit(b, s) || !isDigit(b, s + 1) || !isDigit(b, s + 2) || b[s + 3] !== 32) return false;
  const status = (b[s] - 48) * 100 + byte2(b, s + 1);
  // the agent: the last quoted field, after the referer's
  let q = end - 1;
  while (q > s && b[q] !== 34) q--;
  // the last ' "' starting at or before q - 1 (a quote at or before q, after a space)
  let ua = -1;
  for (let k = q; k > s + 5; ) {
    k = b.lastIndexOf(34, k);
    if (k <= s + 5) break;
    if (b[k - 1] === 32) {
      ua = k - 1;
      break;
    }
    k--;
  }
  if (ua <= s + 4 || b[ua - 1] !== 34) return false;
  // the request's target: after its first space (not at its start), to the next space
  let a = rq + 1;
  while (a < rqEnd && b[a] !== 32) a++;
  if (a === rq + 1 || a === rqEnd) return false;
  let pathEnd = a + 1;
  while (pathEnd < rqEnd && b[pathEnd] !== 32) pathEnd++;
  if (pathEnd === a + 1 || b[a + 1] !== 47 || !validStatus(status)) return false;
  out.ipEnd = sp;
  out.timeAt = t;
  out.pathStart = a + 1;
  out.pathEnd = pathEnd;
  out.status = status;
  out.uaStart = ua + 2;
  out.uaEnd = q;
  return true;
}

/** the stamp's 16 digits: dd, yyyy, HH, MM, SS, zzzz */
function stampDigits(b: Uint8Array, t: number): boolean {
  return (
    isDigit(b, t) &&
    isDigit(b, t + 1) &&
    isDigit(b, t + 7) &&
    isDigit(b, t + 8) &&
    isDigit(b, t + 9) &&
    isDigit(b, t + 10) &&
    isDigit(b, t + 12) &&
    isDigit(b, t + 13) &&
    isDigit(b, t + 15) &&
    isDigit(b, t + 16) &&
    isDigit(b, t + 18) &&
    isDigit(b, t + 19) &&
    isDigit(b, t + 22) &&
    isDigit(b, t + 23) &&
    isDigit(b, t + 24) &&
    isDigit(b, t + 25)
  );
}

/** The time (epoch ms) of the stamp scanCombined found at `t`. */
export function combinedTime(b: Uint8Array, t: number): number {
  const month = MONTH_BYTES.get((b[t + 3] << 16) | (b[t + 4] << 8) | b[t + 5]) as number;
  const offset = (b[t + 21] === 45 ? -1 : 1) * (byte2(b, t + 22) * 60 + byte2(b, t + 24));
  const year = byte2(b, t + 7) * 100 + byte2(b, t + 9);
  return Date.UTC(year, month, byte2(b, t), byte2(b, t + 12), byte2(b, t + 15), byte2(b, t + 18)) - offset * 60_000;
}

const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);

/** A Cloudflare timestamp: RFC 3339, or Unix nanoseconds (also seconds or milliseconds by magnitude). */
function epochMs(v: unknown, unit: 'auto' | 'ms'): number {
  if (typeof v === 'string' && !/^\d+$/.test(v)) return Date.parse(v);
  const n = typeof v === 'number' ? v : typeof v === 'string' ? Number(v) : Number.NaN;
  if (!Number.isFinite(n)) return Number.NaN;
  if (unit === 'ms') return n;
  return n > 1e17 ? n / 1e6 : n > 1e14 ? n / 1e3 : n > 1e11 ? n : n * 1000;
}

export function parseJsonLine(line: string): LogHit | null {
  let o: unknown;
  try {
    o = JSON.parse(line);
  } catch {
    return null;
  }
  if (o === null || typeof o !== 'object' || Array.isArray(o)) return null;
  const r = o as Record<string, unknown>;
  let hit: LogHit;
  if ('ClientIP' in r || 'ClientRequestUserAgent' in r) {
    hit = {
      ip: str(r.ClientIP) ?? '',
      time: epochMs(r.EdgeStartTimestamp, 'auto'),
      path: str(r.ClientRequestPath) ?? '',
      status: Number(r.EdgeResponseStatus),
      ua: str(r.ClientRequestUserAgent) ?? '',
    };
  } else {
    // Vercel: a `proxy` object (or the same names dotted), the agent a list of strings, time in milliseconds
    const p = (r.proxy && typeof r.proxy === 'object' ? r.proxy : {}) as Record<string, unknown>;
    const get = (k: string) => p[k] ?? r[`proxy.${k}`];
    const ua = get('userAgent');
    hit = {
      ip: str(get('clientIp')) ?? '',
      time: epochMs(r.timestamp, 'ms'),
      path: str(get('path')) ?? '',
      status: Number(get('statusCode')),
      ua: Array.isArray(ua) ? ua.filter((x) => typeof x === 'string').join(' ') : (str(ua) ?? ''),
    };
  }
  if (!hit.ip || !hit.path.startsWith('/') || !validStatus(hit.status) || Number.isNaN(hit.time)) return null;
  return hit;
}

const CLOUDFRONT_DEFAULT = [
  'date',
  'time',
  'x-edge-location',
  'sc-bytes',
  'c-ip',
  'cs-method',
  'cs(Host)',
  'cs-uri-stem',
  'sc-status',
  'cs(Referer)',
  'cs(User-Agent)',
];

/** A CloudFront standard log reader: its `#Fields:` header (when present) names the columns. */
export function cloudfrontParser(): { header(line: string): void; parse(line: string): LogHit | null } {
  let col = indexes(CLOUDFRONT_DEFAULT);
  function indexes(fields: string[]) {
    const at = (f: string) => fields.indexOf(f);
    return { date: at('date'), time: at('time'), ip: at('c-ip'), path: at('cs-uri-stem'), status: at('sc-status'), ua: at('cs(User-Agent)') };
  }
  return {
    header(line) {
      if (line.startsWith('#Fields:')) col = indexes(line.slice(8).trim().split(/\s+/));
    },
    parse(line) {
      const f = line.split('\t');
      const need = Math.max(col.date, col.time, col.ip, col.path, col.status, col.ua);
      if (col.date < 0 || col.ip < 0 || col.path < 0 || col.status < 0 || col.ua < 0 || f.length <= need) return null;
      const time = Date.parse(`${f[col.date]}T${col.time >= 0 ? f[col.time] : '00:00:00'}Z`);
      const status = Number(f[col.status]);
      let ua = f[col.ua];
      try {
        ua = decodeURIComponent(ua);
      } catch {
        /* kept as logged */
      }
      const path = f[col.path];
      if (!path.startsWith('/') || !validStatus(status) || Number.isNaN(time) || !/^\d{4}-\d{2}-\d{2}$/.test(f[col.date])) return null;
      return { ip: f[col.ip], time, path, status, ua };
    },
  };
}

/** A line reader of a format: `parse` a line (null: malformed), `header` a `#` line. */
export function lineParser(format: LogFormat): { header(line: string): void; parse(line: string): LogHit | null } {
  if (format === 'cloudfront') return cloudfrontParser();
  return { header() {}, parse: format === 'json' ? parseJsonLine : parseCombined };
}
