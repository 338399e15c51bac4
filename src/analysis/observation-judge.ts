/** The LLM-judge variant of the observation extractor: one prompt, a JSON reply checked before anything is kept (rules: docs/analysis.md#the-llm-judge-of-observations) */
import type { AnswerEngine, AnswerUsage } from '../engines/port';
import { type AttributeInput, type ExtractedObservation, normalizeScore } from './observations';
import { cutText } from '../domain/text';

export interface JudgeEntity {
  id: string;
  name: string;
  is_self: boolean;
}

export interface JudgeInput {
  /** the answer to judge */
  text: string;
  entities: readonly JudgeEntity[];
  attributes: readonly AttributeInput[];
  /** the run's day, YYYY-MM-DD, passed to the engine */
  day: string;
}

export interface LlmJudgeOptions {
  /** Reports a reply that could not be used, or items that were dropped (a pino logger's warn fits behind it). */
  onWarning?: (message: string, detail?: Record<string, unknown>) => void;
  /** Receives the usage of each judge call (credits, tokens) as the engine reports it. */
  onUsage?: (usage: AnswerUsage, providerModel: string) => void;
}

export interface LlmJudge {
  extract(input: JudgeInput): Promise<ExtractedObservation[]>;
}

const SPAN_MAX = 500;

/** The prompt sent to the judge model (exported for tests and for whoever wants to see what is asked). */
export function buildJudgePrompt(input: Pick<JudgeInput, 'text' | 'entities' | 'attributes'>): string {
  const entities = input.entities.map((e) => `- ${e.name}${e.is_self ? ' (the brand)' : ' (a competitor)'}`).join('\n');
  const attributes = input.attributes
    .map((a) => `- ${a.name}${typeof a.description === 'string' && a.description.trim() !== '' ? `: ${a.description.trim()}` : ''}`)
    .join('\n');
  return [
    'You analyse an answer written by an AI assistant. Find every statement it makes about one of the entities below regarding one of the attributes below, praising or criticizing it.',
    '',
    'Entities:',
    entities,
    '',
    'Attributes:',
    attributes,
    '',
    'Return ONLY a JSON array (no prose, no explanation), one object per statement, each:',
    '{"entity": "<entity name exactly as listed>", "attribute": "<attribute name exactly as listed>", "positive": <true if it praises, false if it criticizes>, "score": <number from -1 to 1: its sign matches positive, its magnitude from 0.1 (faint) to 1.0 (very strong) reflects how strongly it is worded>, "text_span": "<the exact excerpt of the answer that says it, copied verbatim>"}',
    'Leave out neutral mentions and statements about anything not listed. When there are none, return [].',
    '',
    'Answer:',
    '"""',
    input.text,
    '"""',
  ].join('\n');
}

/** The JSON array in a reply: a fenced block first, else the outermost [ … ]; undefined when there is none. */
export function parseJudgeReply(reply: string): unknown[] | undefined {
  if (typeof reply !== 'string') return undefined;
  const candidates: string[] = [];
  const fence = /```[ \t]*(?:json|JSON)?[ \t]*\r?\n?([\s\S]*?)```/.exec(reply);
  if (fence) candidates.push(fence[1]);
  const open = reply.indexOf('[');
  const close = reply.lastIndexOf(']');
  if (open !== -1 && close > open) candidates.push(reply.slice(open, close + 1));
  const brace = reply.indexOf('{');
  const braceEnd = reply.lastIndexOf('}');
  if (brace !== -1 && braceEnd > brace) candidates.push(reply.slice(brace, braceEnd + 1));
  for (const c of candidates) {
    let v: unknown;
    try {
      v = JSON.parse(c.trim());
    } catch {
      continue;
    }
    if (Array.isArray(v)) return v;
    if (v !== null && typeof v === 'object' && Array.isArray((v as { observations?: unknown }).observations))
      return (v as { observations: unknown[] }).observations;
  }
  return undefined;
}

const key = (s: string): string => s.normalize('NFC').trim().replace(/\s+/g, ' ').toLowerCase();

/** Whitespace runs to one space, typographic quotes and apostrophes to ASCII: the comparison form of a span. */
function loose(c: string): string {
  if (c === '\u2018' || c === '\u2019' || c === '\u02bc') return "'";
  if (c === '\u201c' || c === '\u201d') return '"';
  return c;
}

/** Where the span occurs in the text, as [start, end) of the text; null when it does not. */
export function locateSpan(text: string, span: string): [number, number] | null {
  const at = text.indexOf(span);
  if (at !== -1) return [at, at + span.length];
  // loose comparison: build the text's loose form with a map back to its indices
  let t = '';
  const map: number[] = [];
  let space = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (/\s/.test(c)) {
      if (!space) {
        t += ' ';
        map.push(i);
      }
      space = true;
      continue;
    }
    space = false;
    t += loose(c);
    map.push(i);
  }
  const s = [...span.replace(/\s+/g, ' ')].map(loose).join('');
  if (s === '' || s === ' ') return null;
  const j = t.indexOf(s);
  if (j === -1) return null;
  return [map[j], map[j + s.length - 1] + 1];
}

export function createLlmJudge(engine: AnswerEngine, model: string, options: LlmJudgeOptions = {}): LlmJudge {
  const warn = (message: string, detail?: Record<string, unknown>) => {
    try {
      options.onWarning?.(message, detail);
    } catch {
      // a failing logger must not fail the extraction
    }
  };
  return {
    async extract(input) {
      const text = typeof input.text === 'string' ? input.text : '';
      const entities = (input.entities ?? []).filter((e) => e && typeof e.name === 'string' && key(e.name) !== '');
      const attributes = (input.attributes ?? []).filter((a) => a && typeof a.name === 'string' && key(a.name) !== '');
      if (text.trim() === '' || entities.length === 0 || attributes.length === 0) return [];

      const answer = await engine.ask({ model, prompt: buildJudgePrompt({ text, entities, attributes }), day: input.day });
      try {
        options.onUsage?.(answer.usage, answer.provider_model);
      } catch {
        // reporting must not fail the extraction
      }
      const items = parseJudgeReply(answer.text);
      if (items === undefined) {
        warn('the reply holds no JSON array of observations; nothing kept', { model, reply: cutText(String(answer.text ?? ''), 200) });
        return [];
      }

      const entityIds = new Map<string, string>();
      for (const e of entities) if (!entityIds.has(key(e.name))) entityIds.set(key(e.name), e.id);
      const attributeIds = new Map<string, string>();
      for (const a of attributes) if (!attributeIds.has(key(a.name))) attributeIds.set(key(a.name), a.id);

      const dropped = { malformed: 0, unknown_entity: 0, unknown_attribute: 0, span_not_in_text: 0 };
      const kept: Array<ExtractedObservation & { at: number }> = [];
      const seen = new Set<string>();
      for (const item of items) {
        if (item === null || typeof item !== 'object' || Array.isArray(item)) {
          dropped.malformed++;
          continue;
        }
        const o = item as Record<string, unknown>;
        const entity_id = typeof o.entity === 'string' ? entityIds.get(key(o.entity)) : undefined;
        if (entity_id === undefined) {
          dropped.unknown_entity++;
          continue;
        }
        const attribute_id = typeof o.attribute === 'string' ? attributeIds.get(key(o.attribute)) : undefined;
        if (attribute_id === undefined) {
          dropped.unknown_attribute++;
          continue;
        }
        let positive: boolean;
        if (typeof o.positive === 'boolean') positive = o.positive;
        else if (typeof o.score === 'number' && Number.isFinite(o.score) && o.score !== 0) positive = o.score > 0;
        else {
          dropped.malformed++;
          continue;
        }
        const span = typeof o.text_span === 'string' ? o.text_span.trim() : '';
        const where = span === '' ? null : locateSpan(text, span);
        if (where === null) {
          dropped.span_not_in_text++;
          continue;
        }
        let text_span = text.slice(where[0], where[1]).trim();
        if (text_span.length > SPAN_MAX) text_span = cutText(text_span, SPAN_MAX).trimEnd();
        const id = `${entity_id}\u0000${attribute_id}\u0000${text_span}`;
        if (seen.has(id)) continue;
        seen.add(id);
        kept.push({ entity_id, attribute_id, positive, score: normalizeScore(positive, o.score), text_span, at: where[0] });
      }
      const total = dropped.malformed + dropped.unknown_entity + dropped.unknown_attribute + dropped.span_not_in_text;
      if (total > 0) warn(`${total} of ${items.length} observation(s) dropped`, { model, ...dropped });
      kept.sort((a, b) => a.at - b.at);
      return kept.map(({ at: _at, ...o }) => o);
    },
  };
}
