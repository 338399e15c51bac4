/**
 * The one way aivis makes outbound HTTP requests (SSRF-safe).
 *
 * - Only http/https URLs without credentials.
 * - Every connection goes to a public unicast address: hostnames are resolved
 *   inside the socket's `lookup`, and the address validated there is the
 *   address connected to (no DNS-rebinding gap). IP-literal hosts, which Node
 *   connects to without a lookup, are validated before any connection.
 * - Redirects are followed by hand, each hop re-validated; capped in number.
 * - Total time (all hops and the body) and body bytes are capped.
 */
import { lookup as dnsLookup } from 'node:dns/promises';
import type { LookupAddress, LookupOptions } from 'node:dns';
import { isIP } from 'node:net';
import type { Readable } from 'node:stream';
import { TextDecoder } from 'node:util';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import ipaddr from 'ipaddr.js';
import { Agent, request } from 'undici';

export type SafeFetchErrorCode =
  | 'BAD_URL'
  | 'BLOCKED_ADDRESS'
  | 'DNS_FAILURE'
  | 'TIMEOUT'
  | 'TOO_MANY_REDIRECTS'
  | 'BODY_TOO_LARGE'
  | 'TLS_ERROR'
  | 'CONNECTION_ERROR';

export class SafeFetchError extends Error {
  override readonly name = 'SafeFetchError';
  constructor(
    readonly code: SafeFetchErrorCode,
    message: string,
    /** The URL of the hop that failed (may differ from the requested URL after redirects). */
    readonly url: string | null = null,
    /** The refused address, for BLOCKED_ADDRESS. */
    readonly address: string | null = null,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export interface SafeFetcherOptions {
  /** Hostname -> addresses. Default: the system resolver (getaddrinfo, all addresses). */
  resolver?: (hostname: string) => Promise<string[]>;
  /**
   * TEST ONLY: addresses for which this returns true are allowed even though
   * they are not public (tests allow 127.0.0.1). Production never sets it.
   */
  allowAddress?: (ip: string) => boolean;
  /** User-Agent sent when the request sets none. */
  userAgent?: string;
  timeoutMs?: number;
  maxBytes?: number;
  maxRedirects?: number;
  /**
   * Keep connections open between requests (one pool for this fetcher; every new connection still resolves and checks
   * its address in the lookup, IP literals before each request). For a sender of many requests to few hosts.
   */
  keepAlive?: boolean;
}

export interface SafeFetchInit {
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  /** Total time for all hops and the body. Default 10 s. */
  timeoutMs?: number;
  /** Body bytes kept (after decompression). Default 1 MiB. */
  maxBytes?: number;
  /** Default 5. */
  maxRedirects?: number;
  /** What happens to a body over maxBytes: cut it and set `truncated` (default), or fail with BODY_TOO_LARGE. */
  onBodyTooLarge?: 'truncate' | 'error';
}

export interface SafeFetchResponse {
  status: number;
  /** Lower-case names; repeated headers joined with ", ". */
  headers: Record<string, string>;
  body: string;
  truncated: boolean;
  finalUrl: string;
  /** Each redirect followed, in order: the URL that answered and its status. */
  redirects: Array<{ url: string; status: number }>;
  durationMs: number;
}

export type SafeFetch = (url: string, init?: SafeFetchInit) => Promise<SafeFetchResponse>;

/** How aivis reaches the outside world: every outbound request goes through a SafeFetch. */
export interface Outbound {
  fetch: SafeFetch;
  /** test-only: where a domain is served (scheme, host, port); production uses https://<domain> */
  baseUrl?: (domain: string) => string;
}

export const DEFAULT_TIMEOUT_MS = 10_000;
export const DEFAULT_MAX_BYTES = 1024 * 1024;
export const DEFAULT_MAX_REDIRECTS = 5;
export const DEFAULT_USER_AGENT = 'Mozilla/5.0 (compatible; aivis/1.0)';

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
const CROSS_ORIGIN_DROPPED_HEADERS = ['authorization', 'cookie', 'proxy-authorization'];
const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR('2000::/3');

/**
 * True for a public unicast address. Refuses loopback, RFC1918, CGNAT, link-local,
 * multicast, unspecified, broadcast, reserved/documentation ranges, ULA, and every
 * IPv6 range that embeds or translates IPv4 (mapped addresses are judged as the
 * IPv4 they map to; NAT64, 6to4 and Teredo are refused outright).
 */
export function isPublicAddress(ip: string): boolean {
  if (!ipaddr.isValid(ip)) return false;
  let addr: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    addr = ipaddr.parse(ip);
  } catch {
    return false;
  }
  if (addr.kind() === 'ipv6' && (addr as ipaddr.IPv6).isIPv4MappedAddress()) {
    addr = (addr as ipaddr.IPv6).toIPv4Address();
  }
  if (addr.kind() === 'ipv4') return addr.range() === 'unicast';
  const v6 = addr as ipaddr.IPv6;
  return v6.range() === 'unicast' && v6.match(GLOBAL_UNICAST_V6);
}

async function systemResolver(hostname: string): Promise<string[]> {
  const found = await dnsLookup(hostname, { all: true, verbatim: true });
  return found.map((a) => a.address);
}

function parseTarget(raw: string | URL, base?: URL): URL {
  let url: URL;
  try {
    url = new URL(raw, base);
  } catch {
    throw new SafeFetchError('BAD_URL', `not a valid URL: ${String(raw)}`, String(raw));
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new SafeFetchError('BAD_URL', `only http and https URLs are allowed, got ${url.protocol}`, url.href);
  }
  if (url.username || url.password) {
    throw new SafeFetchError('BAD_URL', 'URLs must not carry credentials', url.href);
  }
  if (!url.hostname) throw new SafeFetchError('BAD_URL', 'URL has no host', url.href);
  return url;
}

function literalIp(url: URL): string | null {
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  return isIP(host) ? host : null;
}

function flattenHeaders(raw: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(raw)) {
    if (v === undefined) continue;
    out[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : v;
  }
  return out;
}

const TLS_CODE = /^(ERR_TLS_|ERR_SSL_|CERT_|UNABLE_TO_|DEPTH_ZERO_|SELF_SIGNED_|HOSTNAME_MISMATCH)/;
const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'ETIMEDOUT']);

function findSafeFetchError(err: unknown): SafeFetchError | null {
  for (let e: unknown = err, i = 0; e && i < 5; e = (e as { cause?: unknown }).cause, i++) {
    if (e instanceof SafeFetchError) return e;
  }
  return null;
}

function classify(err: unknown, url: string, timedOut: boolean): SafeFetchError {
  const own = findSafeFetchError(err);
  if (own) return own;
  if (timedOut) return new SafeFetchError('TIMEOUT', 'request timed out', url, null, { cause: err });
  const code = String((err as { code?: unknown })?.code ?? '');
  const detail = err instanceof Error ? err.message : String(err);
  if (TIMEOUT_CODES.has(code)) return new SafeFetchError('TIMEOUT', `request timed out (${code})`, url, null, { cause: err });
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'ENODATA') {
    return new SafeFetchError('DNS_FAILURE', `host did not resolve (${code})`, url, null, { cause: err });
  }
  if (TLS_CODE.test(code)) return new SafeFetchError('TLS_ERROR', `TLS failure (${code}): ${detail}`, url, null, { cause: err });
  return new SafeFetchError('CONNECTION_ERROR', `connection failed${code ? ` (${code})` : ''}: ${detail}`, url, null, { cause: err });
}

function decoderFor(contentType: string | undefined): TextDecoder {
  const charset = /charset\s*=\s*"?([\w.:-]+)/i.exec(contentType ?? '')?.[1];
  try {
    return new TextDecoder(charset ?? 'utf-8');
  } catch {
    return new TextDecoder('utf-8');
  }
}

function decompressed(body: Readable, encoding: string | undefined): Readable {
  switch ((encoding ?? '').trim().toLowerCase()) {
    case 'gzip':
    case 'x-gzip':
      return body.pipe(createGunzip());
    case 'deflate':
      return body.pipe(createInflate());
    case 'br':
      return body.pipe(createBrotliDecompress());
    default:
      return body;
  }
}

export function createSafeFetcher(options: SafeFetcherOptions = {}): SafeFetch {
  const resolver = options.resolver ?? systemResolver;
  const allowed = (ip: string): boolean => isPublicAddress(ip) || options.allowAddress?.(ip) === true;

  const checkAddress = (ip: string, url: string): void => {
    if (!allowed(ip)) {
      throw new SafeFetchError('BLOCKED_ADDRESS', `refusing to connect to non-public address ${ip}`, url, ip);
    }
  };

  // net.connect's lookup hook: resolve, validate every address, hand back only validated ones.
  const makeLookup =
    (currentUrl: () => string) =>
    (hostname: string, opts: LookupOptions, callback: (err: Error | null, address: string | LookupAddress[], family?: number) => void): void => {
      resolver(hostname)
        .then(
          (addresses) => {
            const url = currentUrl();
            if (addresses.length === 0) throw new SafeFetchError('DNS_FAILURE', `host ${hostname} has no addresses`, url);
            for (const ip of addresses) checkAddress(ip, url);
            const wanted = addresses
              .map((address) => ({ address, family: isIP(address) }))
              .filter((a) => a.family !== 0 && (!opts.family || opts.family === a.family));
            if (wanted.length === 0) throw new SafeFetchError('DNS_FAILURE', `host ${hostname} has no usable addresses`, url);
            if (opts.all) callback(null, wanted);
            else callback(null, wanted[0].address, wanted[0].family);
          },
          (err: unknown) => {
            throw (
              findSafeFetchError(err) ??
              new SafeFetchError(
                'DNS_FAILURE',
                `host ${hostname} did not resolve (${String((err as { code?: unknown })?.code ?? err)})`,
                currentUrl(),
                null,
                { cause: err },
              )
            );
          },
        )
        .catch((err: Error) => callback(err, []));
    };

  const shared = options.keepAlive
    ? new Agent({
        connect: { lookup: makeLookup(() => 'a pooled connection'), timeout: options.timeoutMs ?? DEFAULT_TIMEOUT_MS },
        headersTimeout: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
        bodyTimeout: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
        keepAliveTimeout: 10_000,
      })
    : null;

  return async function safeFetch(rawUrl: string, init: SafeFetchInit = {}): Promise<SafeFetchResponse> {
    const started = performance.now();
    const timeoutMs = init.timeoutMs ?? options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const maxBytes = init.maxBytes ?? options.maxBytes ?? DEFAULT_MAX_BYTES;
    const maxRedirects = init.maxRedirects ?? options.maxRedirects ?? DEFAULT_MAX_REDIRECTS;

    let url = parseTarget(rawUrl);
    let method = (init.method ?? 'GET').toUpperCase();
    let body = init.body;
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(init.headers ?? {})) headers[k.toLowerCase()] = v;
    if (!headers['user-agent']) headers['user-agent'] = options.userAgent ?? DEFAULT_USER_AGENT;
    delete headers.host;

    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort(new SafeFetchError('TIMEOUT', `request timed out after ${timeoutMs} ms`, url.href));
    }, timeoutMs);
    // Rejects when the deadline passes, so nothing (a hung resolver, a stalled body) outlives it.
    const deadline = new Promise<never>((_, reject) => {
      controller.signal.addEventListener('abort', () => reject(controller.signal.reason), { once: true });
    });
    deadline.catch(() => undefined);

    const agent =
      shared ??
      new Agent({
        connect: { lookup: makeLookup(() => url.href), timeout: timeoutMs },
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
        keepAliveTimeout: 1_000,
      });

    const redirects: Array<{ url: string; status: number }> = [];
    try {
      for (;;) {
        const ip = literalIp(url);
        if (ip) checkAddress(ip, url.href);

        const res = await Promise.race([
          request(url, { method: method as 'GET', headers, body, dispatcher: agent, signal: controller.signal }),
          deadline,
        ]);
        const resHeaders = flattenHeaders(res.headers as Record<string, string | string[] | undefined>);
        const location = resHeaders.location;

        if (REDIRECT_STATUSES.has(res.statusCode) && location) {
          res.body.resume();
          res.body.on('error', () => undefined);
          if (redirects.length >= maxRedirects) {
            throw new SafeFetchError('TOO_MANY_REDIRECTS', `more than ${maxRedirects} redirects`, url.href);
          }
          redirects.push({ url: url.href, status: res.statusCode });
          const next = parseTarget(location, url);
          if (next.origin !== url.origin) for (const h of CROSS_ORIGIN_DROPPED_HEADERS) delete headers[h];
          if (res.statusCode === 303 || ((res.statusCode === 301 || res.statusCode === 302) && method === 'POST')) {
            if (method !== 'HEAD') method = 'GET';
            body = undefined;
            delete headers['content-type'];
            delete headers['content-length'];
          }
          url = next;
          continue;
        }

        let text = '';
        let truncated = false;
        if (method !== 'HEAD') {
          const stream = decompressed(res.body, resHeaders['content-encoding']);
          const read = async () => {
            const chunks: Buffer[] = [];
            let size = 0;
            for await (const chunk of stream as AsyncIterable<Buffer>) {
              if (size + chunk.length > maxBytes) {
                if (init.onBodyTooLarge === 'error') {
                  throw new SafeFetchError('BODY_TOO_LARGE', `body exceeds ${maxBytes} bytes`, url.href);
                }
                chunks.push(chunk.subarray(0, maxBytes - size));
                size = maxBytes;
                truncated = true;
                break;
              }
              chunks.push(chunk);
              size += chunk.length;
            }
            return Buffer.concat(chunks, size);
          };
          try {
            const bytes = await Promise.race([read(), deadline]);
            text = decoderFor(resHeaders['content-type']).decode(bytes);
          } finally {
            if (stream !== res.body) stream.destroy();
            res.body.destroy();
          }
        } else {
          res.body.resume();
        }

        return {
          status: res.statusCode,
          headers: resHeaders,
          body: text,
          truncated,
          finalUrl: url.href,
          redirects,
          durationMs: Math.round(performance.now() - started),
        };
      }
    } catch (err) {
      throw classify(err, url.href, timedOut);
    } finally {
      clearTimeout(timer);
      if (agent !== shared) agent.destroy().catch(() => undefined);
    }
  };
}
