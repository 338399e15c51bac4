import { describe, expect, it } from 'vitest';
import {
  ALL_GROUP_TERMS,
  bloomIndex,
  FNV_BASIS,
  FNV_PRIME,
  inflections,
  K_BASELINE,
  K_CONTRAST,
  K_CUE,
  K_EXCEPT,
  K_HEDGE,
  K_INT,
  K_NEG,
  LEXICON,
  type Node,
  nodeFor,
  PRONOUNS,
  STOPWORDS,
  wordHash,
  wordsOf,
} from '../../../src/analysis/observations/lexicon';

describe('observations lexicon: the words the rules read', () => {
  it('given praise and criticism cues, then each has its sign and strength', () => {
    expect(LEXICON.get('best')).toMatchObject({ kind: K_CUE, w: 0.9 });
    expect(LEXICON.get('great')).toMatchObject({ kind: K_CUE, w: 0.8 });
    expect(LEXICON.get('recommended')).toMatchObject({ kind: K_CUE, w: 0.6 });
    expect(LEXICON.get('worth a look')).toMatchObject({ kind: K_CUE, w: 0.4 });
    expect(LEXICON.get('expensive')).toMatchObject({ kind: K_CUE, w: -0.6 });
    expect(LEXICON.get('terrible')).toMatchObject({ kind: K_CUE, w: -0.9 });
  });

  it('given the markers, then negators flip (and `lacks` criticizes alone), intensifiers lift, hedges halve, contrasts and exceptions cut', () => {
    expect(LEXICON.get('not')).toMatchObject({ kind: K_NEG, w: 0 });
    expect(LEXICON.get("doesn't")).toMatchObject({ kind: K_NEG, w: 0 });
    expect(LEXICON.get('lacks')).toMatchObject({ kind: K_NEG, w: -0.6 });
    expect(LEXICON.get('not always')).toMatchObject({ kind: K_NEG, hedge: true });
    expect(LEXICON.get('very')).toMatchObject({ kind: K_INT, w: 0.9 });
    expect(LEXICON.get('extremely')).toMatchObject({ kind: K_INT, w: 1 });
    expect(LEXICON.get('can be')).toMatchObject({ kind: K_HEDGE });
    expect(LEXICON.get('but')).toMatchObject({ kind: K_CONTRAST, sub: false, afterComma: false });
    expect(LEXICON.get('while')).toMatchObject({ kind: K_CONTRAST, sub: true, afterComma: true });
    expect(LEXICON.get('despite')).toMatchObject({ kind: K_EXCEPT, sub: true });
    expect(LEXICON.get('compared with')).toMatchObject({ kind: K_BASELINE });
  });

  it('given phrases with apostrophes, curly quotes and punctuation, then words are lower-cased and split as the tokenizer splits them', () => {
    expect(wordsOf('Isn\u2019t WORTH-it, Best in-class!')).toEqual(["isn't", 'worth', 'it', 'best', 'in', 'class']);
    expect(wordsOf('  ')).toEqual([]);
  });

  it('given a term, then its singular and plural forms', () => {
    expect(inflections('integration')).toEqual(['integration', 'integrations']);
    expect(inflections('fees')).toEqual(['fees', 'fee']);
    expect(inflections('delivery')).toEqual(['delivery', 'deliveries']);
    expect(inflections('build quality')).toEqual(['build quality', 'build qualities']);
    expect(inflections('ux')).toEqual(['ux']);
    expect(inflections('v2')).toEqual(['v2']);
  });

  it('given the built-in synonym groups, pronouns and stop words, then they hold the words the rules rely on', () => {
    for (const t of ['pricing', 'customer support', 'ease of use', 'integrations', 'shipping']) expect(ALL_GROUP_TERMS.has(t), t).toBe(true);
    expect(PRONOUNS.has('they')).toBe(true);
    expect(STOPWORDS.has('the')).toBe(true);
    expect(STOPWORDS.has('pricing')).toBe(false);
  });

  it('given a word, then its bloom slot is the one the tokenizer computes while reading it (FNV-1a over its code units, folded)', () => {
    const byHand = (w: string) => {
      let h = FNV_BASIS;
      for (const c of w) h = Math.imul(h ^ c.charCodeAt(0), FNV_PRIME);
      return bloomIndex(h);
    };
    expect(wordHash('pricing')).toBe(byHand('pricing'));
    expect(wordHash("isn't")).toBe(byHand("isn't"));
    expect(wordHash('pricing')).not.toBe(wordHash('support'));
  });

  it('given phrases put into a trie, then each path of words ends at one node, shared by a common prefix', () => {
    const root = new Map<string, Node>();
    const a = nodeFor(root, ['worth', 'a', 'look']);
    const b = nodeFor(root, ['worth', 'it']);
    expect(nodeFor(root, ['worth', 'a', 'look'])).toBe(a);
    expect(root.size).toBe(1);
    expect(root.get('worth')?.next?.get('it')).toBe(b);
  });
});
