import type { EventData } from '../domain/events';

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

const cap = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);
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

/**
 * Suggested prompts from the sources aivis can serve, from the website's own data only: its pages (website_analysis),
 * the prompts whose answers name competitors instead of the brand (keyword_gaps), the custom instructions
 * (brand_guidelines). Round-robin across the sources so each contributes, no repeats of one another or of the
 * website's prompts, at most `max`. Fewer than `min` when the data holds no more: never padded with made-up ones.
 */
export function discoverPrompts(sources: readonly DiscoverySource[], data: DiscoveryData, max: number): DiscoveredPrompt[] {
  const perSource: DiscoveredPrompt[][] = [];
  const topicOf = (subject: string) => data.topics.find((t) => subject.toLowerCase().includes(t.toLowerCase())) ?? null;
  if (sources.includes('website_analysis')) {
    const list: DiscoveredPrompt[] = [];
    const subjects = [...new Set(data.pages.map(pageSubject).filter((s): s is string => s !== null))];
    for (const subject of subjects) {
      const topic = topicOf(subject);
      list.push(
        { text: `What are the best ${subject}?`, topic, source: 'website_analysis' },
        { text: `How do I choose ${subject}?`, topic, source: 'website_analysis' },
        { text: `Which brands offer ${subject} in ${data.country}?`, topic, source: 'website_analysis' },
      );
    }
    for (const topic of data.topics) {
      list.push(
        { text: `What should I look for in ${topic.toLowerCase()}?`, topic, source: 'website_analysis' },
        { text: `Who are the leading ${topic.toLowerCase()} providers in ${data.country}?`, topic, source: 'website_analysis' },
      );
    }
    perSource.push(list);
  }
  if (sources.includes('keyword_gaps')) {
    const list: DiscoveredPrompt[] = [];
    for (const gap of data.gaps) {
      const core = gap.prompt.replace(/[?.!]+$/, '');
      for (const competitor of gap.competitors.slice(0, 3)) {
        list.push(
          { text: `${data.brand} vs ${competitor}: which is better?`, topic: gap.topic, source: 'keyword_gaps' },
          { text: `What are the best alternatives to ${competitor}?`, topic: gap.topic, source: 'keyword_gaps' },
          { text: `${cap(core)}: is ${data.brand} a good option compared with ${competitor}?`, topic: gap.topic, source: 'keyword_gaps' },
        );
      }
    }
    perSource.push(list);
  }
  if (sources.includes('brand_guidelines') && data.custom_instructions) {
    const list: DiscoveredPrompt[] = [];
    for (const phrase of guidelinePhrases(data.custom_instructions)) {
      const topic = topicOf(phrase);
      list.push(
        { text: `Which brands are known for ${phrase}?`, topic, source: 'brand_guidelines' },
        { text: `Where can I find ${phrase} in ${data.country}?`, topic, source: 'brand_guidelines' },
        { text: `Does ${data.brand} offer ${phrase}?`, topic, source: 'brand_guidelines' },
      );
    }
    perSource.push(list);
  }
  const seen = new Set(data.existing.map((t) => clean(t).toLowerCase()));
  const out: DiscoveredPrompt[] = [];
  const cursors = perSource.map(() => 0);
  while (out.length < max && perSource.some((l, i) => cursors[i] < l.length)) {
    for (let i = 0; i < perSource.length && out.length < max; i++) {
      while (cursors[i] < perSource[i].length) {
        const p = perSource[i][cursors[i]++];
        const key = clean(p.text).toLowerCase();
        if (seen.has(key) || p.text.length > 2000) continue;
        seen.add(key);
        out.push({ ...p, text: clean(p.text) });
        break;
      }
    }
  }
  return out;
}
