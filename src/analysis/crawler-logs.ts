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
const Q = '"([^"\\\\]*(?:\\\\.[^"\\\\]*)*)"';
const COMBINED = new RegExp(
  `^(\\S+) \\S+ \\S+ \\[(\\d{2})/([A-Z][a-z]{2})/(\\d{4}):(\\d{2}):(\\d{2}):(\\d{2}) ([+-])(\\d{2})(\\d{2})\\] ${Q} (\\d{3}) (?:\\d+|-) ${Q} ${Q}`,
);

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

export function parseCombined(line: string): LogHit | null {
  const m = COMBINED.exec(line);
  if (!m) return null;
  const month = MONTHS[m[3]];
  if (month === undefined) return null;
  const offset = (m[8] === '-' ? -1 : 1) * (Number(m[9]) * 60 + Number(m[10]));
  const time = Date.UTC(Number(m[4]), month, Number(m[2]), Number(m[5]), Number(m[6]), Number(m[7])) - offset * 60_000;
  const path = requestPath(m[11]);
  const status = Number(m[12]);
  if (path === null || !validStatus(status) || Number.isNaN(time)) return null;
  return { ip: m[1], time, path, status, ua: m[14] };
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
