import type { EventData } from '../domain/events';
import { deterministicId } from '../domain/ids';
import { cutText } from '../domain/text';

/** A page as the SEO job reads it: what it says and how it is built. */
export type SeoPage = EventData<'SeoRecommendationsRequested'>['page'];
export type SeoRecommendation = EventData<'SeoRecommendationsProduced'>['recommendations'][number];

/** What a page keeps of its text: enough for every check, bounded so a request event stays small. */
export const PAGE_TEXT_MAX = 100_000;

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };
const decodeEntities = (s: string) =>
  s.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (m, e: string) => {
    if (e[0] === '#') {
      const n = e[1] === 'x' || e[1] === 'X' ? Number.parseInt(e.slice(2), 16) : Number.parseInt(e.slice(1), 10);
      return Number.isFinite(n) && n > 0 && n < 0x110000 ? String.fromCodePoint(n) : m;
    }
    return ENTITIES[e.toLowerCase()] ?? m;
  });
const squash = (s: string) => s.replace(/\s+/g, ' ').trim();
const stripTags = (s: string) => squash(decodeEntities(s.replace(/<[^>]*>/g, ' ')));

/** Schema.org types named in JSON-LD blocks (`@type`) and microdata (`itemtype`). */
function schemaTypes(html: string): string[] {
  const out = new Set<string>();
  for (const m of html.matchAll(/<script[^>]*type\s*=\s*["']?application\/ld\+json["']?[^>]*>([\s\S]*?)<\/script>/gi)) {
    for (const t of m[1].matchAll(/"@type"\s*:\s*(\[[^\]]*\]|"[^"]*")/g)) {
      for (const name of t[1].matchAll(/"([^"]+)"/g)) out.add(name[1].replace(/^https?:\/\/schema\.org\//, ''));
    }
  }
  for (const m of html.matchAll(/itemtype\s*=\s*["']https?:\/\/schema\.org\/([A-Za-z]+)["']/gi)) out.add(m[1]);
  return [...out].slice(0, 50);
}

/** A fetched HTML page: title, meta description, headings, visible text, schema.org types. */
export function parseHtmlPage(html: string): SeoPage {
  const title = /<title[^>]*>([\s\S]*?)<\/title>/i.exec(html);
  const meta =
    /<meta[^>]*name\s*=\s*["']description["'][^>]*content\s*=\s*["']([^"']*)["'][^>]*>/i.exec(html) ??
    /<meta[^>]*content\s*=\s*["']([^"']*)["'][^>]*name\s*=\s*["']description["'][^>]*>/i.exec(html);
  // the visible text only: the head (title, meta) is judged on its own and never quoted as a sentence of the page
  const body = html.replace(/<(script|style|noscript|template|head|title)\b[^>]*>[\s\S]*?<\/\1\s*>/gi, ' ').replace(/<!--[\s\S]*?-->/g, ' ');
  const headings = [...body.matchAll(/<h([1-6])[^>]*>([\s\S]*?)<\/h\1>/gi)]
    .map((m) => ({ level: Number(m[1]), text: cutText(stripTags(m[2]), 500) }))
    .filter((h) => h.text)
    .slice(0, 200);
  const blockBreaks = body.replace(/<\/(p|li|h[1-6]|div|section|article|header|footer|nav|aside|main|blockquote|dt|dd|tr|br)\s*>|<br\s*\/?>/gi, '\n');
  const text = decodeEntities(blockBreaks.replace(/<[^>]*>/g, ' '))
    .split('\n')
    .map(squash)
    .filter(Boolean)
    .join('\n');
  return {
    title: title ? cutText(stripTags(title[1]), 1000) || null : null,
    meta_description: meta ? cutText(squash(decodeEntities(meta[1])), 2000) || null : null,
    headings,
    text: cutText(text, PAGE_TEXT_MAX),
    schema_types: schemaTypes(html),
  };
}

/** A draft: its title, and its body as HTML (when it has tags) or Markdown (`#` headings). No meta description. */
export function parseDraft(draft: { title: string; body: string }): SeoPage {
  if (/<\/?(p|h[1-6]|div|ul|ol|li|section|article)\b/i.test(draft.body)) {
    const page = parseHtmlPage(draft.body);
    return { ...page, title: draft.title, meta_description: page.meta_description };
  }
  const headings: SeoPage['headings'] = [];
  const lines: string[] = [];
  for (const raw of draft.body.split(/\r?\n/)) {
    const h = /^(#{1,6})\s+(.+?)\s*#*\s*$/.exec(raw);
    if (h) headings.push({ level: h[1].length, text: cutText(h[2], 500) });
    const line = squash(raw.replace(/^#{1,6}\s+/, ''));
    if (line) lines.push(line);
  }
  return {
    title: draft.title,
    meta_description: null,
    headings: headings.slice(0, 200),
    text: cutText(lines.join('\n'), PAGE_TEXT_MAX),
    schema_types: [],
  };
}

const STOP = new Set(
  'a an and are as at be best by can do does for from how i in is it its me my of on or our should the their there this to vs what when where which who why will with you your'.split(
    ' ',
  ),
);
export const contentWords = (s: string): string[] =>
  (s.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).filter((w) => w.length > 2 && !STOP.has(w)).map((w) => (w.length > 4 ? w.replace(/s$/, '') : w));

/** The page's sentence sharing most content words with `words` (the excerpt a recommendation concerns). */
export function bestSentence(text: string, words: readonly string[]): { sentence: string; shared: number } | null {
  const want = new Set(words);
  let best: { sentence: string; shared: number } | null = null;
  for (const sentence of text.split(/(?<=[.!?])\s+|\n/)) {
    const s = sentence.trim();
    if (!s) continue;
    const shared = new Set(contentWords(s).filter((w) => want.has(w))).size;
    if (shared > 0 && (!best || shared > best.shared)) best = { sentence: cutText(s, 300), shared };
  }
  return best;
}

/** The website's own data the recommendations weigh the page against. */
export interface SeoContext {
  brand: string;
  /** the website's active prompts */
  prompts: readonly { id: string; text: string }[];
  /** per prompt id: competitors named in its answers that do not name the brand, with how many such answers */
  competitorGaps: ReadonlyMap<string, readonly { name: string; answers: number }[]>;
  /** the website's approved knowledge-base facts, newest first; empty when the organization has no knowledge base */
  facts: readonly { id: string; text: string; confidence: 'high' | 'medium' | 'low' }[];
}

/** At most this many `facts` recommendations per page. */
export const FACT_RECOMMENDATIONS_MAX = 10;
/** A fact is relevant to a page sharing at least this many of its key terms… */
const FACT_RELEVANT_TERMS = 2;
/** …and stated by it when the page has at least this share of them. */
const FACT_STATED_SHARE = 0.8;

/**
 * Approved facts the page lacks. A fact's key terms are its content words (stop words and words of two letters
 * dropped, a plural `s` folded) other than the brand's own words, which every fact shares. A fact is relevant to the
 * page when at least 2 of its key terms appear in the page's title, headings or text, and stated when at least 80% of
 * them do: each relevant fact not stated is one the page lacks. High confidence first, then most terms shared, then
 * newest; at most 10.
 */
export function factsLacking(
  page: SeoPage,
  brand: string,
  facts: SeoContext['facts'],
): { id: string; confidence: 'high' | 'medium' | 'low'; shared: string[]; terms: number }[] {
  const pageWords = new Set(contentWords(`${page.title ?? ''} ${page.headings.map((h) => h.text).join(' ')} ${page.text}`));
  const brandWords = new Set(contentWords(brand));
  const rank = { high: 0, medium: 1, low: 2 } as const;
  return facts
    .map((f, i) => {
      const terms = [...new Set(contentWords(f.text))].filter((w) => !brandWords.has(w));
      const shared = terms.filter((w) => pageWords.has(w));
      return { id: f.id, confidence: f.confidence, shared, terms: terms.length, i };
    })
    .filter((f) => f.shared.length >= FACT_RELEVANT_TERMS && f.shared.length / f.terms < FACT_STATED_SHARE)
    .sort((a, b) => rank[a.confidence] - rank[b.confidence] || b.shared.length - a.shared.length || a.i - b.i)
    .slice(0, FACT_RECOMMENDATIONS_MAX)
    .map(({ i, ...f }) => f);
}

/** Prompts whose content words the page covers at least half of: the ones it could answer. */
export function promptsCovered(page: SeoPage, prompts: SeoContext['prompts']): { id: string; text: string; coverage: number; words: string[] }[] {
  const pageWords = new Set(contentWords(`${page.title ?? ''} ${page.headings.map((h) => h.text).join(' ')} ${page.text}`));
  return prompts
    .map((p) => {
      const words = [...new Set(contentWords(p.text))];
      const coverage = words.length ? words.filter((w) => pageWords.has(w)).length / words.length : 0;
      return { ...p, coverage, words };
    })
    .filter((p) => p.words.length > 0 && p.coverage >= 0.5)
    .sort((a, b) => b.coverage - a.coverage || a.text.localeCompare(b.text));
}

/**
 * Recommendations for a page against the website's data: prompts it could answer (and whether it answers them
 * plainly), competitors the answers to those prompts name instead of the brand, approved facts it lacks, and structure (title, meta
 * description, headings, FAQ, schema.org). Each names the excerpt of the page it concerns. Deterministic: the same
 * page and data give the same list, ids included.
 */
export function recommend(jobId: string, page: SeoPage, ctx: SeoContext, source: 'url' | 'draft'): SeoRecommendation[] {
  const out: Omit<SeoRecommendation, 'id'>[] = [];
  const h1 = page.headings.filter((h) => h.level === 1);
  const title = page.title?.trim() ?? '';

  // prompts the page could answer
  const covered = promptsCovered(page, ctx.prompts).slice(0, 10);
  for (const p of covered) {
    const best = bestSentence(page.text, p.words);
    const answered = p.coverage >= 0.8 && best !== null && best.shared >= Math.min(3, p.words.length);
    out.push({
      category: 'prompt_coverage',
      severity: answered ? 'low' : 'medium',
      title: answered ? `The page answers “${p.text}”` : `The page could answer “${p.text}”`,
      detail: answered
        ? `A tracked prompt this page covers (${Math.round(p.coverage * 100)}% of its terms). Keep the answer in one plain sentence near the top so answer engines can quote it.`
        : `A tracked prompt whose terms the page covers only in part (${Math.round(p.coverage * 100)}%). Add a section that answers it directly, in the prompt's own words.`,
      excerpt: best?.sentence ?? null,
    });
    // competitors named instead of the brand
    for (const gap of (ctx.competitorGaps.get(p.id) ?? []).slice(0, 3)) {
      const named = page.text.toLowerCase().includes(gap.name.toLowerCase());
      out.push({
        category: 'competitor_gap',
        severity: gap.answers >= 3 ? 'high' : 'medium',
        title: `Answers to “${p.text}” name ${gap.name} instead of ${ctx.brand}`,
        detail: `${gap.answers} answer${gap.answers === 1 ? '' : 's'} to this prompt mention ${gap.name} and not ${ctx.brand}. State plainly what ${ctx.brand} offers for it${named ? `, and how it compares with ${gap.name}` : ''}, with facts an answer can cite.`,
        excerpt: best?.sentence ?? null,
      });
    }
  }

  // approved facts the page lacks: the excerpt is the fact's text, read from the fact when the job is polled (so a
  // deleted fact's text is never kept here); the title and detail name only terms the page has
  for (const f of factsLacking(page, ctx.brand, ctx.facts)) {
    out.push({
      category: 'facts',
      severity: f.confidence,
      title: `The page does not state an approved fact about ${f.shared.slice(0, 3).join(', ')}`,
      detail: `An approved fact of the knowledge base (${f.confidence} confidence) shares ${f.shared.length} of its ${f.terms} key terms with the page but is not stated on it. Add it in plain words so answer engines can cite ${ctx.brand} for it.`,
      excerpt: null,
      fact_id: f.id,
    });
  }

  // structure
  if (!title) {
    out.push({
      category: 'title',
      severity: 'high',
      title: 'The page has no title',
      detail: 'Give it a title of 30 to 60 characters that names the question it answers.',
      excerpt: null,
    });
  } else if (title.length > 60 || title.length < 15) {
    out.push({
      category: 'title',
      severity: 'low',
      title: title.length > 60 ? 'The title is longer than 60 characters' : 'The title is shorter than 15 characters',
      detail: `It has ${title.length} characters; 30 to 60 show whole in results and say enough.`,
      excerpt: cutText(title, 300),
    });
  }
  if (source === 'url') {
    const meta = page.meta_description?.trim() ?? '';
    if (!meta)
      out.push({
        category: 'meta_description',
        severity: 'medium',
        title: 'The page has no meta description',
        detail: 'Add one of 70 to 160 characters that answers the page’s main question.',
        excerpt: null,
      });
    else if (meta.length > 160 || meta.length < 70)
      out.push({
        category: 'meta_description',
        severity: 'low',
        title: meta.length > 160 ? 'The meta description is longer than 160 characters' : 'The meta description is shorter than 70 characters',
        detail: `It has ${meta.length} characters; 70 to 160 is what results show.`,
        excerpt: cutText(meta, 300),
      });
  }
  if (h1.length === 0 && source === 'url')
    out.push({
      category: 'headings',
      severity: 'medium',
      title: 'The page has no H1 heading',
      detail: 'Give the page one H1 that says what it is about.',
      excerpt: null,
    });
  if (h1.length > 1)
    out.push({
      category: 'headings',
      severity: 'low',
      title: `The page has ${h1.length} H1 headings`,
      detail: 'Keep one H1; make the others H2.',
      excerpt: cutText(h1[1].text, 300),
    });
  if (page.headings.filter((h) => h.level === 2).length === 0 && page.text.length > 1500)
    out.push({
      category: 'headings',
      severity: 'medium',
      title: 'The page has no H2 sections',
      detail: 'Break a long page into sections with H2 headings phrased as the questions they answer.',
      excerpt: cutText(page.text, 200),
    });
  const questions = page.headings.filter((h) => h.text.trim().endsWith('?'));
  const hasFaq =
    questions.length >= 2 || /\bfaq\b|frequently asked/i.test(page.headings.map((h) => h.text).join(' ')) || page.schema_types.includes('FAQPage');
  if (!hasFaq)
    out.push({
      category: 'faq',
      severity: 'medium',
      title: 'The page has no FAQ',
      detail: `Add a short FAQ with the questions people ask${covered.length ? `, e.g. “${covered[0].text}”` : ''}, each answered in two or three sentences.`,
      excerpt: null,
    });
  if (source === 'url' && page.schema_types.length === 0)
    out.push({
      category: 'schema',
      severity: 'medium',
      title: 'The page has no schema.org markup',
      detail: `Add JSON-LD (Organization or Product for ${ctx.brand}${hasFaq ? ', FAQPage for the FAQ' : ''}).`,
      excerpt: null,
    });
  else if (source === 'url' && hasFaq && !page.schema_types.includes('FAQPage'))
    out.push({
      category: 'schema',
      severity: 'low',
      title: 'The FAQ has no FAQPage markup',
      detail: 'Mark the questions and answers up as FAQPage in JSON-LD.',
      excerpt: questions.length ? cutText(questions[0].text, 300) : null,
    });
  if (!page.text.toLowerCase().includes(ctx.brand.toLowerCase()))
    out.push({
      category: 'brand',
      severity: 'medium',
      title: `The page never names ${ctx.brand}`,
      detail: `Answer engines quote pages that say who is speaking: name ${ctx.brand} where the page states what it offers.`,
      excerpt: null,
    });

  const rank = { high: 0, medium: 1, low: 2 } as const;
  return out
    .map((r, i) => ({ ...r, i }))
    .sort((a, b) => rank[a.severity] - rank[b.severity] || a.i - b.i)
    .map(({ i, ...r }) => ({ id: deterministicId('seo-recommendation', jobId, String(i)), ...r }));
}
