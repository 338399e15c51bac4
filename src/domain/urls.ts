/**
 * URL handling of aivis: the normalized URL (CONTRACT.md, "Normalized URL", the content join key),
 * hosts and entity domains for citation matching, URLs found in answer text, and registrable
 * domains for the `sources` of the answers listing.
 *
 * Normalized URL: no scheme, lower-case host without a leading `www.`, no user info, no fragment,
 * no tracking parameters (`utm_*`, `gclid`, `fbclid`, `msclkid`, `mc_cid`, `mc_eid`, any case), the
 * remaining query pairs sorted by name then by their raw text (encoding kept as given), and no
 * trailing slash except the root. The root keeps its slash: `https://www.Example.com` and
 * `example.com/` both normalize to `example.com/`, and `example.com/?a=1` is the root with a query.
 * A non-default port stays (`example.com:8080/`); the scheme's default port is dropped.
 */

const TRACKING_PARAMS = new Set(['gclid', 'fbclid', 'msclkid', 'mc_cid', 'mc_eid']);

/** True for a query parameter name that only tracks a click and never selects content. */
export function isTrackingParam(name: string): boolean {
  const n = name.toLowerCase();
  return n.startsWith('utm_') || TRACKING_PARAMS.has(n);
}

const SCHEME = /^([a-z][a-z0-9+.-]*):/i;
const PORT_AFTER_HOST = /^[^/?#:]+:\d+(?:[/?#]|$)/;

/** Parses a URL written with or without `http(s)://`; throws a message naming the problem. */
function parseLoose(input: string): URL {
  if (typeof input !== 'string') throw new Error('invalid URL: expected a string');
  let s = input.trim();
  if (s === '') throw new Error('invalid URL: empty');
  if (s.startsWith('//')) s = `http:${s}`;
  const scheme = SCHEME.exec(s);
  if (scheme && !PORT_AFTER_HOST.test(s)) {
    const name = scheme[1].toLowerCase();
    if (name !== 'http' && name !== 'https') throw new Error(`invalid URL ${JSON.stringify(input)}: only http and https are supported`);
  } else {
    s = `http://${s}`;
  }
  let url: URL;
  try {
    url = new URL(s);
  } catch {
    throw new Error(`invalid URL ${JSON.stringify(input)}`);
  }
  const host = url.hostname;
  if (host === '' || (!host.includes('.') && host !== 'localhost' && !host.startsWith('['))) {
    throw new Error(`invalid URL ${JSON.stringify(input)}: ${host === '' ? 'no host' : `host ${JSON.stringify(host)} is not a domain`}`);
  }
  return url;
}

function cleanHostname(hostname: string): string {
  let h = hostname.toLowerCase();
  if (h.endsWith('.')) h = h.slice(0, -1);
  if (h.startsWith('www.')) h = h.slice(4);
  return h;
}

function sortedQuery(search: string): string {
  if (search === '' || search === '?') return '';
  const pairs = search
    .slice(1)
    .split('&')
    .filter((p) => p !== '')
    .map((raw) => {
      const eq = raw.indexOf('=');
      const rawName = eq === -1 ? raw : raw.slice(0, eq);
      let name: string;
      try {
        name = decodeURIComponent(rawName.replace(/\+/g, ' '));
      } catch {
        name = rawName;
      }
      return { name, raw };
    })
    .filter((p) => !isTrackingParam(p.name));
  pairs.sort((a, b) => cmp(a.name, b.name) || cmp(a.raw, b.raw));
  return pairs.length === 0 ? '' : `?${pairs.map((p) => p.raw).join('&')}`;
}

const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

function normalizedPath(pathname: string): string {
  const p = pathname.replace(/\/+$/, '');
  return p === '' ? '/' : p;
}

/** The normalized URL (see the module comment); throws on input that is not an http(s) URL or a bare host. */
export function normalizeUrl(input: string): string {
  const url = parseLoose(input);
  const host = cleanHostname(url.hostname);
  const port = url.port === '' ? '' : `:${url.port}`;
  return `${host}${port}${normalizedPath(url.pathname)}${sortedQuery(url.search)}`;
}

/** normalizeUrl, or null when the input is not a URL. */
export function tryNormalizeUrl(input: string): string | null {
  try {
    return normalizeUrl(input);
  } catch {
    return null;
  }
}

/** Lower-case host of a URL (scheme optional) without `www.` and without port; null when not a URL. */
export function hostOf(url: string): string | null {
  try {
    return cleanHostname(parseLoose(url).hostname);
  } catch {
    return null;
  }
}

/**
 * The domain of an entity (brand or competitor) from its URL: its host without `www.`. Deliberately
 * not reduced to the registrable domain: a brand living on a shared platform (`acme.myshopify.com`)
 * must not claim every citation of the platform. Null when the URL is not usable.
 */
export function domainOf(url: string): string | null {
  return hostOf(url);
}

function bareHost(hostOrUrl: string): string | null {
  if (typeof hostOrUrl !== 'string' || hostOrUrl.trim() === '') return null;
  return hostOf(hostOrUrl);
}

/**
 * A host or domain as isHostWithinDomain compares it (parsed, without `www.`), or null: to parse each of many hosts and
 * domains once when comparing them all (isComparableHostWithin).
 */
export function comparableHost(hostOrUrl: string | null | undefined): string | null {
  return hostOrUrl ? bareHost(hostOrUrl) : null;
}

/** isHostWithinDomain of two comparableHost values. */
export function isComparableHostWithin(h: string | null, d: string | null): boolean {
  return !!h && !!d && (h === d || h.endsWith(`.${d}`));
}

/** True when host equals domain or is a subdomain of it (`blog.acme.com` is within `acme.com`). */
export function isHostWithinDomain(host: string | null | undefined, domain: string | null | undefined): boolean {
  if (!host || !domain) return false;
  return isComparableHostWithin(comparableHost(host), comparableHost(domain));
}

/**
 * True when url is baseUrl itself or a page below it: same normalized host (and port) and a path
 * that equals the base path or continues it at a segment boundary (`/shop` covers `/shop/a` but not
 * `/shopping`). Scheme, `www.`, query and fragment are ignored; a subdomain is not "below".
 */
export function isUrlAtOrBelow(url: string, baseUrl: string): boolean {
  let a: URL;
  let b: URL;
  try {
    a = parseLoose(url);
    b = parseLoose(baseUrl);
  } catch {
    return false;
  }
  if (cleanHostname(a.hostname) !== cleanHostname(b.hostname) || a.port !== b.port) return false;
  const base = normalizedPath(b.pathname);
  const path = normalizedPath(a.pathname);
  if (base === '/') return true;
  return path === base || path.startsWith(`${base}/`);
}

// Stops at whitespace, quotes, angle brackets and full-width punctuation that often follows a link.
const URL_IN_TEXT =
  /\bhttps?:\/\/[^\s<>"'`\u3000-\u303f\uff01-\uff0f\uff1a-\uff20]+|(?<![\w.@/-])www\.[^\s<>"'`\u3000-\u303f\uff01-\uff0f\uff1a-\uff20]+/gi;
const TRAILING = /[.,;:!?*_~…]$/;
const PAIRS: Record<string, string> = { ')': '(', ']': '[', '}': '{' };

function count(s: string, ch: string): number {
  let n = 0;
  for (const c of s) if (c === ch) n++;
  return n;
}

function trimTrailing(raw: string): string {
  let s = raw;
  for (;;) {
    const last = s.slice(-1);
    if (TRAILING.test(last)) {
      s = s.slice(0, -1);
      continue;
    }
    const open = PAIRS[last];
    if (open && count(s, last) > count(s, open)) {
      s = s.slice(0, -1);
      continue;
    }
    return s;
  }
}

/**
 * URLs in free text: `http(s)://` URLs and bare `www.` links, in order of first appearance, each
 * once, as written (a bare `www.` link keeps having no scheme), with trailing punctuation and
 * unbalanced closing brackets trimmed (so `(see https://a.com/x).` and Markdown links work).
 */
export function extractUrls(text: string): string[] {
  if (typeof text !== 'string' || text === '') return [];
  const out: string[] = [];
  const seen = new Set<string>();
  for (const m of text.matchAll(URL_IN_TEXT)) {
    const u = trimTrailing(m[0]);
    if (seen.has(u) || tryNormalizeUrl(u) === null) continue;
    seen.add(u);
    out.push(u);
  }
  return out;
}

/**
 * Public suffixes of more than one label that aivis knows. A small built-in excerpt of the
 * Public Suffix List (common country second-level domains and a few hosting platforms whose
 * customers get subdomains); any other host's suffix is its last label.
 */
export const MULTI_LABEL_SUFFIXES: ReadonlySet<string> = new Set([
  // United Kingdom
  'co.uk',
  'org.uk',
  'me.uk',
  'ltd.uk',
  'plc.uk',
  'net.uk',
  'ac.uk',
  'gov.uk',
  'sch.uk',
  'nhs.uk',
  'police.uk',
  // Australia, New Zealand
  'com.au',
  'net.au',
  'org.au',
  'edu.au',
  'gov.au',
  'asn.au',
  'id.au',
  'co.nz',
  'net.nz',
  'org.nz',
  'ac.nz',
  'govt.nz',
  'school.nz',
  // Asia
  'co.jp',
  'ne.jp',
  'or.jp',
  'ac.jp',
  'go.jp',
  'gr.jp',
  'ad.jp',
  'ed.jp',
  'lg.jp',
  'co.kr',
  'ne.kr',
  'or.kr',
  'ac.kr',
  'go.kr',
  'com.cn',
  'net.cn',
  'org.cn',
  'gov.cn',
  'edu.cn',
  'com.hk',
  'org.hk',
  'net.hk',
  'edu.hk',
  'gov.hk',
  'com.tw',
  'org.tw',
  'net.tw',
  'edu.tw',
  'gov.tw',
  'com.sg',
  'org.sg',
  'net.sg',
  'edu.sg',
  'gov.sg',
  'com.my',
  'net.my',
  'org.my',
  'edu.my',
  'gov.my',
  'co.id',
  'or.id',
  'ac.id',
  'go.id',
  'web.id',
  'co.in',
  'net.in',
  'org.in',
  'firm.in',
  'gen.in',
  'ind.in',
  'ac.in',
  'edu.in',
  'gov.in',
  'co.th',
  'in.th',
  'ac.th',
  'go.th',
  'or.th',
  'com.ph',
  'net.ph',
  'org.ph',
  'edu.ph',
  'gov.ph',
  'com.vn',
  'net.vn',
  'org.vn',
  'edu.vn',
  'gov.vn',
  'com.pk',
  'net.pk',
  'org.pk',
  'edu.pk',
  'gov.pk',
  'co.il',
  'org.il',
  'net.il',
  'ac.il',
  'gov.il',
  'com.tr',
  'net.tr',
  'org.tr',
  'edu.tr',
  'gov.tr',
  'com.sa',
  'net.sa',
  'org.sa',
  'edu.sa',
  'gov.sa',
  // Americas
  'com.br',
  'net.br',
  'org.br',
  'edu.br',
  'gov.br',
  'com.mx',
  'net.mx',
  'org.mx',
  'edu.mx',
  'gob.mx',
  'com.ar',
  'net.ar',
  'org.ar',
  'edu.ar',
  'gob.ar',
  'com.co',
  'net.co',
  'org.co',
  'edu.co',
  'gov.co',
  'com.pe',
  'org.pe',
  'gob.pe',
  'com.ve',
  'com.ec',
  'com.uy',
  'com.py',
  'com.bo',
  // Africa, Europe
  'co.za',
  'org.za',
  'net.za',
  'ac.za',
  'gov.za',
  'edu.za',
  'com.ng',
  'org.ng',
  'gov.ng',
  'edu.ng',
  'co.ke',
  'or.ke',
  'ac.ke',
  'go.ke',
  'com.eg',
  'edu.eg',
  'gov.eg',
  'com.ua',
  'net.ua',
  'org.ua',
  'com.pl',
  'net.pl',
  'org.pl',
  'co.at',
  'or.at',
  'com.gr',
  'com.cy',
  'com.mt',
  // hosting platforms (private section of the Public Suffix List)
  'github.io',
  'gitlab.io',
  'herokuapp.com',
  'vercel.app',
  'netlify.app',
  'pages.dev',
  'workers.dev',
  'web.app',
  'firebaseapp.com',
  'appspot.com',
  'blogspot.com',
  'myshopify.com',
  'azurewebsites.net',
  'cloudfront.net',
]);

function isIpLiteral(host: string): boolean {
  return host.startsWith('[') || /^\d{1,3}(\.\d{1,3}){3}$/.test(host);
}

/**
 * Public suffix of a host (or URL): `co.uk` for `shop.acme.co.uk`, `com` for `blog.acme.com`.
 * Empty for an IP address, `localhost` or an unusable input.
 */
export function suffix(hostOrUrl: string): string {
  const host = bareHost(hostOrUrl);
  if (!host || isIpLiteral(host) || !host.includes('.')) return '';
  const labels = host.split('.');
  for (let i = 0; i < labels.length - 1; i++) {
    const candidate = labels.slice(i).join('.');
    if (MULTI_LABEL_SUFFIXES.has(candidate)) return candidate;
  }
  return labels[labels.length - 1];
}

/**
 * Registrable domain of a host (or URL): the public suffix plus one label (`acme.co.uk` for
 * `shop.acme.co.uk`). A host that is itself a suffix, an IP address or `localhost` is returned as
 * it is; an unusable input gives an empty string.
 */
export function rootDomain(hostOrUrl: string): string {
  const host = bareHost(hostOrUrl);
  if (!host) return '';
  const sfx = suffix(host);
  if (sfx === '' || sfx === host) return host;
  const rest = host.slice(0, -(sfx.length + 1));
  return `${rest.slice(rest.lastIndexOf('.') + 1)}.${sfx}`;
}
