/**
 * The simulated engine as a writer (embedded mode, tests): reads the writer's prompts (src/engines/writer.ts) and
 * writes a deterministic brief, article, optimized page or revision from them alone. A revision whose instruction asks
 * to shorten keeps the first half of the document; any other keeps it whole and works the instruction in.
 */
import { guidelinePhrases } from '../analysis/discovery';
import { promptBlock, WRITER_PROMPT_HEAD } from './writer';
import type { AnswerRequest, AnswerResult } from './port';
import { hash32, Sfc32 } from './simulated';
import { cutText } from '../domain/text';

export const isWriterPrompt = (prompt: unknown): prompt is string => typeof prompt === 'string' && prompt.startsWith(WRITER_PROMPT_HEAD);

const field = (prompt: string, name: string): string | null => {
  const m = new RegExp(`^${name}: (.*)$`, 'm').exec(prompt);
  return m ? m[1].trim() : null;
};

const SECTION_POOL = [
  'What it is and who it is for',
  'How it works',
  'What to look for',
  'Costs and pricing',
  'Common mistakes to avoid',
  'How the options compare',
  'Getting started step by step',
  'Frequently asked questions',
  'What experts recommend',
  'Results you can expect',
];

const SENTENCES = [
  (s: string, b: string) =>
    `When people look into ${s}, the first question is usually what difference it makes in practice, and ${b} answers it with concrete examples.`,
  (s: string) => `A clear definition of ${s} helps readers compare the options on equal terms.`,
  (_s: string, b: string) => `${b} recommends starting with the requirements that matter most and checking each option against them.`,
  (s: string) => `Independent reviews and real customer experiences are the most reliable signal when judging ${s}.`,
  (s: string) => `Pricing for ${s} varies widely, so it pays to look at the total cost over a year rather than the headline price.`,
  (_s: string) => `The most common mistake is choosing on features alone, without checking support, reliability and fit.`,
  (s: string, b: string) => `In our experience at ${b}, a short trial answers more questions about ${s} than any comparison table.`,
  (s: string) => `Each option has trade-offs; the right one for ${s} depends on scale, budget and the time you can invest.`,
  (s: string) => `Documented results, such as time saved or errors avoided, make the case for ${s} far better than claims.`,
  (s: string) => `Keeping the setup simple at first makes it easier to measure what ${s} actually changes.`,
];

function rng(prompt: string): Sfc32 {
  const h = hash32(prompt, 0x77a1);
  return new Sfc32(h, hash32(prompt, 0x1b2c), hash32(prompt, 0x3d4e), h ^ 0x9e3779b9);
}

function paragraph(r: Sfc32, subject: string, brand: string, n: number): string {
  const out: string[] = [];
  for (let i = 0; i < n; i++) out.push(SENTENCES[Math.floor(r.next() * SENTENCES.length)](subject, brand));
  return out.join(' ');
}

function sectionsOf(brief: string): string[] {
  const numbered = brief
    .split('\n')
    .map((l) => /^\s*\d+\.\s+(.+)$/.exec(l)?.[1]?.trim())
    .filter((x): x is string => !!x);
  return numbered.length ? numbered : SECTION_POOL.slice(0, 5);
}

function brief(prompt: string): string {
  const r = rng(prompt);
  const title = field(prompt, 'Title') ?? 'Untitled';
  const topic = field(prompt, 'Topic');
  const brand = field(prompt, 'Brand');
  const questions = (promptBlock(prompt, 'QUESTIONS') ?? '').split('\n').filter(Boolean);
  const start = Math.floor(r.next() * SECTION_POOL.length);
  const count = 4 + Math.floor(r.next() * 3);
  const sections = Array.from({ length: count }, (_, i) => SECTION_POOL[(start + i) % SECTION_POOL.length]);
  return [
    `# Brief: ${title}`,
    `**Audience:** people researching ${topic ?? title.toLowerCase()} who compare options before they decide.`,
    `**Goal:** be the page AI assistants cite when they answer questions about ${topic ?? title.toLowerCase()}${brand ? `, naming ${brand.replace(/ \(.*\)$/, '')}` : ''}.`,
    '## Outline',
    sections.map((s, i) => `${i + 1}. ${s}`).join('\n'),
    '## Questions to answer',
    (questions.length ? questions : [`What should I know about ${title.toLowerCase()}?`]).map((q) => `- ${q}`).join('\n'),
  ].join('\n\n');
}

function article(prompt: string): string {
  const r = rng(prompt);
  const title = field(prompt, 'Title') ?? 'Untitled';
  const subject = (field(prompt, 'Topic') ?? title).toLowerCase();
  const brand = (field(prompt, 'Brand') ?? 'our team').replace(/ \(.*\)$/, '');
  const sections = sectionsOf(promptBlock(prompt, 'BRIEF') ?? '');
  const parts = [`${paragraph(r, subject, brand, 1)}`, `# ${title}`, paragraph(r, subject, brand, 4)];
  for (const s of sections) parts.push(`## ${s}`, paragraph(r, subject, brand, 4), paragraph(r, subject, brand, 3));
  // grounded: the brand's approved facts it was given, as they are (src/engines/grounding.ts)
  const facts = promptBlock(prompt, 'FACTS');
  if (facts) parts.push('## Key facts', facts);
  parts.push('## Summary', paragraph(r, subject, brand, 3));
  return `Meta description: ${cutText(parts[0], 150)}\n\n${parts.slice(1).join('\n\n')}`;
}

function optimize(prompt: string): string {
  const r = rng(prompt);
  const title = field(prompt, 'Title') ?? 'Untitled';
  const subject = (field(prompt, 'Topic') ?? title).toLowerCase();
  const brand = (field(prompt, 'Brand') ?? 'our team').replace(/ \(.*\)$/, '');
  const page = (promptBlock(prompt, 'PAGE') ?? '').trim();
  const questions = (promptBlock(prompt, 'QUESTIONS') ?? '').split('\n').filter(Boolean);
  const parts = [
    `# ${title}`,
    '## Key takeaways',
    [paragraph(r, subject, brand, 1), paragraph(r, subject, brand, 1), paragraph(r, subject, brand, 1)].map((s) => `- ${s}`).join('\n'),
    page || paragraph(r, subject, brand, 4),
    '## Frequently asked questions',
    ...(questions.length ? questions : [`What is ${subject}?`]).flatMap((q) => [`### ${q}`, paragraph(r, subject, brand, 2)]),
  ];
  return `Meta description: ${cutText(paragraph(r, subject, brand, 1), 150)}\n\n${parts.join('\n\n')}`;
}

const SHORTEN = /\b(shorten\w*|shorter|condens\w*|trim\w*|cut|cuts|cutting|summari[sz]\w*|tighten\w*|brief\w*)\b/i;

function revise(prompt: string): string {
  const draft = promptBlock(prompt, 'DOCUMENT') ?? '';
  const instruction = (promptBlock(prompt, 'INSTRUCTION') ?? '').trim();
  const paragraphs = draft.split(/\n{2,}/);
  if (SHORTEN.test(instruction)) return paragraphs.slice(0, Math.max(1, Math.ceil(paragraphs.length / 2))).join('\n\n');
  const note = `This version was revised to ${instruction.replace(/[.\s]+$/, '').replace(/^./, (c) => c.toLowerCase())}.`;
  const at = paragraphs[0]?.startsWith('#') ? 1 : 0;
  return [...paragraphs.slice(0, at), note, ...paragraphs.slice(at)].join('\n\n');
}

/** A question about a subject, asked in a country, of a brand. */
type Frame = (subject: string, country: string, brand: string) => string;

const QUESTIONS: Frame[] = [
  (s: string) => `What are the best ${s}?`,
  (s: string) => `How do I choose ${s}?`,
  (s: string, c: string) => `Which brands offer ${s} in ${c}?`,
  (s: string) => `What should I look for in ${s}?`,
  (s: string, c: string) => `Who are the leading ${s} providers in ${c}?`,
  (s: string) => `Are ${s} worth the money?`,
  (s: string) => `How much do ${s} cost?`,
  (s: string) => `Which ${s} do experts recommend?`,
  (s: string) => `What mistakes do people make with ${s}?`,
  (s: string) => `Where can I buy ${s} online?`,
  (s: string) => `What are the most reliable ${s}?`,
  (s: string) => `How do the top ${s} compare?`,
];
const RIVALS = [
  (b: string, k: string) => `${b} vs ${k}: which is better?`,
  (_b: string, k: string) => `What are the best alternatives to ${k}?`,
  (b: string, k: string) => `Is ${k} better than ${b}?`,
  (b: string, k: string) => `Which is cheaper, ${b} or ${k}?`,
  (_b: string, k: string) => `Why do people choose ${k}?`,
  (b: string, k: string) => `Should I switch from ${k} to ${b}?`,
];
const GUIDED: Frame[] = [
  (p: string) => `Which brands are known for ${p}?`,
  (p: string, c: string) => `Where can I find ${p} in ${c}?`,
  (p: string, _c: string, b: string) => `Does ${b} offer ${p}?`,
];
const AUDIENCES = ['', ' for beginners', ' on a budget', ' for families', ' for professionals', ' this year'];
const withAudience = (q: string, a: string) => (a ? q.replace(/\?$/, `${a}?`) : q);
const cap = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

/**
 * Proposed prompts (task prompts): questions made of each source's material (page subjects and topics, gap prompts
 * and their competitors, the guidelines' phrases) in an order drawn from the prompt, round-robin across the sources,
 * `Count` of them as a JSON array in a fence. Like a model it may repeat a gap prompt as it is asked already.
 */
function proposals(prompt: string): string {
  const r = rng(prompt);
  const count = Number(field(prompt, 'Count') ?? 0);
  const brand = field(prompt, 'Brand') ?? 'the brand';
  const country = field(prompt, 'Country') ?? 'the United States';
  const topics = (promptBlock(prompt, 'TOPICS') ?? '').split('\n').filter(Boolean);
  const avoid = new Set((promptBlock(prompt, 'AVOID') ?? '').split('\n').map((l) => l.trim().toLowerCase()));
  const topicOf = (subject: string) => topics.find((t) => subject.includes(t.toLowerCase())) ?? cap(subject);
  const perSource = (field(prompt, 'Sources') ?? '')
    .split(', ')
    .filter(Boolean)
    .map((source) => {
      const lines = (promptBlock(prompt, source) ?? '').split('\n').filter(Boolean);
      const out: { text: string; source: string; topic: string }[] = [];
      const ask = (subject: string, topic: string, frames: readonly Frame[]) => {
        for (const f of frames) for (const a of AUDIENCES) out.push({ text: withAudience(f(subject, country, brand), a), source, topic });
      };
      for (const line of lines) {
        const about = /^Page: \S+ \(about (.+)\)$/.exec(line)?.[1];
        if (about) ask(about, topicOf(about), QUESTIONS);
        const topic = /^Topic: (.+)$/.exec(line)?.[1];
        if (topic) ask(topic.toLowerCase(), topic, QUESTIONS);
        const [gap, named, gapTopic] = line.split(' | ');
        const rivals = /^competitors named instead of the brand: (.+)$/.exec(named ?? '')?.[1]?.split(', ') ?? [];
        if (rivals.length) {
          const t = /^topic: (.+)$/.exec(gapTopic ?? '')?.[1] ?? topicOf(gap.toLowerCase());
          out.unshift({ text: `${cap(gap.replace(/[?.!]+$/, ''))}?`, source, topic: t });
          for (const k of rivals)
            for (const f of RIVALS) for (const a of AUDIENCES) out.push({ text: withAudience(f(brand, k), a), source, topic: t });
        }
      }
      if (source === 'brand_guidelines') for (const p of guidelinePhrases(lines.join('\n'))) ask(p, topicOf(p), [...GUIDED, ...QUESTIONS]);
      const [first, ...rest] = out;
      for (let i = rest.length - 1; i > 0; i--) {
        const j = Math.floor(r.next() * (i + 1));
        [rest[i], rest[j]] = [rest[j], rest[i]];
      }
      return first ? [first, ...rest] : [];
    });
  const picked: { text: string; source: string; topic: string }[] = [];
  const taken = new Set<string>();
  const cursors = perSource.map(() => 0);
  while (picked.length < count && perSource.some((l, i) => cursors[i] < l.length)) {
    for (let i = 0; i < perSource.length && picked.length < count; i++) {
      while (cursors[i] < perSource[i].length) {
        const p = perSource[i][cursors[i]++];
        const key = p.text.toLowerCase();
        if (taken.has(key) || avoid.has(key)) continue;
        taken.add(key);
        picked.push(p);
        break;
      }
    }
  }
  return `\`\`\`json\n${JSON.stringify(picked, null, 1)}\n\`\`\``;
}

/** The simulated engine's answer to a writer prompt. */
export function simulateWriting(req: AnswerRequest): AnswerResult {
  const prompt = req.prompt;
  const task = prompt.slice(WRITER_PROMPT_HEAD.length).split('\n', 1)[0].trim();
  const text =
    task === 'prompts'
      ? proposals(prompt)
      : task === 'brief'
        ? brief(prompt)
        : task === 'article'
          ? article(prompt)
          : task === 'optimize'
            ? optimize(prompt)
            : revise(prompt);
  return {
    text,
    citations: [],
    products: [],
    usage: { credits: 1, input_tokens: Math.ceil(prompt.length / 4), output_tokens: Math.ceil(text.length / 4) },
    provider_model: `simulated/${req.model}`,
    latency_ms: 800 + (hash32(prompt) % 4000),
  };
}
