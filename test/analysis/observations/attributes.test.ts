import { describe, expect, it } from 'vitest';
import { compileEntities } from '../../../src/analysis/answer';
import { compileAttributes } from '../../../src/analysis/observations/attributes';
import { wordHash } from '../../../src/analysis/observations/lexicon';

describe("observations attributes: a website's traits compiled with the lexicon", () => {
  it('given an attribute named as a built-in group, then it gets the whole group, its own forms listed as they are', () => {
    const [price] = compileAttributes([{ id: 'p', name: 'Price' }]).attributes;
    expect(price).toMatchObject({ id: 'p', name: 'Price' });
    expect(price.terms).toEqual(expect.arrayContaining(['price', 'pricing', 'cost', 'expensive', 'value for money', 'hidden fees']));
  });

  it('given a custom attribute, then its name with inflections and its meaningful description words, without stop words or cue words', () => {
    const [a] = compileAttributes([{ id: 'o', name: 'Onboarding', description: 'How good the onboarding documentation is' }]).attributes;
    expect(a.terms).toEqual(expect.arrayContaining(['onboarding', 'onboardings', 'documentation', 'documentations']));
    for (const w of ['how', 'the', 'good', 'is']) expect(a.terms).not.toContain(w);
  });

  it('given a custom name with no group, then the groups its description triggers', () => {
    const [a] = compileAttributes([{ id: 'h', name: 'Helpdesk quality', description: null }]).attributes;
    expect(a.terms).toEqual(expect.arrayContaining(['helpdesk quality', 'support', 'reliability']));
  });

  it('given attributes, then the trie holds the lexicon and each term points at the attributes it belongs to', () => {
    const c = compileAttributes([
      { id: 'p', name: 'Price' },
      { id: 'c', name: 'Cost' },
    ]);
    expect(c.root.get('best')?.lex).not.toBeNull();
    expect(c.root.get('pricing')?.attrs).toEqual([0, 1]);
    expect(c.bloom[wordHash('pricing')]).toBe(1);
    expect(c.bloom[wordHash('they')]).toBe(1);
  });

  it('given entities whose names hold lexicon words, then their masks are computed once per entities and anchored at the first trie word', () => {
    const c = compileAttributes([{ id: 's', name: 'Support' }]);
    const e = compileEntities([
      { id: 'b', name: 'Best Buy', is_self: true, identifiers: [], url: 'https://www.bestbuy.com' },
      { id: 's', name: 'Zendesk', is_self: false, identifiers: [], url: 'https://support.com' },
    ]);
    const masks = c.masksFor(e);
    expect(masks).toEqual([
      { words: ['best', 'buy'], anchor: 0 },
      { words: ['support', 'com'], anchor: 0 },
    ]);
    expect(c.masksFor(e)).toBe(masks);
  });
});
