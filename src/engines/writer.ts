/**
 * The content writer: an answer engine of the catalogue (CONTENT_MODEL) asked to write a brief, an article, an
 * optimized version of a live page, or a revision. This module is the prompts and the reading of the answers; the
 * engine is whichever the registry gives the model (simulated in embedded mode and tests: see simulated-writer.ts,
 * which reads these same prompts).
 */
import type { ModelId } from '../domain/models';
import { groundingPart } from './grounding';
import type { AnswerEngine } from './port';
import { cutText } from '../domain/text';

export interface WriterSubject {
  title: string;
  /** generated, snipe, slice, optimize */
  type: string;
  topic_name: string | null;
  prompts: readonly string[];
  brand: { name: string; domain: string } | null;
  /** the knowledge base's approved facts to ground on (grounding.ts) */
  facts?: readonly string[];
}

/** One source's material to propose prompts from: its name and its lines (pages, topics, gap prompts, instructions). */
export interface PromptMaterial {
  source: string;
  lines: readonly string[];
}

/** Prompts to track, proposed from the sources' material (prompt discovery). */
export interface PromptsTask {
  task: 'prompts';
  count: number;
  brand: string;
  country: string;
  locale: string;
  topics: readonly string[];
  material: readonly PromptMaterial[];
  /** prompts the website has or the run holds already (never to be proposed again) */
  avoid: readonly string[];
}

export type WriterTask =
  | PromptsTask
  | ({ task: 'brief' } & WriterSubject)
  | ({ task: 'article'; brief: string } & WriterSubject)
  | ({ task: 'optimize'; url: string; page: string } & WriterSubject)
  | { task: 'revise'; draft: string; instruction: string; whole_document: boolean };

export interface Written {
  /** the document (Markdown) */
  text: string;
  /** articles and optimized pages: one sentence for search results */
  meta_description: string;
  credits: number;
  model: ModelId;
}

export interface Writer {
  readonly model: ModelId;
  write(task: WriterTask): Promise<Written>;
}

/** The first line of every writer prompt: what the simulated engine recognises a writing task by. */
export const WRITER_PROMPT_HEAD = 'aivis writer:';
const META_PREFIX = 'Meta description:';

export const WHOLE_DOCUMENT_DIRECTIVE =
  'Return the WHOLE revised document, from its first line to its last, with every section kept unless the instruction removes it. Never return only the changed part.';

/** Material inside a prompt, fenced so that the writer (and the simulated engine) can tell it from the instructions. */
const block = (name: string, body: string) => `<<<${name}\n${body}\n${name}>>>`;

/** The fenced material of a prompt by name (the simulated engine reads its prompts back with this). */
export function promptBlock(prompt: string, name: string): string | null {
  const start = prompt.indexOf(`<<<${name}\n`);
  if (start < 0) return null;
  const from = start + name.length + 4;
  const end = prompt.indexOf(`\n${name}>>>`, from);
  return end < 0 ? null : prompt.slice(from, end);
}

const TYPE_GOALS: Record<string, string> = {
  generated: 'a complete article that answers the questions below better than any page AI assistants cite today',
  snipe: 'an article that wins the citations AI assistants give competitors for the questions below: answer each one directly, early, with specifics',
  slice: 'a short, focused page that answers one narrow question completely, so an AI assistant can quote it',
  optimize:
    'an improved version of the live page below that AI assistants will cite: keep its facts and voice, make its answers direct and well structured',
};

function subjectLines(s: WriterSubject): string {
  const lines = [`Title: ${s.title}`, `Goal: ${TYPE_GOALS[s.type] ?? TYPE_GOALS.generated}.`];
  if (s.brand) lines.push(`Brand: ${s.brand.name} (${s.brand.domain})`);
  if (s.topic_name) lines.push(`Topic: ${s.topic_name}`);
  return [lines.join('\n'), ...groundingPart(s.facts)].join('\n\n');
}

/** A writing task's prompt: the head naming the task, then its parts, a blank line between each. */
const taskPrompt = (task: WriterTask['task'], ...parts: string[]) => [`${WRITER_PROMPT_HEAD} ${task}`, ...parts].join('\n\n');

/** How a written page is laid out: Markdown, its title first, and the meta description on the line before it. */
const PAGE_LAYOUT = `in Markdown, starting with its title as a level-1 heading. Before it, on the first line, write "${META_PREFIX}" followed by one sentence of at most 155 characters.`;

const questions = (s: WriterSubject) => block('QUESTIONS', s.prompts.join('\n'));

/** The prompt of one writing task. */
export function writerPrompt(t: WriterTask): string {
  switch (t.task) {
    case 'brief':
      return taskPrompt(
        t.task,
        'Write a content brief in Markdown: the audience, the goal, an outline of 4 to 8 sections as a numbered list, and the questions the article must answer.',
        subjectLines(t),
        questions(t),
      );
    case 'article':
      return taskPrompt(t.task, `Write the article the brief describes, ${PAGE_LAYOUT}`, subjectLines(t), questions(t), block('BRIEF', t.brief));
    case 'optimize':
      return taskPrompt(
        t.task,
        `Rewrite the live page below, ${PAGE_LAYOUT}`,
        subjectLines(t),
        `Live page: ${t.url}`,
        questions(t),
        block('PAGE', t.page),
      );
    case 'prompts':
      return taskPrompt(
        t.task,
        `Propose ${t.count} prompts that people in ${t.country} would ask an AI assistant (locale ${t.locale}) when they look for what the brand below offers. Draw each from one source's material below and name that source. Each is one line, differs from the others and from the prompts to avoid, and has a topic: one of the TOPICS when it fits, else a short new topic name. Reply with a JSON array only: [{"text": "...", "source": "...", "topic": "..."}].`,
        [`Count: ${t.count}`, `Brand: ${t.brand}`, `Country: ${t.country}`, `Sources: ${t.material.map((m) => m.source).join(', ')}`].join('\n'),
        block('TOPICS', t.topics.join('\n')),
        ...t.material.map((m) => block(m.source, m.lines.join('\n'))),
        block('AVOID', t.avoid.join('\n')),
      );
    case 'revise':
      return taskPrompt(
        t.task,
        'Revise the document below following the instruction. Reply with the revised document only, in Markdown.',
        ...(t.whole_document ? [WHOLE_DOCUMENT_DIRECTIVE] : []),
        block('INSTRUCTION', t.instruction),
        block('DOCUMENT', t.draft),
      );
  }
}

/** Removes a code fence the whole answer may be wrapped in. */
function unfenced(text: string): string {
  const m = /^\s*```(?:markdown|md)?\s*\n([\s\S]*?)\n```\s*$/i.exec(text);
  return (m ? m[1] : text).trim();
}

/** The first sentence of a document's prose, as a meta description (at most 155 characters). */
export function metaFrom(doc: string): string {
  const prose = doc
    .split('\n')
    .map((l) => l.trim())
    .find((l) => l && !l.startsWith('#') && !l.startsWith('-') && !l.startsWith('*') && !/^\d+\./.test(l));
  const sentence = (prose ?? doc).replace(/[*_`>]/g, '').split(/(?<=[.!?])\s/)[0] ?? '';
  return sentence.length > 155 ? `${cutText(sentence, 152).trimEnd()}...` : sentence;
}

/** An answer read as the task's document: the meta line taken off the top (or made from the first sentence). */
export function readWriterAnswer(t: WriterTask, answer: string): { text: string; meta_description: string } {
  let text = unfenced(answer);
  let meta = '';
  if (t.task === 'article' || t.task === 'optimize') {
    const first = text.split('\n', 1)[0] ?? '';
    if (first.toLowerCase().startsWith(META_PREFIX.toLowerCase())) {
      meta = first.slice(META_PREFIX.length).trim();
      text = text.slice(first.length).trim();
    }
    if (!meta) meta = metaFrom(text);
  }
  return { text, meta_description: cutText(meta, 300) };
}

/** A writer over an answer engine: `day` dates the request (the simulated engine's answers depend on it). */
export function createWriter(engine: AnswerEngine, model: ModelId, day: () => string = () => new Date().toISOString().slice(0, 10)): Writer {
  return {
    model,
    async write(t) {
      const r = await engine.ask({ model, prompt: writerPrompt(t), day: day() });
      const { text, meta_description } = readWriterAnswer(t, r.text);
      return { text, meta_description, credits: r.usage.credits, model };
    },
  };
}
