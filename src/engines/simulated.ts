/**
 * The simulated answer engine (embedded default, tests, benchmarks): no network, a pure function of
 * (seed, website entities, prompt, model, location, persona, day).
 *
 * - Each entity has a stable affinity to a (seed, prompt) pair and a stable lean per model, so the
 *   same brand tends to come up for the same prompt day after day, while the day, location and
 *   persona move which entities are named and in which order. About one answer in eight names none.
 * - An entity is named by its name, sometimes by one of its identifiers or its domain.
 * - Citations: entity pages (own domain, sometimes www./blog., http, utm tracking) and third-party
 *   pages from a fixed pool (review sites, forums, news, reference). Search-backed models
 *   (catalogue web_search, perplexity, serpapi) cite 2 to 7 sources; the others 0 to 2.
 * - Product cards only on the catalogue's shopping models, about two answers in three, 2 to 6
 *   priced cards from the entities' brands and other brands, currency by location.
 * - usage.credits 1 per answer, token counts ~ characters / 4; latency_ms is a plausible simulated
 *   duration (nothing waits) so that equal inputs give identical results.
 */
import { getModel, isShoppingModelId, type Model } from '../domain/models';
import { type AnswerEngine, type AnswerRequest, type AnswerResult, EngineError, type ProductCard } from './port';
import { isWriterPrompt, simulateWriting } from './simulated-writer';
import { cutText } from '../domain/text';

// --- hashing and the PRNG -------------------------------------------------------------------------

function avalanche(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** FNV-1a over UTF-16 code units, then avalanched. */
export function hash32(s: string, seed = 0): number {
  let h = (0x811c9dc5 ^ seed) >>> 0;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return avalanche(h);
}

function pick<T>(r: Sfc32, xs: readonly T[]): T {
  return xs[Math.floor(r.next() * xs.length)];
}

const mix = (a: number, b: number): number => avalanche((a ^ Math.imul(b, 0x9e3779b1)) >>> 0);
const unit = (h: number): number => h / 4294967296;

/** sfc32: small, fast, good enough for text generation. */
export class Sfc32 {
  constructor(
    private a: number,
    private b: number,
    private c: number,
    private d: number,
  ) {
    for (let i = 0; i < 12; i++) this.next();
  }

  /** A float in [0, 1). */
  next(): number {
    const t = (((this.a + this.b) | 0) + this.d) | 0;
    this.d = (this.d + 1) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) | 0;
    return (t >>> 0) / 4294967296;
  }
}

// --- fixed pools ----------------------------------------------------------------------------------

const QUALITIES = [
  'ease of use',
  'value for money',
  'customer support',
  'reliability',
  'build quality',
  'range of features',
  'delivery times',
  'transparent pricing',
  'integrations',
  'durability',
  'security',
  'performance',
];

const INTROS = [
  (p: string) => `Here is an overview for "${p}".`,
  (p: string) => `There is no single best answer to "${p}", but a few options stand out.`,
  () => 'Based on recent reviews and user discussions, here are some options worth considering.',
  () => 'Several options come up repeatedly when people ask about this.',
  () => 'The right choice depends on what you value most.',
];

const MENTIONS = [
  (e: string, q: string) => `${e} is often recommended for its ${q}.`,
  (e: string, q: string) => `Many reviewers point to ${e} when ${q} matters most.`,
  (e: string, q: string) => `${e} stands out for ${q}, though pricing can be a concern.`,
  (e: string, q: string) => `${e} is a solid choice with good ${q}.`,
  (e: string, q: string) => `Users on forums frequently mention ${e} for ${q}.`,
  (e: string, q: string) => `If ${q} is the priority, ${e} is worth a look.`,
];

const GENERIC = [
  (q: string, r: string) => `It depends on your budget and needs; compare ${q} and ${r} before deciding.`,
  (q: string) => `Look for independent reviews, transparent pricing and good ${q}.`,
  () => 'Most people recommend starting with a free trial and reading recent user reviews.',
  (q: string, r: string) => `Focus on ${q} first, then on ${r}.`,
];

const CLOSINGS = [
  'Check current prices and reviews before you decide.',
  'Prices and features change often, so verify the details on the official sites.',
  'Shortlisting two or three options and trying them side by side helps.',
];

const ENTITY_PATHS = ['/', '/pricing', '/products', '/features', '/compare', '/reviews', '/about'];

type ThirdParty = (slug: string, r: Sfc32, day: string) => string;
const n6 = (r: Sfc32) => String(100000 + Math.floor(r.next() * 900000));
const id36 = (r: Sfc32, len: number) =>
  Math.floor(r.next() * 36 ** len)
    .toString(36)
    .padStart(len, '0');
const SUBREDDITS = ['BuyItForLife', 'smallbusiness', 'productivity', 'personalfinance', 'software', 'HomeImprovement'];

const THIRD_PARTY: ThirdParty[] = [
  (s) => `https://www.g2.com/categories/${s}`,
  (s, r) => `https://www.trustpilot.com/review/${s}-${n6(r)}`,
  (s, r) => `https://www.capterra.com/p/${n6(r)}/${s}/`,
  (s) => `https://www.consumerreports.org/${s}/`,
  (s) => `https://www.nytimes.com/wirecutter/reviews/${s}/`,
  (s, r) => `https://www.reddit.com/r/${SUBREDDITS[Math.floor(r.next() * SUBREDDITS.length)]}/comments/${id36(r, 6)}/${s}/`,
  (s) => `https://www.quora.com/${s}`,
  (_s, r) => `https://news.ycombinator.com/item?id=${30000000 + Math.floor(r.next() * 9000000)}`,
  (s, _r, d) => `https://techcrunch.com/${d.slice(0, 4)}/${d.slice(5, 7)}/${s}/`,
  (s, r) => `https://www.theverge.com/${n6(r)}/${s}`,
  (s) => `https://www.forbes.com/advisor/${s}/`,
  (s, r) => `https://www.bbc.com/news/${s}-${n6(r)}`,
  (s) => `https://en.wikipedia.org/wiki/${s}`,
  (_s, r) => `https://www.youtube.com/watch?v=${id36(r, 11)}`,
];

const OTHER_BRANDS = ['Northwind', 'Contoso', 'Fabrikam', 'Globex', 'Initech', 'Tailspin', 'Wingtip', 'Litware'];
const PRODUCT_LINES = ['Pro', 'Max', 'Lite', 'Plus', 'Air', 'One', 'Essential', 'Ultra', 'Mini', 'Go'];
const MERCHANTS: Array<[string, (r: Sfc32) => string]> = [
  ['Amazon', (r) => `https://www.amazon.com/dp/B0${id36(r, 8).toUpperCase()}`],
  ['Walmart', (r) => `https://www.walmart.com/ip/${n6(r)}${n6(r)}`],
  ['Best Buy', (r) => `https://www.bestbuy.com/site/${n6(r)}.p`],
  ['Target', (r) => `https://www.target.com/p/-/A-${n6(r)}${Math.floor(r.next() * 100)}`],
  ['eBay', (r) => `https://www.ebay.com/itm/${n6(r)}${n6(r)}`],
];

const EURO = new Set(['AT', 'BE', 'CY', 'DE', 'EE', 'ES', 'FI', 'FR', 'GR', 'HR', 'IE', 'IT', 'LT', 'LU', 'LV', 'MT', 'NL', 'PT', 'SI', 'SK']);
const EURO_NAMES = new Set(['austria', 'belgium', 'germany', 'spain', 'finland', 'france', 'greece', 'ireland', 'italy', 'netherlands', 'portugal']);

function currencyFor(country: string | undefined): string {
  if (!country) return 'USD';
  const c = country.trim();
  const up = c.toUpperCase();
  if (up === 'GB' || up === 'UK' || /united kingdom|britain|england/i.test(c)) return 'GBP';
  if (EURO.has(up) || EURO_NAMES.has(c.toLowerCase())) return 'EUR';
  if (up === 'CA' || /^canada$/i.test(c)) return 'CAD';
  if (up === 'AU' || /^australia$/i.test(c)) return 'AUD';
  if (up === 'JP' || /^japan$/i.test(c)) return 'JPY';
  if (up === 'IN' || /^india$/i.test(c)) return 'INR';
  return 'USD';
}

// --- entities -------------------------------------------------------------------------------------

interface SimEntity {
  name: string;
  domain: string;
  identifiers: readonly string[];
  h: number;
}

// Prompts, names, domains and identifiers repeat across answers: their hashes and slugs are
// memoised (bounded: a full cache is simply dropped).
const CACHE_LIMIT = 100_000;
const hashes = new Map<string, number>();
function cachedHash(s: string): number {
  let h = hashes.get(s);
  if (h === undefined) {
    if (hashes.size >= CACHE_LIMIT) hashes.clear();
    h = hash32(s, 0x51ed);
    hashes.set(s, h);
  }
  return h;
}
const slugs = new Map<string, string>();
function cachedSlug(s: string): string {
  let slug = slugs.get(s);
  if (slug === undefined) {
    if (slugs.size >= CACHE_LIMIT) slugs.clear();
    slug = slugify(s);
    slugs.set(s, slug);
  }
  return slug;
}
const entityHash = (name: string): number => cachedHash(name.toLowerCase());

function entitiesOf(req: AnswerRequest): SimEntity[] {
  const w = req.website;
  if (!w) return [];
  const out: SimEntity[] = [];
  if (w.brand?.name) out.push({ name: w.brand.name, domain: w.brand.domain ?? '', identifiers: [], h: entityHash(w.brand.name) });
  for (const c of w.competitors ?? []) {
    if (c?.name) out.push({ name: c.name, domain: c.domain ?? '', identifiers: c.identifiers ?? [], h: entityHash(c.name) });
  }
  return out;
}

function slugify(s: string, max = 60): string {
  const slug = s
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
  return (slug.length > max ? slug.slice(0, max).replace(/-+$/, '') : slug) || 'overview';
}

// --- the answer -----------------------------------------------------------------------------------

const modelHashes = new Map<string, number>();
const modelHash = (id: string): number => {
  let h = modelHashes.get(id);
  if (h === undefined) modelHashes.set(id, (h = hash32(id, 0x3c6e)));
  return h;
};

const byKeyDesc = (a: { key: number }, b: { key: number }) => b.key - a.key;

const searchBacked = (m: Model) => m.web_search === true || m.adapter === 'perplexity' || m.adapter === 'serpapi';

/** One simulated answer; throws EngineError 'rejected' for a model outside the catalogue. */
export function simulateAnswer(req: AnswerRequest, defaultSeed: string | number = 0): AnswerResult {
  const model = getModel(req.model);
  if (!model) throw new EngineError('rejected', `unknown model ${JSON.stringify(req.model)}`);
  const prompt = typeof req.prompt === 'string' ? req.prompt : '';
  const day = typeof req.day === 'string' ? req.day : '';
  const seed = String(req.seed ?? defaultSeed);
  const loc = req.location;
  const place = loc ? [loc.city, loc.region, loc.country].filter(Boolean).join(', ') : '';

  const hSeed = hash32(seed, 0x2545);
  const hPrompt = mix(cachedHash(prompt), hSeed);
  const hModel = modelHash(model.id);
  const entities = entitiesOf(req);
  let hEntities = 0x1b873593;
  for (const e of entities) {
    hEntities = mix(hEntities, e.h);
    hEntities = mix(hEntities, cachedHash(e.domain));
    for (const id of e.identifiers) hEntities = mix(hEntities, cachedHash(id));
  }
  // a later sample of the same unit is another draw; sample 0 is the answer the unit gave before samples existed
  const sample = req.sample ? `\u0000${req.sample}` : '';
  const hContext = hash32(`${day}\u0000${place}\u0000${req.persona?.name ?? ''}${sample}`, hSeed);
  const r = new Sfc32(mix(hPrompt, hContext), mix(hModel, hEntities), mix(hContext, hModel) ^ hPrompt, mix(hEntities, hSeed));

  // who is named, and in which order
  const generic = entities.length === 0 || r.next() < 0.12;
  const named: Array<{ e: SimEntity; key: number }> = [];
  if (!generic) {
    for (const e of entities) {
      const affinity = unit(mix(hPrompt, e.h));
      const lean = unit(mix(hModel, e.h)) - 0.5;
      const p = 0.08 + 0.72 * affinity + 0.3 * lean;
      if (r.next() < p) named.push({ e, key: affinity * 0.6 + r.next() * 0.4 });
    }
    named.sort(byKeyDesc);
    if (named.length > 5) named.length = 5;
  }

  const shortPrompt = prompt.length > 80 ? `${cutText(prompt, 77).trimEnd()}...` : prompt.trim();
  const sentences: string[] = [pick(r, INTROS)(shortPrompt)];
  if (place && r.next() < 0.5) sentences.push(`For someone in ${place}, availability and local support can differ.`);
  if (req.persona?.name && r.next() < 0.4) sentences.push(`For a ${req.persona.name.toLowerCase()}, ${pick(r, QUALITIES)} usually matters most.`);
  const refs: string[] = [];
  for (const { e } of named) {
    const x = r.next();
    const ref =
      x < 0.72 || (!e.identifiers.length && !e.domain) ? e.name : x < 0.87 && e.identifiers.length ? pick(r, e.identifiers) : e.domain || e.name;
    refs.push(ref);
    sentences.push(pick(r, MENTIONS)(ref, pick(r, QUALITIES)));
  }
  if (refs.length >= 2 && r.next() < 0.35) sentences.push(`Compared with ${refs[1]}, ${refs[0]} tends to offer better ${pick(r, QUALITIES)}.`);
  if (named.length === 0) sentences.push(pick(r, GENERIC)(pick(r, QUALITIES), pick(r, QUALITIES)));

  // citations
  const citations: string[] = [];
  const searches = searchBacked(model);
  const count = searches ? 2 + Math.floor(r.next() * 6) : r.next() < 0.5 ? 0 : 1 + Math.floor(r.next() * 2);
  for (let i = 0; i < count; i++) {
    let url: string;
    const onEntity = entities.length > 0 && r.next() < 0.45;
    if (onEntity) {
      const e = named.length && r.next() < 0.85 ? named[Math.floor(r.next() * named.length)].e : entities[Math.floor(r.next() * entities.length)];
      if (!e.domain) continue;
      const y = r.next();
      const host = y < 0.6 ? e.domain : y < 0.9 ? `www.${e.domain}` : `blog.${e.domain}`;
      const path = host.startsWith('blog.') ? `/${cachedSlug(prompt)}` : pick(r, ENTITY_PATHS);
      url = `${r.next() < 0.85 ? 'https' : 'http'}://${host}${path}`;
    } else {
      url = pick(r, THIRD_PARTY)(cachedSlug(prompt), r, day || '2000-01-01');
    }
    const t = r.next();
    if (t < 0.2) url += `${url.includes('?') ? '&' : '?'}utm_source=${model.id}`;
    else if (t < 0.25) url += `${url.includes('?') ? '&' : '?'}utm_source=${model.id}&utm_medium=referral`;
    if (!citations.includes(url)) citations.push(url);
  }
  if (citations.length && r.next() < 0.15) sentences.push(`See ${citations[0]} for a detailed comparison.`);
  if (r.next() < 0.5) sentences.push(pick(r, CLOSINGS));

  // product cards
  const products: ProductCard[] = [];
  if (isShoppingModelId(model.id) && r.next() < 0.65) {
    const n = 2 + Math.floor(r.next() * 5);
    const currency = currencyFor(loc?.country);
    const scale = currency === 'JPY' ? 150 : currency === 'INR' ? 80 : 1;
    for (let i = 0; i < n; i++) {
      const fromEntity = entities.length > 0 && r.next() < 0.55;
      const e = fromEntity
        ? named.length && r.next() < 0.7
          ? named[Math.floor(r.next() * named.length)].e
          : entities[Math.floor(r.next() * entities.length)]
        : undefined;
      const brand = e ? e.name : pick(r, OTHER_BRANDS);
      const line = pick(r, PRODUCT_LINES);
      const number = 1 + Math.floor(r.next() * 9);
      const name = `${brand} ${line} ${number}`;
      const base = 15 + r.next() * r.next() * 600;
      const price = scale === 1 ? Math.floor(base) + 0.99 : Math.round(base * scale);
      let merchant: string;
      let url: string;
      if (e?.domain && r.next() < 0.35) {
        merchant = e.domain;
        url = `https://${e.domain}/products/${cachedSlug(brand)}-${line.toLowerCase()}-${number}`;
      } else {
        const [m, link] = pick(r, MERCHANTS);
        merchant = m;
        url = link(r);
      }
      products.push({ name, brand, merchant, price, currency, position: i + 1, url });
    }
  }

  const text = sentences.join(' ');
  const evidence = searches
    ? simulateEvidence(new Sfc32(mix(hPrompt, 0x51ed), hContext, hModel ^ hEntities, hSeed), prompt, day, entities, citations)
    : {};
  return {
    text,
    citations,
    products,
    ...evidence,
    usage: {
      credits: 1,
      input_tokens: Math.ceil((prompt.length + place.length) / 4) + 8,
      output_tokens: Math.ceil(text.length / 4),
    },
    provider_model: `simulated/${model.provider_model}`,
    latency_ms: Math.round((searches ? 1500 : 600) + r.next() * 3500),
  };
}

const QUERY_SUFFIXES = [' reviews', ' comparison', ' pricing', ' alternatives', ' best rated'];

/** A search-backed model's evidence, from its own generator (the answer's text and citations stay as they were). */
function simulateEvidence(r: Sfc32, prompt: string, day: string, entities: SimEntity[], citations: string[]) {
  const retrieved = [...citations];
  const extra = 1 + Math.floor(r.next() * 5);
  for (let i = 0; i < extra; i++) {
    const e = entities.length > 0 && r.next() < 0.4 ? entities[Math.floor(r.next() * entities.length)] : undefined;
    const url = e?.domain ? `https://${e.domain}${pick(r, ENTITY_PATHS)}` : pick(r, THIRD_PARTY)(cachedSlug(prompt), r, day || '2000-01-01');
    if (!retrieved.includes(url)) retrieved.push(url);
  }
  const base =
    cutText(
      prompt
        .trim()
        .toLowerCase()
        .replace(/[?!.]+$/, ''),
      120,
    ).trim() || 'best options';
  const queries = [base];
  const more = Math.floor(r.next() * 3);
  for (let i = 0; i < more; i++) {
    const q = `${base}${pick(r, QUERY_SUFFIXES)}`;
    if (!queries.includes(q)) queries.push(q);
  }
  return { retrieved, search_queries: queries };
}

export interface SimulatedEngineOptions {
  /** The seed used when a request carries none. Default 0. */
  seed?: string | number;
}

export function createSimulatedEngine(options: SimulatedEngineOptions = {}): AnswerEngine {
  const seed = options.seed ?? 0;
  return {
    async ask(req) {
      // the content writer's prompts (src/engines/writer.ts) get a document, not an answer
      if (isWriterPrompt(req.prompt)) return simulateWriting(req);
      return simulateAnswer(req, seed);
    },
  };
}
