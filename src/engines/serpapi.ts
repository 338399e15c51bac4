/**
 * SerpApi: GET {base}/search.json?engine=…&api_key=<key>&… (default base https://serpapi.com). The
 * catalogue's provider_model is the SerpApi engine.
 *
 * - google_ai_mode, bing_copilot (and any other engine taking `q`): one request with q=prompt.
 * - google_ai_overview: that engine takes only a page_token, so first a Google search
 *   (engine=google&q=prompt); its `ai_overview` is the answer when it is inline, and when it holds
 *   only a `page_token` a second request (engine=google_ai_overview&page_token=…) fetches it.
 *   No AI Overview shown is an empty answer (text "", no citations): Google showed none.
 * Location: Google engines get gl=<country code> and location="City, Region, Country" when a city
 * is known; Bing Copilot takes no location.
 * Answer: `text_blocks` flattened to lines (paragraph/heading snippets, list items, table rows,
 * code); `header` first where given (Bing Copilot); `reconstructed_markdown`/`markdown` when there
 * are no blocks. Evidence: every `references[].link` is retrieved; SerpApi reports no search queries.
 * Citations: when blocks (or list items, at any depth) carry `reference_indexes` (values of
 * `references[].index`, its position when it has none), the references pointed at, in order of first
 * mention; when none does (or none points at a reference), every reference in order. Products:
 * `shopping_results[]` (title, source, extracted_price or the price text, its currency from the
 * symbol, link), position = order.
 * A 200 with `error` "…hasn't returned any results…" is an empty answer; another `error` is `rejected`.
 */
import { type Attempt, type AttemptResult, createLiveEngine, joinUrl, type LiveEngine, type LiveEngineDeps, type ProviderIo } from './http';
import { asArray, asNumber, asString, countryCode, get, isRecord, locationText, UrlList } from './parse';
import { type AnswerRequest, EngineError, type ProductCard } from './port';
import { cutText } from '../domain/text';

export const SERPAPI_BASE_URL = 'https://serpapi.com';
export const AI_OVERVIEW_ENGINE = 'google_ai_overview';

const isGoogle = (engine: string) => engine === 'google' || engine.startsWith('google_');

function locationParams(engine: string, req: AnswerRequest): Record<string, string> {
  if (!isGoogle(engine) || !req.location) return {};
  const out: Record<string, string> = {};
  const cc = countryCode(req.location.country);
  // Google's own code for the United Kingdom is uk
  if (cc) out.gl = cc === 'GB' ? 'uk' : cc.toLowerCase();
  if (req.location.city) out.location = locationText(req.location);
  return out;
}

export function serpApiUrl(base: string, params: Record<string, string>): string {
  return `${joinUrl(base, 'search.json')}?${new URLSearchParams(params).toString()}`;
}

function blockLines(block: unknown, out: string[], depth = 0): void {
  if (!isRecord(block) || depth > 8) return;
  const snippet = asString(block.snippet);
  const title = asString(block.title);
  switch (block.type) {
    case 'list':
      for (const item of asArray(block.list)) {
        const line = [asString(get(item, 'title')), asString(get(item, 'snippet'))].filter((s) => s?.trim()).join(': ');
        if (line) out.push(`- ${line}`);
        for (const nested of asArray(get(item, 'list'))) blockLines({ type: 'list', list: [nested] }, out, depth + 1);
        for (const nested of asArray(get(item, 'text_blocks'))) blockLines(nested, out, depth + 1);
      }
      return;
    case 'table':
      for (const row of asArray(block.table)) {
        const cells = asArray(row).filter((c): c is string | number => typeof c === 'string' || typeof c === 'number');
        if (cells.length) out.push(cells.join(' | '));
      }
      return;
    case 'code_block':
    case 'code': {
      const code = asString(block.code) ?? snippet;
      if (code) out.push(code);
      return;
    }
    default:
      if (snippet) out.push(snippet);
      else if (title) out.push(title);
      for (const nested of asArray(block.text_blocks)) blockLines(nested, out, depth + 1);
  }
}

const CURRENCY_SYMBOLS: Array<[string, string]> = [
  ['US$', 'USD'],
  ['CA$', 'CAD'],
  ['C$', 'CAD'],
  ['A$', 'AUD'],
  ['AU$', 'AUD'],
  ['NZ$', 'NZD'],
  ['HK$', 'HKD'],
  ['R$', 'BRL'],
  ['$', 'USD'],
  ['€', 'EUR'],
  ['£', 'GBP'],
  ['¥', 'JPY'],
  ['₹', 'INR'],
  ['₩', 'KRW'],
  ['CHF', 'CHF'],
  ['zł', 'PLN'],
  ['kr', 'SEK'],
];

/** Amount and ISO currency of a displayed price such as "$1,299.00" or "12,99 €". */
export function parsePrice(text: string | undefined): { price?: number; currency?: string } {
  if (!text) return {};
  const t = text.trim();
  const iso = /\b([A-Z]{3})\b/.exec(t)?.[1];
  const currency = iso && iso !== 'USD' && !/[$€£¥₹₩]/.test(t) ? iso : (CURRENCY_SYMBOLS.find(([s]) => t.includes(s))?.[1] ?? iso);
  const m = /(\d{1,3}(?:[.,\s]\d{3})*(?:[.,]\d{1,2})?|\d+(?:[.,]\d{1,2})?)/.exec(t);
  if (!m) return { currency };
  let n = m[1].replace(/\s/g, '');
  // the last separator followed by 1-2 digits is the decimal one
  const dec = /[.,](\d{1,2})$/.exec(n);
  n = dec ? `${n.slice(0, dec.index).replace(/[.,]/g, '')}.${dec[1]}` : n.replace(/[.,]/g, '');
  const price = Number(n);
  return Number.isFinite(price) ? { price, currency } : { currency };
}

export function parseShopping(results: unknown): ProductCard[] {
  const cards: ProductCard[] = [];
  for (const r of asArray(results)) {
    if (!isRecord(r)) continue;
    const name = asString(r.title) ?? asString(r.name);
    if (!name) continue;
    const shown = parsePrice(asString(r.price) ?? asString(get(r, 'price', 'raw')));
    const card: ProductCard = { name, position: cards.length + 1 };
    const brand = asString(r.brand);
    if (brand) card.brand = brand;
    const merchant = asString(r.source) ?? asString(r.seller) ?? asString(r.merchant);
    if (merchant) card.merchant = merchant;
    const price = asNumber(r.extracted_price) ?? shown.price;
    if (price !== undefined) card.price = price;
    const currency = shown.currency ?? asString(get(r, 'alternative_price', 'currency'));
    if (currency) card.currency = currency;
    const url = asString(r.link) ?? asString(r.product_link);
    if (url && /^https?:\/\//i.test(url)) card.url = url;
    cards.push(card);
  }
  return cards;
}

const NO_RESULTS = /hasn't returned any results|returned no results|no results for this query/i;

/** Reads one SerpApi answer body (or its ai_overview object) into text, citations and products. */
export function parseSerpApi(body: unknown, requireAnswer = true): AttemptResult {
  if (!isRecord(body)) throw new EngineError('bad_response', 'answer is not a JSON object');
  const error = asString(body.error);
  if (error !== undefined) {
    if (NO_RESULTS.test(error)) return { text: '', citations: [], products: [] };
    throw new EngineError('rejected', `SerpApi error: ${cutText(error, 300)}`);
  }
  const source = isRecord(body.ai_overview) && body.text_blocks === undefined ? body.ai_overview : body;
  const blocks = source.text_blocks;
  if (blocks !== undefined && !Array.isArray(blocks)) throw new EngineError('bad_response', 'text_blocks is not an array');
  const lines: string[] = [];
  const header = asString(body.header);
  if (header) lines.push(header);
  for (const b of asArray(blocks)) blockLines(b, lines);
  if (lines.length === 0 || (header && lines.length === 1)) {
    const md = asString(source.reconstructed_markdown) ?? asString(source.markdown);
    if (md) lines.push(md);
  }
  // with no answer SerpApi sends an `error`; a body with neither is not an answer
  if (requireAnswer && !Array.isArray(blocks) && lines.length === 0) throw new EngineError('bad_response', 'answer has no text_blocks');
  const { citations, retrieved } = referenceEvidence(asArray(source.references), asArray(blocks));
  return {
    text: lines.join('\n'),
    citations,
    products: parseShopping(body.shopping_results),
    retrieved,
  };
}

/** The `reference_indexes` of the blocks and everything nested in them (list items, nested blocks), in reading order. */
function mentionedIndexes(node: unknown, out: number[], depth = 0): number[] {
  if (depth > 12 || typeof node !== 'object' || node === null) return out;
  const own = isRecord(node) ? node.reference_indexes : undefined;
  for (const i of asArray(own)) if (asNumber(i) !== undefined) out.push(i as number);
  for (const value of Array.isArray(node) ? node : Object.values(node)) if (value !== own) mentionedIndexes(value, out, depth + 1);
  return out;
}

/**
 * Retrieved: every reference. Cited: the references the blocks point at, in order of first mention; every
 * reference when no block points at one that exists.
 */
function referenceEvidence(references: unknown[], blocks: unknown[]): { citations: string[]; retrieved: string[] } {
  const link = (ref: unknown) => get(ref, 'link') ?? get(ref, 'url');
  const retrieved = new UrlList();
  const byIndex = new Map<number, unknown>();
  references.forEach((ref, position) => {
    retrieved.add(link(ref));
    const index = asNumber(get(ref, 'index')) ?? position;
    if (!byIndex.has(index)) byIndex.set(index, ref);
  });
  const cited = new UrlList();
  for (const i of mentionedIndexes(blocks, [])) cited.add(link(byIndex.get(i)));
  return { citations: cited.urls.length ? cited.urls : retrieved.urls, retrieved: retrieved.urls };
}

async function aiOverview(io: ProviderIo, base: string, apiKey: string, req: AnswerRequest): Promise<AttemptResult> {
  const search = await io.request({ url: serpApiUrl(base, { engine: 'google', q: req.prompt, ...locationParams('google', req), api_key: apiKey }) });
  if (!isRecord(search)) throw new EngineError('bad_response', 'answer is not a JSON object');
  if (search.error !== undefined) return parseSerpApi(search, false);
  const overview = search.ai_overview;
  if (!isRecord(overview)) return { text: '', citations: [], products: [] };
  // an ai_overview that only carries an error is one Google did not show
  if (typeof overview.error === 'string' && overview.text_blocks === undefined && !overview.page_token)
    return { text: '', citations: [], products: [] };
  const token = asString(overview.page_token);
  if (overview.text_blocks === undefined && token) {
    return parseSerpApi(await io.request({ url: serpApiUrl(base, { engine: AI_OVERVIEW_ENGINE, page_token: token, api_key: apiKey }) }));
  }
  return parseSerpApi({ ai_overview: overview }, false);
}

export function createSerpApiEngine(deps: LiveEngineDeps): LiveEngine {
  const { model, apiKey } = deps;
  const base = deps.options?.baseUrl ?? model.base_url ?? SERPAPI_BASE_URL;
  const engine = model.provider_model;
  const attempt: Attempt = async (req, io) => {
    if (engine === AI_OVERVIEW_ENGINE) return aiOverview(io, base, apiKey, req);
    return parseSerpApi(await io.request({ url: serpApiUrl(base, { engine, q: req.prompt, ...locationParams(engine, req), api_key: apiKey }) }));
  };
  return createLiveEngine(deps, attempt);
}
