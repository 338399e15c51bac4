/**
 * The AI crawlers' published IP ranges (infra/crawler-ranges/<robots token>.json, the operators' own format
 * `{prefixes: [{ipv4Prefix} | {ipv6Prefix}]}`, with the `source` and `fetched` we add beside them). A running server
 * looks at the folder at most every RELOAD_CHECK_MS and reloads what changed, so `crawlers:ranges` takes effect there.
 */
import { mkdirSync, readdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ipaddr from 'ipaddr.js';
import { z } from 'zod';

export const DEFAULT_RANGES_DIR = fileURLToPath(new URL('../../infra/crawler-ranges/', import.meta.url));
/** the folder, CRAWLER_RANGES_DIR when set */
export const rangesDir = (): string => process.env.CRAWLER_RANGES_DIR || DEFAULT_RANGES_DIR;
const RELOAD_CHECK_MS = 2000;

const Prefix = z.union([z.strictObject({ ipv4Prefix: z.string() }), z.strictObject({ ipv6Prefix: z.string() })]);
const RangesFile = z.looseObject({ prefixes: z.array(Prefix).min(1, 'prefixes: at least one prefix') });

export const NOT_OPERATOR_FORMAT = "not the operators' ranges format";

/** One bot's ranges: IPv4 as [start, end] integers (binary search), IPv6 as parsed CIDRs. */
export interface BotRanges {
  /** pairs start, end: sorted, merged */
  v4: Uint32Array;
  v6: [ipaddr.IPv6, number][];
  count: number;
}

const v4Int = (a: ipaddr.IPv4) => {
  const o = a.octets;
  return ((o[0] << 24) >>> 0) + (o[1] << 16) + (o[2] << 8) + o[3];
};

/** Parses and checks a ranges document; throws `not the operators' ranges format: …` naming the problem. */
export function parseRanges(json: unknown): BotRanges {
  const r = RangesFile.safeParse(json);
  if (!r.success) {
    const i = r.error.issues[0];
    throw new Error(`${NOT_OPERATOR_FORMAT}: ${i.path.join('.') || '(root)'}: ${i.message}`);
  }
  const v4: [number, number][] = [];
  const v6: [ipaddr.IPv6, number][] = [];
  r.data.prefixes.forEach((p, i) => {
    const text = 'ipv4Prefix' in p ? p.ipv4Prefix : p.ipv6Prefix;
    let cidr: [ipaddr.IPv4 | ipaddr.IPv6, number];
    try {
      cidr = ipaddr.parseCIDR(text);
    } catch {
      throw new Error(`${NOT_OPERATOR_FORMAT}: prefixes.${i}: ${JSON.stringify(text)} is not a CIDR prefix`);
    }
    const [addr, bits] = cidr;
    if ('ipv4Prefix' in p !== (addr.kind() === 'ipv4'))
      throw new Error(`${NOT_OPERATOR_FORMAT}: prefixes.${i}: ${text} is not of the family its key names`);
    if (addr.kind() === 'ipv4') {
      const start = bits === 0 ? 0 : (v4Int(addr as ipaddr.IPv4) & ((0xffffffff << (32 - bits)) >>> 0)) >>> 0;
      v4.push([start, start + 2 ** (32 - bits) - 1]);
    } else v6.push([addr as ipaddr.IPv6, bits]);
  });
  v4.sort((a, b) => a[0] - b[0]);
  // overlapping or touching ranges merged, so an address is in the last range starting at or before it, or in none
  const merged: [number, number][] = [];
  for (const r of v4) {
    const last = merged[merged.length - 1];
    if (last && r[0] <= last[1] + 1) last[1] = Math.max(last[1], r[1]);
    else merged.push([r[0], r[1]]);
  }
  const flat = new Uint32Array(merged.length * 2);
  merged.forEach(([s, e], i) => {
    flat[2 * i] = s;
    flat[2 * i + 1] = e;
  });
  return { v4: flat, v6, count: r.data.prefixes.length };
}

/**
 * A plain dotted-quad address (four decimal parts of 0-255 without leading zeros) as its integer, or -1 for anything
 * else (ipaddr.js reads those: octal and hex parts, fewer parts, IPv6), so that most addresses skip its parser.
 */
function dottedQuad(ip: string | Uint8Array, start = 0, end = ip.length): number {
  let n = 0;
  let part = 0;
  let digits = 0;
  let dots = 0;
  for (let i = start; i < end; i++) {
    const c = typeof ip === 'string' ? ip.charCodeAt(i) : ip[i];
    if (c === 46) {
      if (digits === 0 || dots === 3) return -1;
      n = n * 256 + part;
      part = 0;
      digits = 0;
      dots++;
    } else if (c >= 48 && c <= 57) {
      if (digits === 1 && part === 0) return -1;
      part = part * 10 + (c - 48);
      if (++digits > 3 || part > 255) return -1;
    } else return -1;
  }
  if (digits === 0 || dots !== 3) return -1;
  return n * 256 + part;
}

/** Whether the plain dotted-quad address in bytes [start, end) lies in the ranges; null when it is not one (read it as text). */
export function quadInRanges(ranges: BotRanges | undefined, bytes: Uint8Array, start: number, end: number): boolean | null {
  const quad = dottedQuad(bytes, start, end);
  if (quad < 0) return null;
  return ranges ? inV4(ranges.v4, quad) : false;
}

function inV4(v: Uint32Array, n: number): boolean {
  let lo = 0;
  let hi = v.length / 2 - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (v[2 * mid] <= n) lo = mid + 1;
    else hi = mid - 1;
  }
  return hi >= 0 && v[2 * hi + 1] >= n;
}

/** Whether `ip` (text) lies in the ranges; null when it is not an IP address. */
export function inRanges(ranges: BotRanges, ip: string): boolean | null {
  const quad = dottedQuad(ip);
  if (quad >= 0) return inV4(ranges.v4, quad);
  if (!ipaddr.isValid(ip)) return null;
  const addr = ipaddr.process(ip);
  if (addr.kind() === 'ipv4') return inV4(ranges.v4, v4Int(addr as ipaddr.IPv4));
  for (const [net, bits] of ranges.v6) if ((addr as ipaddr.IPv6).match(net, bits)) return true;
  return false;
}

/** The bots' ranges by lower-cased robots token, reloaded when the folder's files change. */
export class CrawlerRanges {
  private byBot = new Map<string, BotRanges>();
  private signature = '';
  private checkedAt = 0;

  constructor(readonly dir: string = rangesDir()) {
    this.reload(true);
  }

  private files(): { path: string; sig: string }[] {
    let names: string[];
    try {
      names = readdirSync(this.dir).filter((n) => n.endsWith('.json'));
    } catch {
      return [];
    }
    return names.sort().map((n) => {
      const path = join(this.dir, n);
      const st = statSync(path);
      return { path, sig: `${n}:${st.mtimeMs}:${st.size}` };
    });
  }

  private reload(initial: boolean) {
    const files = this.files();
    const signature = files.map((f) => f.sig).join('|');
    if (signature === this.signature) return;
    const next = new Map<string, BotRanges>();
    for (const f of files) {
      try {
        next.set(basename(f.path, '.json').toLowerCase(), parseRanges(JSON.parse(readFileSync(f.path, 'utf8'))));
      } catch (e) {
        if (initial) throw new Error(`${f.path}: ${(e as Error).message}`);
        const old = this.byBot.get(basename(f.path, '.json').toLowerCase());
        if (old) next.set(basename(f.path, '.json').toLowerCase(), old);
      }
    }
    this.byBot = next;
    this.signature = signature;
  }

  /** The current ranges (the folder looked at again when RELOAD_CHECK_MS passed since the last look). */
  current(): Map<string, BotRanges> {
    const now = Date.now();
    if (now - this.checkedAt >= RELOAD_CHECK_MS) {
      this.checkedAt = now;
      this.reload(false);
    }
    return this.byBot;
  }
}

let shared: CrawlerRanges | undefined;
/** The process's ranges (of rangesDir() as it was on first use). */
export function crawlerRanges(): CrawlerRanges {
  if (!shared || shared.dir !== rangesDir()) shared = new CrawlerRanges();
  return shared;
}

/**
 * `crawlers:ranges`: replaces one bot's ranges with a file in the operators' format (checked first: a file that is not
 * leaves the old ranges in place), written atomically; running servers pick it up on their next look.
 */
export function replaceRanges(bot: string, text: string, source: string, dir = rangesDir()): { bot: string; prefixes: number; path: string } {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new Error(`${NOT_OPERATOR_FORMAT}: not JSON`);
  }
  const parsed = parseRanges(json);
  mkdirSync(dir, { recursive: true });
  const path = join(dir, `${bot}.json`);
  const doc = { ...(json as object), source: (json as { source?: string }).source ?? source, fetched: new Date().toISOString().slice(0, 10) };
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(doc, null, 2)}\n`);
  renameSync(tmp, path);
  return { bot, prefixes: parsed.count, path };
}
