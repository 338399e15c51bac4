import { describe, expect, it } from 'vitest';
import { BLOOM_SIZE, wordsOf } from '../../../src/analysis/observations/lexicon';
import { Doc, F_BRK, F_SEMI, LINE_BULLET, LINE_HEADING, LINE_NONE, LINE_NUMBER } from '../../../src/analysis/observations/segmentation';

/** every word hashes into the filter: each token carries its word */
const ALL = new Uint8Array(BLOOM_SIZE).fill(1);

const load = (text: string, doc = new Doc()) => {
  doc.load(text, ALL, 0);
  return doc;
};
const sentences = (d: Doc) => Array.from({ length: d.ns }, (_, s) => d.text.slice(d.ss[s], d.se[s]));
const words = (d: Doc, s: number) => Array.from({ length: d.st1[s] - d.st0[s] }, (_, i) => d.tw[d.st0[s] + i]);

describe('observations segmentation: tokens, sentences, lines', () => {
  it('given sentences ending in . ! ?, then one per sentence; abbreviations and initials end none; questions are marked', () => {
    const d = load('Acme Inc. is good, e.g. for support vs. Globex. J. Smith agrees! Is it cheap? Yes.');
    expect(sentences(d)).toEqual(['Acme Inc. is good, e.g. for support vs. Globex.', 'J. Smith agrees!', 'Is it cheap?', 'Yes.']);
    expect(Array.from(d.sq.subarray(0, d.ns))).toEqual([0, 0, 1, 0]);
  });

  it('given punctuation between words, then the next token carries it as a break (and a semicolon as a clause boundary)', () => {
    const d = load('Acme is cheap, fast; and good - mostly');
    const flagOf = (w: string) => d.tf[d.tw.indexOf(w)];
    expect(words(d, 0)).toEqual(['acme', 'is', 'cheap', 'fast', 'and', 'good', 'mostly']);
    expect(flagOf('is')).toBe(0);
    expect(flagOf('fast') & F_BRK).toBe(F_BRK);
    expect(flagOf('and') & F_SEMI).toBe(F_SEMI);
    expect(flagOf('mostly') & F_BRK).toBe(F_BRK);
    expect(flagOf('good')).toBe(0);
  });

  it('given markdown lines, then each line has its kind and indent, and knows whether it ends a sentence', () => {
    const d = load('# Best tools\n1. **Acme**\n   - great support\n\tplain text here.\nA heading-like line');
    expect(d.nl).toBe(5);
    expect(Array.from(d.lk.subarray(0, d.nl))).toEqual([LINE_HEADING, LINE_NUMBER, LINE_BULLET, LINE_NONE, LINE_NONE]);
    expect(Array.from(d.li.subarray(0, d.nl))).toEqual([0, 0, 3, 4, 0]);
    expect(Array.from(d.lterm.subarray(0, d.nl))).toEqual([0, 0, 0, 1, 0]);
    // the list marker is not part of the sentence
    expect(sentences(d)[2]).toBe('great support');
    expect(d.sl[2]).toBe(2);
  });

  it('given a start past the beginning, then what comes before it is not read', () => {
    const text = 'Nobody here.\nAcme is good.';
    const d = new Doc();
    d.load(text, ALL, text.indexOf('\n') + 1);
    expect(sentences(d)).toEqual(['Acme is good.']);
  });

  it('given a bloom filter without a word, then its token carries no string, and wordAt still reads it', () => {
    const d = new Doc();
    d.load('Acme Rocks', new Uint8Array(BLOOM_SIZE), 0);
    expect(d.tw.slice(0, d.nt)).toEqual(['', '']);
    expect(d.wordAt(1)).toBe('rocks');
  });

  it('given a quoted question, then its words are blanked (an echoed prompt says nothing)', () => {
    const d = load('Regarding "Is Acme worth the price?" Acme is cheap.');
    d.blankQuotedQuestions();
    expect(d.tw.slice(0, d.nt)).toEqual(['regarding', '', '', '', '', '', 'acme', 'is', 'cheap']);
  });

  it('given entity names made of lexicon words, then their words are blanked where they occur in sequence, not across punctuation', () => {
    const d = load('Best Buy is the best, buy it. Best deal.');
    const words = wordsOf('Best Buy');
    d.maskNames([{ words, anchor: 0 }]);
    expect(d.tw.slice(0, d.nt)).toEqual(['', '', 'is', 'the', 'best', 'buy', 'it', 'best', 'deal']);
  });

  it('given one Doc loaded with a long text and then a short one, then the second reads as if on a fresh Doc (its buffers grow and are reused)', () => {
    const long = Array.from({ length: 300 }, (_, i) => `Sentence number ${i}, with words.`).join('\n');
    const d = load(long);
    expect(d.ns).toBe(300);
    const short = 'Acme is good. Globex is not.';
    load(short, d);
    const fresh = load(short);
    expect(sentences(d)).toEqual(sentences(fresh));
    expect(d.tw.slice(0, d.nt)).toEqual(fresh.tw.slice(0, fresh.nt));
    expect(d.nl).toBe(fresh.nl);
  });
});
