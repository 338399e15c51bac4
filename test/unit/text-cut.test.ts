import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createLlmJudge } from '../../src/analysis/observation-judge';
import { compileEntities } from '../../src/analysis/answer';
import { compileAttributes, extractObservations } from '../../src/analysis/observations';
import { bestSentence, parseDraft, parseHtmlPage, recommend } from '../../src/analysis/seo';
import { isWellFormed } from '../../src/domain/schemas';
import { cutText } from '../../src/domain/text';
import { excerpt } from '../../src/engines/parse';
import type { AnswerEngine } from '../../src/engines/port';
import { parseSerpApi } from '../../src/engines/serpapi';
import { simulateAnswer } from '../../src/engines/simulated';
import { simulateWriting } from '../../src/engines/simulated-writer';
import { metaFrom, readWriterAnswer, writerPrompt } from '../../src/engines/writer';
import { classifySendError } from '../../src/email/transport';
import { errorText } from '../../src/eventstore/dead-letters';
import { barChart } from '../../src/pages/charts';
import { MAX_PAGE_CHARS, pageText } from '../../src/workers/content';
import { readHomePage } from '../../src/workers/pitch-research';
import { decideOutcome, type Requested } from '../../commands/responses/record-outcome';

// Given: text made of what a cut on UTF-16 code units splits: emoji (surrogate pairs), skin tones, ZWJ families,
// flags, combining marks, astral letters; and runs of one piece long enough to cross every limit at any offset.
const PIECES = ['a', 'Z', 'shoes', ' ', '\n', '. ', '😀', '👍🏽', '👨‍👩‍👧‍👦', '🇫🇷', 'e\u0301', 'n\u0303\u0323', '𠀀', '\u200d', '\ufe0f', 'ß'];
const piece = fc.oneof(fc.constantFrom(...PIECES), fc.string({ unit: 'grapheme', maxLength: 3 }));
const text = fc
  .tuple(fc.array(piece, { maxLength: 8 }), piece, fc.integer({ min: 0, max: 1300 }), fc.array(piece, { maxLength: 8 }))
  .map(([before, run, n, after]) => before.join('') + run.repeat(n) + after.join(''));
/** one line of text without markup characters, for HTML and Markdown */
const line = text.map((t) => t.replace(/[<>&"'#*_`\-\s]+/g, ' ').trim() || 'x');
const RUNS = { numRuns: 150 };

const graphemes = new Intl.Segmenter(undefined, { granularity: 'grapheme' });
/** Every string inside a value (an object's keys and values, an array's items). */
const stringsOf = (v: unknown): string[] =>
  typeof v === 'string'
    ? [v]
    : Array.isArray(v)
      ? v.flatMap(stringsOf)
      : v && typeof v === 'object'
        ? Object.entries(v).flatMap(([k, x]) => [k, ...stringsOf(x)])
        : [];
const wellFormed = (v: unknown) => expect(stringsOf(v).filter((s) => !isWellFormed(s))).toEqual([]);
const squash = (s: string) => s.replace(/\s+/g, ' ').trim();

describe('cutting text', () => {
  it('given any text and limit, when cut, then the cut is a well-formed prefix within the limit that ends between two graphemes (or two code points when one grapheme is longer than the cut can see)', () => {
    fc.assert(
      fc.property(text, fc.integer({ min: 0, max: 1500 }), (t, max) => {
        const cut = cutText(t, max);
        expect(isWellFormed(cut)).toBe(true);
        expect(t.startsWith(cut)).toBe(true);
        if (t.length <= max) {
          expect(cut).toBe(t);
          return;
        }
        expect(cut.length).toBeLessThanOrEqual(max);
        // the boundaries up to the cut, from the text up to a little past it (a boundary depends on what comes before
        // it and on the next code point only): segmenting all of a text 20 times the limit took most of the file's time
        const atGrapheme = [...graphemes.segment(t.slice(0, cut.length + 64))].some((g) => g.index === cut.length);
        expect(atGrapheme || cut.length >= max - 1).toBe(true);
        expect(cut.length).toBeGreaterThanOrEqual(Math.min(max - 1, max - 257));
      }),
      RUNS,
    );
  });

  it('given a text limit crossing an emoji, then the emoji is dropped whole', () => {
    expect(cutText(`Z${'😀'.repeat(300)}`, 500)).toBe(`Z${'😀'.repeat(249)}`);
    expect(cutText('ab👨‍👩‍👧‍👦cd', 10)).toBe('ab');
    expect(cutText('cafe\u0301s', 4)).toBe('caf');
  });
});

describe('every cut of text', () => {
  it('given a page or draft of such text, when parsed, then its title, description, headings and text are well-formed prefixes', () => {
    fc.assert(
      fc.property(line, text, (l, body) => {
        const html = parseHtmlPage(
          `<html><head><title>${l}</title><meta name="description" content="${l}"></head><body><h1>${l}</h1><h2>${l}</h2><p>${body.replace(/[<>&]/g, ' ')}</p></body></html>`,
        );
        wellFormed(html);
        for (const h of html.headings) expect(squash(l).startsWith(h.text)).toBe(true);
        expect(squash(l).startsWith(html.title ?? '')).toBe(true);
        // the body's own lines never start a heading (a piece can be "# a"), as its HTML holds no tag
        const draft = parseDraft({ title: l, body: `# ${l}\n\n## ${l}\n\n${body.replace(/#/g, ' ')}` });
        wellFormed(draft);
        for (const h of draft.headings) expect(l.startsWith(h.text)).toBe(true);
      }),
      RUNS,
    );
  });

  it('given such a page, when recommendations are made, then every title, detail and excerpt is well-formed and each excerpt is part of the page', () => {
    fc.assert(
      fc.property(line, text, (l, body) => {
        const page = parseDraft({ title: l, body: `# ${l}\n\n# ${l}?\n\n${l} shoes running flat feet. ${body}` });
        const best = bestSentence(page.text, ['shoe', 'running']);
        if (best) wellFormed(best);
        const recs = recommend(
          'job',
          { ...page, meta_description: l },
          { brand: 'Stride', prompts: [{ id: 'p', text: 'running shoes' }], competitorGaps: new Map(), facts: [] },
          'url',
        );
        wellFormed(recs);
        const whole = [page.title, l, ...page.headings.map((h) => h.text), page.text].join('\n');
        for (const r of recs) if (r.excerpt) expect(whole.includes(r.excerpt)).toBe(true);
      }),
      RUNS,
    );
  });

  it('given such text, when an engine answers, writes or fails with it, then what it records is well-formed', async () => {
    await fc.assert(
      fc.asyncProperty(text, line, async (t, l) => {
        wellFormed(
          simulateAnswer({
            model: 'chatgpt',
            prompt: t,
            day: '2025-03-14',
            website: { brand: { name: 'Acme', domain: 'acme.com' }, competitors: [] },
          }),
        );
        const subject = { title: l, type: 'generated', topic_name: l, prompts: [t], brand: { name: l, domain: 'acme.com' } };
        for (const task of [
          { task: 'article' as const, brief: t, ...subject },
          { task: 'optimize' as const, url: 'https://acme.com/', page: t, ...subject },
        ]) {
          const written = simulateWriting({ model: 'chatgpt', prompt: writerPrompt(task), day: '2025-03-14' });
          wellFormed(written);
          wellFormed(readWriterAnswer(task, written.text));
          wellFormed(readWriterAnswer(task, `Meta description: ${t}\n\n${t}`));
        }
        wellFormed(metaFrom(t));
        const short = excerpt(t);
        wellFormed(short);
        const cutOff = squash(t).length > 300;
        expect(squash(t).startsWith(cutOff ? short.slice(0, -1) : short)).toBe(true);
        expect(() => parseSerpApi({ error: t })).toThrow();
        try {
          parseSerpApi({ error: t });
        } catch (e) {
          wellFormed((e as Error).message);
        }
        wellFormed(classifySendError(Object.assign(new Error(t), { code: 'ECONNRESET' })));
        const message = errorText(new Error(t));
        wellFormed(message);
        expect(t.startsWith(message)).toBe(true);
        wellFormed(decideOutcome({ request_id: 'r' } as Requested, { kind: 'failed', error_kind: 'rejected', message: t, attempts: 1 }));
      }),
      { numRuns: 25 },
    );
  });

  it('given such text, when a page is read, a home page researched or a chart drawn, then the result is well-formed', () => {
    fc.assert(
      fc.property(line, fc.integer({ min: 0, max: 40 }), (l, short) => {
        // a page of text reaching past what is kept of it, the cut falling in the generated text
        const page = `${'a'.repeat(MAX_PAGE_CHARS - short)} ${l}`;
        const read = pageText(`<title>${l}</title><body><p>${page}</p></body>`);
        wellFormed(read);
        expect(page.startsWith(read.text)).toBe(true);
        const home = readHomePage(`<html><head><title>${l}</title><meta name="description" content="${l}"></head></html>`, 'acme.com');
        wellFormed(home);
        wellFormed(barChart({ id: 'chart', title: l, bars: [{ label: l, value: 1 }] }).toString());
      }),
      RUNS,
    );
  });

  it('given such text in a long sentence, when observations are extracted by rules or by a judge, then their spans are well-formed parts of the text', async () => {
    const entities = compileEntities([{ id: 'acme', name: 'Acme', is_self: true, url: null }]);
    const attributes = compileAttributes([{ id: 'price', name: 'Price', description: 'How affordable the product is said to be' }]);
    await fc.assert(
      fc.asyncProperty(line, async (l) => {
        const answer = `Acme is expensive ${l} for everyone.`;
        for (const o of extractObservations(entities, attributes, answer)) {
          wellFormed(o);
          expect(answer.includes(o.text_span)).toBe(true);
        }
        const reply = JSON.stringify([{ entity: 'Acme', attribute: 'Price', positive: false, score: -0.5, text_span: answer }]);
        const engine: AnswerEngine = {
          ask: async () => ({ text: reply, citations: [], products: [], usage: { credits: 1 }, provider_model: 'fake', latency_ms: 1 }),
        };
        const judged = await createLlmJudge(engine, 'gpt-4o-mini').extract({
          text: answer,
          entities: [{ id: 'acme', name: 'Acme', is_self: true }],
          attributes: [{ id: 'price', name: 'Price', description: null }],
          day: '2025-03-14',
        });
        for (const o of judged) {
          wellFormed(o);
          expect(answer.includes(o.text_span)).toBe(true);
        }
      }),
      { numRuns: 60 },
    );
  });
});
