/**
 * Analysis of one recorded answer against a website's entities (CONTRACT.md, "Analysis"): which
 * entities it mentions and at which position, which URLs it cites and whose they are, and whose
 * product cards it shows. Pure functions: the answers projection calls them for every
 * ResponseRecorded and again over a website's whole history when its entities change, so the
 * entities are compiled once per catalogue version and every call reuses them.
 *
 * Mentions (matching rules in ./matcher): an entity's name and identifiers match as whole words,
 * case-insensitively; its domain (domainOf of its URL) matches as a host in the text, itself or
 * under a subdomain (`acme.com`, `www.acme.com/pricing`, `blog.acme.com`). Terms of all entities
 * are matched in one pass; at a position the longest term wins and the next match starts after it
 * (`Acme Pro` is a mention of "Acme Pro", not also of "Acme"); a term shared by several entities is
 * a mention of each. Position: 1 + the number of mentioned entities whose first occurrence is
 * earlier, so entities first seen at the same index (a shared term) tie; positions are computed
 * among all the website's entities, never renumbered for a subset.
 *
 * Sources: engine citations, then URLs in the text (extractUrls), each normalized (urls.ts), the
 * first of each normalized URL kept; a citation that is not an http(s) URL is dropped. A source
 * belongs to the entity whose domain is its host or the nearest parent of it (`blog.acme.com` is
 * Acme's, `acme.com.evil.net` nobody's); an entity is cited when a source is on its domain or a
 * subdomain (with nested entity domains, a source can cite more than one).
 *
 * Memo tables (URL facts, hosts, and per compiled catalogue the finished sources) are bounded at
 * 50,000 entries each and emptied when full: citation URLs recur across a website's history, and
 * normalizing one costs several URL parses. Returned sources are frozen and shared between answers.
 */
import { domainOf, extractUrls, hostOf, isHostWithinDomain, rootDomain, suffix, tryNormalizeUrl } from '../domain/urls';
import { boundedMemo } from '../domain/memo';
import { type TermKind, TermMatcher } from './matcher';

export interface EntityInput {
  id: string;
  name: string;
  is_self: boolean;
  identifiers?: readonly string[] | null;
  url?: string | null;
}

export interface CompiledEntity {
  id: string;
  name: string;
  is_self: boolean;
  /** domainOf(url), or null when the entity has no usable URL */
  domain: string | null;
}

export interface AnswerInput {
  text: string;
  citations?: readonly string[] | null;
}

export interface Mention {
  entity_id: string;
  /** 1-based; entities first seen at the same index share a position */
  position: number;
  /** UTF-16 index of the first occurrence in the text */
  first_index: number;
}

export interface Source {
  /** as cited (trimmed) or as written in the text */
  url: string;
  normalized_url: string;
  host: string;
  root_domain: string;
  suffix: string;
  /** the entity whose domain is the host or its nearest parent; null for a third party */
  entity_id: string | null;
}

export interface AnswerAnalysis {
  /** ordered by first occurrence (then catalogue order for ties) */
  mentions: Mention[];
  /** in order of first appearance, engine citations first; frozen objects shared by the answers citing the same URL */
  sources: Array<Readonly<Source>>;
  /** in order of the first source citing each */
  cited_entity_ids: string[];
}

export interface ProductCard {
  name: string;
  brand?: string | null;
  merchant?: string | null;
  price?: number | null;
  currency?: string | null;
  position: number;
  url?: string | null;
}

export interface ProductRow {
  position: number;
  name: string;
  brand: string | null;
  merchant: string | null;
  /** grouping key of the merchant: its host when it is written as a domain (`amazon.com`), else its
   * name lower-cased with spaces collapsed (`best buy`); the URL's host when the card names none */
  merchant_key: string | null;
  price: number | null;
  currency: string | null;
  url: string | null;
  normalized_url: string | null;
  host: string | null;
  /** the entity the card's brand names, or (for a card without a brand) its product name */
  entity_id: string | null;
  matched_by: 'brand' | 'name' | null;
  /** the card is the website's own brand */
  is_own: boolean;
}

/** A source as analyzeAnswer returns it, with the entities it cites; shared by every answer citing that URL. */
interface CitedUrl {
  source: Readonly<Source>;
  within: number[];
}

interface HostEntities {
  /** index of the entity with the most specific domain containing the host, or -1 */
  owner: number;
  /** every entity whose domain contains the host, most specific first */
  within: number[];
}

/** The entities of one website catalogue version, compiled for analysis. */
export class CompiledEntities {
  readonly entities: readonly CompiledEntity[];
  /** @internal */
  readonly matcher: TermMatcher;
  /** @internal scratch for scans: first index per entity, -1 when not found (reset after each use) */
  readonly first: Int32Array;
  private readonly hostEntities = new Map<string, HostEntities>();
  private readonly citedUrls = new Map<string, CitedUrl | null>();

  constructor(entities: readonly EntityInput[]) {
    const compiled: CompiledEntity[] = [];
    const terms: Array<{ entity: number; term: string; kind: TermKind }> = [];
    entities.forEach((e, i) => {
      const domain = typeof e.url === 'string' && e.url.trim() !== '' ? domainOf(e.url) : null;
      compiled.push({ id: e.id, name: e.name, is_self: e.is_self === true, domain });
      terms.push({ entity: i, term: e.name, kind: 'name' });
      for (const id of e.identifiers ?? []) terms.push({ entity: i, term: id, kind: 'name' });
      if (domain !== null) terms.push({ entity: i, term: domain, kind: 'domain' });
    });
    this.entities = compiled;
    this.matcher = new TermMatcher(compiled.length, terms);
    this.first = new Int32Array(compiled.length).fill(-1);
  }

  /** @internal Entities whose domain is the host or a parent of it (memoized: hosts recur across answers). */
  entitiesOfHost(host: string): HostEntities {
    let found = this.hostEntities.get(host);
    if (found !== undefined) return found;
    const within: number[] = [];
    this.entities.forEach((e, i) => {
      // endsWith is a cheap necessary condition; urls.ts decides
      if (e.domain !== null && host.endsWith(e.domain) && isHostWithinDomain(host, e.domain)) within.push(i);
    });
    // most specific domain first; catalogue order among equal domains
    within.sort((a, b) => this.entities[b].domain!.length - this.entities[a].domain!.length || a - b);
    found = { owner: within.length ? within[0] : -1, within };
    if (this.hostEntities.size >= CACHE_MAX) this.hostEntities.clear();
    this.hostEntities.set(host, found);
    return found;
  }

  /** @internal Forgets the memoized sources and hosts. */
  clearMemo(): void {
    this.hostEntities.clear();
    this.citedUrls.clear();
  }

  /** @internal The source for a URL as cited (trimmed), or null when it is not an http(s) URL; memoized. */
  citedUrl(url: string): CitedUrl | null {
    let c = this.citedUrls.get(url);
    if (c !== undefined) return c;
    const facts = urlFacts(url);
    if (facts === null) c = null;
    else {
      const owners = this.entitiesOfHost(facts.host);
      const source: Source = {
        url,
        normalized_url: facts.normalized_url,
        host: facts.host,
        root_domain: facts.root_domain,
        suffix: facts.suffix,
        entity_id: owners.owner === -1 ? null : this.entities[owners.owner].id,
      };
      c = { source: Object.freeze(source), within: owners.within };
    }
    if (this.citedUrls.size >= CACHE_MAX) this.citedUrls.clear();
    this.citedUrls.set(url, c);
    return c;
  }
}

/** Compiles a website's brand (is_self) and competitors for analyzeAnswer and analyzeProducts. */
export function compileEntities(entities: readonly EntityInput[]): CompiledEntities {
  return new CompiledEntities(entities);
}

// ---- URL facts, memoized (citation URLs and hosts recur across a website's answers) ----

const CACHE_MAX = 50_000;

interface UrlFacts {
  normalized_url: string;
  host: string;
  root_domain: string;
  suffix: string;
}

const hostFacts = boundedMemo(
  (host: string): { root_domain: string; suffix: string } => ({ root_domain: rootDomain(host), suffix: suffix(host) }),
  CACHE_MAX,
);

const urlFacts = boundedMemo((url: string): UrlFacts | null => {
  const normalized = tryNormalizeUrl(url);
  const host = normalized === null ? null : hostOf(url);
  return normalized === null || host === null ? null : { normalized_url: normalized, host, ...hostFacts(host) };
}, CACHE_MAX);

/** Empties the URL memo tables, and those of a compiled catalogue when given (benchmarks measure the cold path). */
export function clearUrlCaches(compiled?: CompiledEntities): void {
  urlFacts.clear();
  hostFacts.clear();
  merchantKey.clear();
  compiled?.clearMemo();
}

// ---- mentions ----

// Decomposed accents (`e` + U+0301) are composed first so `Café` matches; indices then refer to the composed text.
const COMBINING = /[\u0300-\u036f]/;

/**
 * Runs the matcher; returns the matched entity indices ordered by first index, then catalogue order
 * (their first indices are left in compiled.first: the caller reads them and resets them to -1).
 */
function scanEntities(compiled: CompiledEntities, text: string): number[] {
  const first = compiled.first;
  const t = compiled.matcher.hasNonAsciiTerms && COMBINING.test(text) ? text.normalize('NFC') : text;
  const count = compiled.matcher.scan(t, first);
  const found: number[] = [];
  if (count === 0) return found;
  for (let e = 0; e < first.length; e++) {
    if (first[e] === -1) continue;
    // insertion sort: a handful of entities per answer
    let k = found.length;
    found.push(e);
    while (k > 0 && first[found[k - 1]] > first[e]) {
      found[k] = found[k - 1];
      k--;
    }
    found[k] = e;
  }
  return found;
}

function mentionsOf(compiled: CompiledEntities, text: string): Mention[] {
  const found = scanEntities(compiled, text);
  const first = compiled.first;
  const out: Mention[] = new Array(found.length);
  let position = 0;
  let previous = -1;
  for (let k = 0; k < found.length; k++) {
    const e = found[k];
    const at = first[e];
    if (at !== previous) position = k + 1;
    previous = at;
    out[k] = { entity_id: compiled.entities[e].id, position, first_index: at };
  }
  for (const e of found) first[e] = -1;
  return out;
}

// ---- answers ----

interface SourceAcc {
  sources: Array<Readonly<Source>>;
  cited_entity_ids: string[];
}

function addSource(compiled: CompiledEntities, acc: SourceAcc, raw: unknown): void {
  if (typeof raw !== 'string' || raw === '') return;
  const url = printableAsciiAt(raw, 0) && printableAsciiAt(raw, raw.length - 1) ? raw : raw.trim();
  if (url === '') return;
  const cited = compiled.citedUrl(url);
  if (cited === null) return;
  const sources = acc.sources;
  const normalized = cited.source.normalized_url;
  for (let i = 0; i < sources.length; i++) if (sources[i].normalized_url === normalized) return;
  sources.push(cited.source);
  for (const e of cited.within) {
    const id = compiled.entities[e].id;
    if (!acc.cited_entity_ids.includes(id)) acc.cited_entity_ids.push(id);
  }
}

/** A visible ASCII character at i (so there is nothing to trim on that side). */
function printableAsciiAt(s: string, i: number): boolean {
  const c = s.charCodeAt(i);
  return c > 0x20 && c < 0x7f;
}

/** True when extractUrls could find something: an `http(s)://` or a `www.` link (any case). */
function mayHoldUrl(text: string): boolean {
  if (text.includes('://')) return true;
  const isW = (i: number) => (text.charCodeAt(i) | 0x20) === 0x77;
  for (let i = text.indexOf('.', 3); i !== -1; i = text.indexOf('.', i + 1)) if (isW(i - 1) && isW(i - 2) && isW(i - 3)) return true;
  return false;
}

/** Mentions, positions, sources and cited entities of one answer (see the module comment). */
export function analyzeAnswer(compiled: CompiledEntities, answer: AnswerInput): AnswerAnalysis {
  const text = typeof answer.text === 'string' ? answer.text : '';
  const mentions = mentionsOf(compiled, text);
  const acc: SourceAcc = { sources: [], cited_entity_ids: [] };
  const citations = answer.citations;
  if (citations) for (let i = 0; i < citations.length; i++) addSource(compiled, acc, citations[i]);
  if (mayHoldUrl(text)) for (const u of extractUrls(text)) addSource(compiled, acc, u);
  return { mentions, sources: acc.sources, cited_entity_ids: acc.cited_entity_ids };
}

// ---- product cards ----

const str = (v: unknown): string | null => (typeof v === 'string' && v.trim() !== '' ? v.trim() : null);

const merchantKey = boundedMemo((merchant: string): string => {
  const host = /\s/.test(merchant) || !merchant.includes('.') ? null : hostOf(merchant);
  return host ?? merchant.normalize('NFC').toLowerCase().replace(/\s+/g, ' ');
}, CACHE_MAX);

/** The entity a string names first (catalogue order among ties), or -1. */
function firstEntityIn(compiled: CompiledEntities, s: string): number {
  const found = scanEntities(compiled, s);
  for (const e of found) compiled.first[e] = -1;
  return found.length ? found[0] : -1;
}

/**
 * Product cards with the entity they belong to. The brand decides when the card has one (a card of
 * an untracked brand whose name merely mentions an entity, "case for Acme X", is nobody's); the
 * product name is used only for a card without a brand. Rows keep the cards' order.
 */
export function analyzeProducts(compiled: CompiledEntities, products: readonly ProductCard[]): ProductRow[] {
  return products.map((p) => {
    const name = typeof p.name === 'string' ? p.name.trim() : '';
    const brand = str(p.brand);
    const merchant = str(p.merchant);
    const url = str(p.url);
    const facts = url === null ? null : urlFacts(url);

    let entity = -1;
    let matched_by: ProductRow['matched_by'] = null;
    if (brand !== null) {
      entity = firstEntityIn(compiled, brand);
      if (entity !== -1) matched_by = 'brand';
    } else if (name !== '') {
      entity = firstEntityIn(compiled, name);
      if (entity !== -1) matched_by = 'name';
    }
    const currency = str(p.currency);
    return {
      position: p.position,
      name,
      brand,
      merchant,
      merchant_key: merchant !== null ? merchantKey(merchant) : (facts?.host ?? null),
      price: typeof p.price === 'number' && Number.isFinite(p.price) ? p.price : null,
      currency: currency === null ? null : currency.toUpperCase(),
      url,
      normalized_url: facts?.normalized_url ?? null,
      host: facts?.host ?? null,
      entity_id: entity === -1 ? null : compiled.entities[entity].id,
      matched_by,
      is_own: entity !== -1 && compiled.entities[entity].is_self,
    };
  });
}
