import { describe, expect, it } from 'vitest';
import { analyzeAnswer, compileEntities, type EntityInput } from '../../src/analysis/answer';
import { seededRandom } from '../../src/domain/random';

// Property-style checks over generated catalogues and answers (deterministic PRNG, so a failure replays).
const mulberry32 = seededRandom;

const SYLLABLES = ['ka', 'lo', 'mi', 'zu', 're', 'ta', 'qui', 'vo', 'xe', 'bri', 'nö', 'sé', 'do', 'fa'];
const FILLER = ['the', 'best', 'tool', 'for', 'teams', 'is', 'and', 'also', 'with', 'pricing', 'support', 'a', 'of', 'in'];
const SEPARATORS = [' ', ' ', ' ', ', ', '. ', '\n', ' (', ') ', ' — ', ' **', '** '];

function word(rnd: () => number): string {
  let w = '';
  for (let n = 2 + Math.floor(rnd() * 2); n > 0; n--) w += SYLLABLES[Math.floor(rnd() * SYLLABLES.length)];
  return w;
}

const cap = (s: string) => s[0].toUpperCase() + s.slice(1);
const pick = <T>(rnd: () => number, xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)];

/** A catalogue whose terms are distinct words (one or two words), none a word-prefix of another. */
function catalogue(rnd: () => number, size: number, sharedTerm: boolean): { entities: EntityInput[]; terms: string[][] } {
  const used = new Set<string>();
  const fresh = () => {
    for (;;) {
      const w = word(rnd);
      if (!used.has(w)) {
        used.add(w);
        return w;
      }
    }
  };
  const entities: EntityInput[] = [];
  const terms: string[][] = [];
  // short identifiers shrink the scan window of the matcher to 1 or 2 characters
  const shorts = ['Q', 'V', 'X9', 'Z3', 'HP'].filter(() => rnd() < 0.15);
  for (let i = 0; i < size; i++) {
    const name = rnd() < 0.3 ? `${cap(fresh())} ${cap(fresh())}` : cap(fresh());
    const identifiers = rnd() < 0.4 ? [fresh().toUpperCase()] : [];
    if (shorts.length && rnd() < 0.3) identifiers.push(shorts.pop()!);
    entities.push({ id: `e${i}`, name, is_self: i === 0, identifiers, url: `https://${fresh()}.com` });
    terms.push([name, ...identifiers]);
  }
  if (sharedTerm && size >= 2) {
    const shared = cap(fresh());
    for (const i of [0, 1]) {
      (entities[i].identifiers as string[]).push(shared);
      terms[i].push(shared);
    }
  }
  return { entities, terms };
}

function answer(rnd: () => number, terms: string[][]): string {
  let s = '';
  for (let n = 5 + Math.floor(rnd() * 60); n > 0; n--) {
    const r = rnd();
    const piece = r < 0.25 ? pick(rnd, pick(rnd, terms)) : pick(rnd, FILLER);
    const cased = rnd() < 0.2 ? piece.toUpperCase() : rnd() < 0.2 ? piece.toLowerCase() : piece;
    // a multi-word name may be written across any run of spaces
    s += cased.replace(/ /g, () => pick(rnd, [' ', ' ', '  ', '\n', '\t', '\u00a0'])) + pick(rnd, SEPARATORS);
  }
  return s;
}

/**
 * Reference: one regex per entity over the lower-cased text (the generated alphabet lower-cases in
 * place). Its word class covers that alphabet only: `\p{L}` classes cost milliseconds each to compile.
 */
function naiveMatcher(terms: string[]): (lowerText: string) => number {
  const alternatives = terms.map((t) =>
    t
      .toLowerCase()
      .replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
      .replace(/ /g, '\\s+'),
  );
  const re = new RegExp(`(?<![a-z0-9_\u00c0-\u024f])(?:${alternatives.join('|')})(?![a-z0-9_\u00c0-\u024f])`);
  return (lowerText) => re.exec(lowerText)?.index ?? -1;
}

describe('positions (property)', () => {
  it('k mentioned entities get the positions 1..k, each once, in order of first occurrence', () => {
    const rnd = mulberry32(20240601);
    for (let round = 0; round < 300; round++) {
      const { entities, terms } = catalogue(rnd, 1 + Math.floor(rnd() * 15), false);
      const compiled = compileEntities(entities);
      const naive = terms.map(naiveMatcher);
      for (let a = 0; a < 10; a++) {
        const text = answer(rnd, terms);
        const lower = text.toLowerCase();
        expect(lower.length).toBe(text.length);
        const { mentions } = analyzeAnswer(compiled, { text });
        const k = mentions.length;
        expect(mentions.map((m) => m.position).sort((x, y) => x - y)).toEqual(Array.from({ length: k }, (_, i) => i + 1));
        for (let i = 1; i < k; i++) expect(mentions[i].first_index).toBeGreaterThan(mentions[i - 1].first_index);
        // the one-pass matcher agrees with a per-term regex about who is mentioned and where first
        const expected = entities.map((e, i) => ({ id: e.id, first: naive[i](lower) })).filter((x) => x.first !== -1);
        expect(Object.fromEntries(mentions.map((m) => [m.entity_id, m.first_index]))).toEqual(
          Object.fromEntries(expected.map((x) => [x.id, x.first])),
        );
      }
    }
  });

  it('with shared terms, positions rank by first occurrence: ties share a position, the next skips', () => {
    const rnd = mulberry32(7);
    for (let round = 0; round < 200; round++) {
      const { entities, terms } = catalogue(rnd, 2 + Math.floor(rnd() * 10), true);
      const compiled = compileEntities(entities);
      for (let a = 0; a < 10; a++) {
        const { mentions } = analyzeAnswer(compiled, { text: answer(rnd, terms) });
        for (const m of mentions) {
          expect(m.position).toBeGreaterThanOrEqual(1);
          expect(m.position).toBeLessThanOrEqual(mentions.length);
          expect(m.position).toBe(1 + mentions.filter((o) => o.first_index < m.first_index).length);
        }
      }
    }
  });
});
