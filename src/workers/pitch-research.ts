import { z } from 'zod';
import { hash32 } from '../engines/simulated';
import { cutText } from '../domain/text';

/**
 * The research of a pitch report: what the prospect's home page says about it (its name and description), and the
 * plan the answer engine writes (competitors and discovery prompts). Pure functions over text.
 */

export const PROMPT_COUNT = 20;
const NAME_MAX = 200;
const DESCRIPTION_MAX = 1000;

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ', '#39': "'" };

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what plainText removes
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/** HTML character references decoded, tags dropped, control characters and runs of space collapsed. */
export function plainText(s: string): string {
  return s
    .replace(/<[^>]*>/g, ' ')
    .replace(/&(#x[0-9a-f]+|#\d+|[a-z0-9]+);/gi, (m, ref: string) => {
      const r = ref.toLowerCase();
      if (r.startsWith('#x') || (r.startsWith('#') && r !== '#39')) {
        const code = r.startsWith('#x') ? Number.parseInt(r.slice(2), 16) : Number.parseInt(r.slice(1), 10);
        return code > 31 && code < 0x110000 && !(code >= 0xd800 && code < 0xe000) ? String.fromCodePoint(code) : ' ';
      }
      return ENTITIES[r] ?? m;
    })
    .replace(UNSAFE, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

const cut = (s: string, max: number) => (s.length > max ? `${cutText(s, max - 1)}…` : s);

function metaContent(html: string, key: string): string | null {
  for (const m of html.matchAll(/<meta\b[^>]*>/gi)) {
    const tag = m[0];
    const name = /\b(?:name|property)\s*=\s*["']([^"']*)["']/i.exec(tag)?.[1];
    if (name?.toLowerCase() !== key) continue;
    const content = /\bcontent\s*=\s*"([^"]*)"/i.exec(tag)?.[1] ?? /\bcontent\s*=\s*'([^']*)'/i.exec(tag)?.[1];
    if (content && plainText(content)) return plainText(content);
  }
  return null;
}

/** The bare domain as a name when the page names nothing: `acme-tools.com` → `Acme Tools`. */
export function nameFromDomain(domain: string): string {
  const label = domain.split('.')[0] ?? domain;
  return (
    label
      .split(/[-_]+/)
      .filter(Boolean)
      .map((w) => w[0].toUpperCase() + w.slice(1))
      .join(' ') || domain
  );
}

/** The company's name and description from its home page: og:site_name, else the title's first part, else the domain. */
export function readHomePage(html: string, domain: string): { company_name: string; company_description: string } {
  const title = /<title\b[^>]*>([\s\S]*?)<\/title>/i.exec(html)?.[1];
  const titleName = title
    ? plainText(title)
        .split(/\s+[|–—:·-]\s+/)[0]
        ?.trim()
    : '';
  const h1 = /<h1\b[^>]*>([\s\S]*?)<\/h1>/i.exec(html)?.[1];
  const name = metaContent(html, 'og:site_name') || titleName || (h1 ? plainText(h1) : '') || nameFromDomain(domain);
  const firstParagraph = /<p\b[^>]*>([\s\S]*?)<\/p>/i.exec(html)?.[1];
  const description = metaContent(html, 'description') || metaContent(html, 'og:description') || (firstParagraph ? plainText(firstParagraph) : '');
  return { company_name: cut(name, NAME_MAX), company_description: cut(description, DESCRIPTION_MAX) };
}

export interface Plan {
  competitors: { name: string; url: string }[];
  prompts: string[];
}

const SIM_COMPETITORS = [
  'Northwind',
  'Contoso',
  'Fabrikam',
  'Globex',
  'Initech',
  'Tailspin',
  'Wingtip',
  'Litware',
  'Adventure Works',
  'Proseware',
  'Lucerne',
  'Margie',
];

const SIM_PROMPTS: ((c: { name: string; rival: string; topic: string }) => string)[] = [
  ({ topic }) => `What are the best ${topic} right now?`,
  ({ topic }) => `Which ${topic} do experts recommend for a small business?`,
  ({ rival }) => `What are good alternatives to ${rival}?`,
  ({ topic }) => `Which ${topic} offer the best value for money?`,
  ({ topic }) => `What ${topic} have the best customer support?`,
  ({ topic }) => `Which ${topic} are easiest to use for beginners?`,
  ({ name, rival }) => `How does ${name} compare with ${rival}?`,
  ({ topic }) => `What are the most reliable ${topic}?`,
  ({ topic }) => `Which ${topic} integrate well with other tools?`,
  ({ topic }) => `What do reviewers say are the top ${topic} this year?`,
  ({ topic }) => `Which ${topic} are the most secure?`,
  ({ rival }) => `Is ${rival} worth it, or is there something better?`,
  ({ topic }) => `Recommend ${topic} for a growing team.`,
  ({ topic }) => `What ${topic} have the most features for the price?`,
  ({ topic }) => `Which ${topic} perform best under heavy use?`,
  ({ name }) => `Is ${name} a good choice?`,
  ({ topic }) => `What are the pros and cons of the leading ${topic}?`,
  ({ topic }) => `Which ${topic} do users on forums recommend?`,
  ({ topic }) => `What should I look for when choosing ${topic}?`,
  ({ topic }) => `Which ${topic} are best for enterprises?`,
  ({ name, rival }) => `${name} or ${rival}: which is better?`,
  ({ topic }) => `What are the cheapest ${topic} that are still good?`,
];

/** What the prospect offers, in a few words, for the prompts: a noun phrase from its description, else `products like <name>`. */
export function topicOf(name: string, description: string): string {
  const m =
    /\b(?:leading|modern|simple|best|trusted|smart|powerful|all-in-one|online|open-source)?\s*([a-z][a-z-]+(?:\s[a-z][a-z-]+)?\s(?:software|tools?|platforms?|apps?|services?|products?|solutions?))\b/i.exec(
      description,
    );
  if (m) {
    const phrase = m[1].toLowerCase();
    if (/software$/.test(phrase)) return `${phrase} tools`;
    return /s$/.test(phrase) ? phrase : `${phrase}s`;
  }
  return `products like ${name}`;
}

/**
 * The simulated engine's plan (ENGINE_MODE=simulated): deterministic from the domain, five competitors from a fixed
 * pool and twenty discovery prompts, as a live engine's JSON would give them.
 */
export function simulatedPlan(domain: string, name: string, description: string): Plan {
  const h = hash32(domain, 0x9e37);
  const picked: string[] = [];
  for (let i = 0; picked.length < 5 && i < SIM_COMPETITORS.length * 2; i++) {
    const c = SIM_COMPETITORS[(h + i * 7) % SIM_COMPETITORS.length];
    if (!picked.includes(c) && c.toLowerCase() !== name.toLowerCase()) picked.push(c);
  }
  const competitors = picked.map((c) => ({ name: c, url: `https://www.${c.toLowerCase().replace(/\s+/g, '')}.com` }));
  const topic = topicOf(name, description);
  const prompts: string[] = [];
  for (let i = 0; prompts.length < PROMPT_COUNT; i++) {
    const p = SIM_PROMPTS[(h + i) % SIM_PROMPTS.length]({ name, rival: competitors[i % competitors.length].name, topic });
    if (!prompts.includes(p)) prompts.push(p);
  }
  return { competitors, prompts };
}

/** What a live engine is asked for the plan. */
export function planPrompt(p: { name: string; domain: string; description: string; country: string; language: string }): string {
  return [
    `You research the market of a company for a sales report. Company: ${p.name} (${p.domain}). ${p.description}`,
    `Market: ${p.country}. Write in ${p.language}.`,
    `Answer with JSON only, no prose: {"competitors": [{"name": "...", "url": "https://..."}], "prompts": ["..."]}`,
    `with its 3 to 8 main competitors (their official websites) and exactly ${PROMPT_COUNT} questions a buyer would ask an AI`,
    `assistant while looking for what ${p.name} sells, without naming ${p.name}.`,
  ].join('\n');
}

const PlanReply = z.object({
  competitors: z
    .array(z.object({ name: z.string().trim().min(1).max(200), url: z.string().trim().min(1).max(2048) }))
    .min(1)
    .max(10),
  prompts: z.array(z.string().trim().min(3).max(500)).min(PROMPT_COUNT),
});

/** A live engine's plan from its reply (JSON, possibly fenced or wrapped in prose); null when it holds none. */
export function parsePlanReply(reply: string): Plan | null {
  const start = reply.indexOf('{');
  const end = reply.lastIndexOf('}');
  if (start < 0 || end <= start) return null;
  let raw: unknown;
  try {
    raw = JSON.parse(reply.slice(start, end + 1));
  } catch {
    return null;
  }
  const r = PlanReply.safeParse(raw);
  if (!r.success) return null;
  const competitors = r.data.competitors
    .map((c) => ({ name: plainText(c.name), url: /^https?:\/\//i.test(c.url) ? c.url : `https://${c.url}` }))
    .filter((c) => c.name !== '');
  const prompts = [...new Set(r.data.prompts.map(plainText).filter((p) => p !== ''))].slice(0, PROMPT_COUNT);
  return competitors.length && prompts.length === PROMPT_COUNT ? { competitors, prompts } : null;
}
