import { describe, expect, it } from 'vitest';
import { compileEntities } from '../../../src/analysis/answer';
import { compileAttributes } from '../../../src/analysis/observations/attributes';
import { K_CUE, K_INT, type Lex } from '../../../src/analysis/observations/lexicon';
import { Extraction, Hits, isValidScore, normalizeScore, walk } from '../../../src/analysis/observations/rules';
import { Doc } from '../../../src/analysis/observations/segmentation';

const entities = compileEntities([
  { id: 'acme', name: 'Acme', is_self: true, identifiers: [], url: 'https://acme.com' },
  { id: 'globex', name: 'Globex', is_self: false, identifiers: [], url: 'https://globex.io' },
]);
const attributes = compileAttributes([
  { id: 'price', name: 'Price' },
  { id: 'support', name: 'Support' },
]);

/** One extraction with its own Doc and Hits, as extractObservations runs it (every sentence read). */
function extraction(text: string, doc = new Doc(), hits = new Hits()) {
  doc.load(text, attributes.bloom, 0);
  return { doc, hits, x: new Extraction(entities, attributes, doc, hits) };
}
const said = (x: Extraction) => x.out.map((o) => `${o.entity_id}/${o.attribute_id}/${o.score}`);

describe('observations rules', () => {
  it('given a sentence, when walked, then the longest lexicon phrase and the attribute terms are found each on its own, never across a break', () => {
    const doc = new Doc();
    doc.load('Acme is worth a look for very good customer support, pricing', attributes.bloom, 0);
    const h = new Hits();
    walk(h, doc, attributes.root, doc.st0[0], doc.st1[0]);
    const lexWords = Array.from({ length: h.lex.n }, (_, i) => doc.text.slice(doc.ts[h.lex.k[i]], doc.te[h.lex.end[i] - 1]));
    expect(lexWords).toEqual(['worth a look', 'very', 'good']);
    expect(h.lex.x.slice(0, h.lex.n).map((x: Lex) => x.kind)).toEqual([K_CUE, K_INT, K_CUE]);
    const attrWords = Array.from({ length: h.attrs.n }, (_, i) => doc.text.slice(doc.ts[h.attrs.k[i]], doc.te[h.attrs.end[i] - 1]));
    expect(attrWords).toEqual(['customer support', 'pricing']);
  });

  it('given a contrast, when extracted, then each clause carries its own polarity and a hedge halves its strength', () => {
    const { x } = extraction('Acme stands out for support, though pricing can be a concern.');
    x.run(0);
    expect(said(x)).toEqual(['acme/support/0.6', 'acme/price/-0.3']);
  });

  it('given a comparison baseline, when extracted, then the baseline entity gets nothing', () => {
    const { x } = extraction('Compared with Globex, Acme offers better support.');
    x.run(0);
    expect(said(x)).toEqual(['acme/support/0.6']);
  });

  it('given a pronoun sentence after a sentence about one entity, when extracted, then it is about that entity', () => {
    const { x } = extraction('Globex is a CRM. Its pricing is steep.');
    x.run(0);
    expect(said(x)).toEqual(['globex/price/-0.6']);
  });

  it('given `from` past a sentence, when run, then that sentence is not read', () => {
    const text = 'Acme has great support. Globex has poor support.';
    const { x } = extraction(text);
    x.run(text.indexOf('Globex'));
    expect(said(x)).toEqual(['globex/support/-0.6']);
  });

  it('given two extractions under way at once, each with its own Doc and Hits, then neither disturbs the other (no shared state)', () => {
    const a = 'Acme has great support. Globex is expensive.';
    const b = 'Globex support is slow, but Acme pricing is fair.';
    const alone = (t: string) => {
      const { x } = extraction(t);
      x.run(0);
      return said(x);
    };
    const first = extraction(a);
    const second = extraction(b);
    second.x.run(0);
    first.x.run(0);
    expect(said(first.x)).toEqual(alone(a));
    expect(said(second.x)).toEqual(alone(b));
    expect(said(first.x)).not.toEqual(said(second.x));
  });

  it('given scores, then valid ones are finite, 0.1 to 1 in magnitude and signed as their direction, rounded to 3 decimals', () => {
    expect(isValidScore(true, 0.6)).toBe(true);
    expect(isValidScore(false, 0.6)).toBe(false);
    expect(isValidScore(true, 0.05)).toBe(false);
    expect(isValidScore(true, Number.NaN)).toBe(false);
    expect(normalizeScore(false, -0.12345)).toBe(-0.123);
    expect(normalizeScore(true, 1.5)).toBeNull();
  });
});
