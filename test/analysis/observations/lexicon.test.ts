import { describe, expect, it } from 'vitest';
import * as lexicon from '../../../src/analysis/observations/lexicon';

describe('observations lexicon: the words the rules read', () => {
  it('given praise and criticism cues, then each has its sign and strength', () => {
    expect(lexicon.LEXICON.get('best')).toMatchObject({ kind: lexicon.K_CUE, w: 0.9 });
    expect(lexicon.LEXICON.get('great')).toMatchObject({ kind: lexicon.K_CUE, w: 0.8 });
    expect(lexicon.LEXICON.get('recommended')).toMatchObject({ kind: lexicon.K_CUE, w: 0.6 });
    expect(lexicon.LEXICON.get('worth a look')).toMatchObject({ kind: lexicon.K_CUE, w: 0.4 });
    expect(lexicon.LEXICON.get('expensive')).toMatchObject({ kind: lexicon.K_CUE, w: -0.6 });
    expect(lexicon.LEXICON.get('terrible')).toMatchObject({ kind: lexicon.K_CUE, w: -0.9 });
  });

  it('given the markers, then negators flip (and `lacks` criticizes alone), intensifiers lift, hedges halve, contrasts and exceptions cut', () => {
    expect(lexicon.LEXICON.get('not')).toMatchObject({ kind: lexicon.K_NEG, w: 0 });
    expect(lexicon.LEXICON.get("doesn't")).toMatchObject({ kind: lexicon.K_NEG, w: 0 });
    expect(lexicon.LEXICON.get('lacks')).toMatchObject({ kind: lexicon.K_NEG, w: -0.6 });
    expect(lexicon.LEXICON.get('not always')).toMatchObject({ kind: lexicon.K_NEG, hedge: true });
    expect(lexicon.LEXICON.get('very')).toMatchObject({ kind: lexicon.K_INT, w: 0.9 });
    expect(lexicon.LEXICON.get('extremely')).toMatchObject({ kind: lexicon.K_INT, w: 1 });
    expect(lexicon.LEXICON.get('can be')).toMatchObject({ kind: lexicon.K_HEDGE });
    expect(lexicon.LEXICON.get('but')).toMatchObject({ kind: lexicon.K_CONTRAST, sub: false, afterComma: false });
    expect(lexicon.LEXICON.get('while')).toMatchObject({ kind: lexicon.K_CONTRAST, sub: true, afterComma: true });
    expect(lexicon.LEXICON.get('despite')).toMatchObject({ kind: lexicon.K_EXCEPT, sub: true });
    expect(lexicon.LEXICON.get('compared with')).toMatchObject({ kind: lexicon.K_BASELINE });
  });

  it('given phrases with apostrophes, curly quotes and punctuation, then words are lower-cased and split as the tokenizer splits them', () => {
    expect(lexicon.wordsOf('Isn\u2019t WORTH-it, Best in-class!')).toEqual(["isn't", 'worth', 'it', 'best', 'in', 'class']);
    expect(lexicon.wordsOf('  ')).toEqual([]);
  });

  it('given a term, then its singular and plural forms', () => {
    expect(lexicon.inflections('integration')).toEqual(['integration', 'integrations']);
    expect(lexicon.inflections('fees')).toEqual(['fees', 'fee']);
    expect(lexicon.inflections('delivery')).toEqual(['delivery', 'deliveries']);
    expect(lexicon.inflections('build quality')).toEqual(['build quality', 'build qualities']);
    expect(lexicon.inflections('ux')).toEqual(['ux']);
    expect(lexicon.inflections('v2')).toEqual(['v2']);
  });

  it('given the built-in synonym groups, pronouns and stop words, then they hold the words the rules rely on', () => {
    for (const t of ['pricing', 'customer support', 'ease of use', 'integrations', 'shipping']) expect(lexicon.ALL_GROUP_TERMS.has(t), t).toBe(true);
    expect(lexicon.PRONOUNS.has('they')).toBe(true);
    expect(lexicon.STOPWORDS.has('the')).toBe(true);
    expect(lexicon.STOPWORDS.has('pricing')).toBe(false);
  });

  it('given a word, then its bloom slot is the one the tokenizer computes while reading it (FNV-1a over its code units, folded)', () => {
    const byHand = (w: string) => {
      let h = lexicon.FNV_BASIS;
      for (const c of w) h = Math.imul(h ^ c.charCodeAt(0), lexicon.FNV_PRIME);
      return lexicon.bloomIndex(h);
    };
    expect(lexicon.wordHash('pricing')).toBe(byHand('pricing'));
    expect(lexicon.wordHash("isn't")).toBe(byHand("isn't"));
    expect(lexicon.wordHash('pricing')).not.toBe(lexicon.wordHash('support'));
  });

  it('given phrases put into a trie, then each path of words ends at one node, shared by a common prefix', () => {
    const root = new Map<string, lexicon.Node>();
    const a = lexicon.nodeFor(root, ['worth', 'a', 'look']);
    const b = lexicon.nodeFor(root, ['worth', 'it']);
    expect(lexicon.nodeFor(root, ['worth', 'a', 'look'])).toBe(a);
    expect(root.size).toBe(1);
    expect(root.get('worth')?.next?.get('it')).toBe(b);
  });
});
