import { Name, PromptText } from '../../commands/catalog/catalog-input';
import type { EventData } from '../domain/events';
import { type EngineError, isEngineError } from '../engines/port';
import type { PromptMaterial, Writer } from '../engines/writer';

export const DISCOVERY_SOURCES = ['website_analysis', 'social', 'search_console', 'keyword_gaps', 'brand_guidelines'] as const;
export type DiscoverySource = (typeof DISCOVERY_SOURCES)[number];

/** Sources that need an outside connection aivis does not have: listed with the reason, never faked. */
export const UNAVAILABLE_REASONS: Partial<Record<DiscoverySource, string>> = {
  social: 'no social listening connection is configured: aivis has no social data to draw on',
  search_console: 'no Google Search Console connection is configured: aivis has no search query data to draw on',
};

export type DiscoveredPrompt = EventData<'PromptDiscoveryCompleted'>['prompts'][number];

/** What the sources aivis serves read from the website's own data. */
export interface DiscoveryData {
  brand: string;
  country: string;
  topics: readonly string[];
  /** the website's own pages known from answers' citations (URLs) */
  pages: readonly string[];
  /** prompts whose answers name competitors and not the brand, with those competitors (most named first) */
  gaps: readonly { prompt: string; topic: string | null; competitors: readonly string[] }[];
  custom_instructions: string | null;
  /** the website's prompts now (suggestions never repeat one) */
  existing: readonly string[];
}

const clean = (s: string) => s.replace(/\s+/g, ' ').trim();

/** A page URL's subject: its last meaningful path segment as words ("/guides/running-shoes-for-flat-feet" → "running shoes for flat feet"). */
export function pageSubject(url: string): string | null {
  let path: string;
  try {
    path = new URL(/^[a-z]+:\/\//i.test(url) ? url : `https://${url}`).pathname;
  } catch {
    return null;
  }
  const segs = path
    .split('/')
    .map((p) => decodeURIComponent(p).replace(/\.(html?|php|aspx?)$/i, ''))
    .filter((p) => p && !/^\d+$/.test(p) && !/^(index|en|en-us|blog|posts?|products?|p|c|category|pages?)$/i.test(p));
  const last = segs[segs.length - 1];
  if (!last) return null;
  const words = last
    .replace(/[-_+]+/g, ' ')
    .replace(/\s+/g, ' ')
    .trim()
    .toLowerCase();
  return words.split(' ').length >= 2 ? words : null;
}

/** Key phrases of brand guidelines: each sentence or bullet of the instructions, trimmed of filler. */
export function guidelinePhrases(instructions: string): string[] {
  return instructions
    .split(/[\n.;!?•]+/)
    .map((s) =>
      clean(
        s
          .replace(/^[-*\d.)\s]+/, '')
          .replace(/^(we|our brand|the brand|always|please|focus on|emphasi[sz]e|highlight|mention|talk about)\s+/i, '')
          .replace(/^(are|is|offer|offers|sell|sells|make|makes|provide|provides)\s+/i, ''),
      ),
    )
    .filter((s) => s.split(' ').length >= 2 && s.length <= 120)
    .map((s) => s.toLowerCase());
}

/** A prompt's text compared for sameness: case, accents, punctuation and spacing aside. */
export const normalizedPrompt = (text: string) =>
  text
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();

/** The served sources' material for the writer, each source with something to draw on (none: no lines). */
export function discoveryMaterial(sources: readonly DiscoverySource[], data: DiscoveryData): PromptMaterial[] {
  const out: PromptMaterial[] = [];
  if (sources.includes('website_analysis') && (data.pages.length || data.topics.length)) {
    const pages = data.pages.slice(0, 100).map((u) => {
      const subject = pageSubject(u);
      return subject ? `Page: ${u} (about ${subject})` : `Page: ${u}`;
    });
    out.push({ source: 'website_analysis', lines: [...pages, ...data.topics.map((t) => `Topic: ${t}`)] });
  }
  if (sources.includes('keyword_gaps') && data.gaps.length) {
    const lines = data.gaps
      .slice(0, 50)
      .map((g) =>
        [g.prompt, `competitors named instead of the brand: ${g.competitors.slice(0, 5).join(', ')}`, ...(g.topic ? [`topic: ${g.topic}`] : [])].join(
          ' | ',
        ),
      );
    out.push({ source: 'keyword_gaps', lines });
  }
  if (sources.includes('brand_guidelines') && data.custom_instructions) {
    out.push({ source: 'brand_guidelines', lines: data.custom_instructions.split('\n').filter((l) => l.trim()) });
  }
  return out;
}

/** Candidates of a writer's answer, read defensively: a JSON array (fenced, wrapped in prose or in an object) of objects. */
export function readProposals(answer: string): { text: unknown; source: unknown; topic: unknown }[] {
  const tries = [answer.trim(), answer.slice(answer.indexOf('['), answer.lastIndexOf(']') + 1)];
  for (const t of tries) {
    let v: unknown;
    try {
      v = JSON.parse(t);
    } catch {
      continue;
    }
    if (v && typeof v === 'object' && !Array.isArray(v)) v = Object.values(v).find(Array.isArray);
    if (Array.isArray(v))
      return v
        .filter((x): x is Record<string, unknown> => !!x && typeof x === 'object')
        .map((x) => ({ text: x.text ?? x.prompt, source: x.source, topic: x.topic }));
  }
  return [];
}

/** Writer calls a run makes at most to fill its band. */
export const DISCOVERY_WRITER_CALLS = 4;

export interface Proposed {
  prompts: DiscoveredPrompt[];
  /** credits of each writer call made */
  calls: number[];
  /** the writer refused for good: the run fails, the calls made before it are still charged */
  refused?: EngineError;
}

/**
 * Prompts the writer proposes from the sources' material, at most `max`: asked for the rest again while fewer than
 * `min` valid ones came back, at most DISCOVERY_WRITER_CALLS times. A candidate is kept when its text is a valid
 * prompt, its source one of the material's, and it is not, once normalized, the website's or an earlier one; its topic
 * is the website's topic of that name, else the writer's new name, else the website's topic its text names.
 */
export async function proposePrompts(
  writer: Writer,
  material: readonly PromptMaterial[],
  data: DiscoveryData,
  band: { min: number; max: number; locale: string },
): Promise<Proposed> {
  const prompts: DiscoveredPrompt[] = [];
  const calls: number[] = [];
  if (!material.length) return { prompts, calls };
  const seen = new Set(data.existing.map(normalizedPrompt));
  const served = new Set(material.map((m) => m.source));
  const topicNamed = (name: string) => data.topics.find((t) => t.toLowerCase() === name.toLowerCase());
  const topicIn = (text: string) => data.topics.find((t) => normalizedPrompt(text).includes(normalizedPrompt(t)));
  while (prompts.length < band.min && calls.length < DISCOVERY_WRITER_CALLS) {
    let w: Awaited<ReturnType<Writer['write']>>;
    try {
      w = await writer.write({
        task: 'prompts',
        count: band.max - prompts.length,
        brand: data.brand,
        country: data.country,
        locale: band.locale,
        topics: data.topics,
        material,
        avoid: [...prompts.map((p) => p.text), ...data.existing.slice(0, 300)],
      });
    } catch (err) {
      if (isEngineError(err) && !err.retryable) return { prompts, calls, refused: err };
      throw err;
    }
    calls.push(w.credits);
    for (const c of readProposals(w.text)) {
      if (prompts.length >= band.max) break;
      const text = typeof c.text === 'string' ? clean(c.text) : '';
      const key = normalizedPrompt(text);
      if (!key || !PromptText.safeParse(text).success || seen.has(key)) continue;
      if (typeof c.source !== 'string' || !served.has(c.source)) continue;
      const named = typeof c.topic === 'string' ? clean(c.topic) : '';
      const topic = (named && (topicNamed(named) ?? (Name.safeParse(named).success ? named : undefined))) || topicIn(text);
      if (!topic) continue;
      seen.add(key);
      prompts.push({ text, topic, source: c.source });
    }
  }
  return { prompts, calls };
}
