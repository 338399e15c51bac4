import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeUtf8, jsonDeeperThan, MAX_JSON_DEPTH } from '../../src/domain/raw-input';
import { isWellFormed, label, Text, TEXT_LONE_SURROGATE, TEXT_NUL, textProblem } from '../../src/domain/schemas';

/** Nesting of a parsed value: a scalar is 0, `[]` and `{}` are 1. */
const depthOf = (v: unknown): number => (v !== null && typeof v === 'object' ? 1 + Math.max(0, ...Object.values(v as object).map(depthOf)) : 0);

describe('jsonDeeperThan', () => {
  it('agrees with the depth of the parsed value, for any JSON text and any limit (strings full of brackets, quotes and backslashes included)', () => {
    const tricky = fc.string({ unit: fc.constantFrom('[', ']', '{', '}', '"', '\\', 'a', '\u00e9', '\u{1f600}') });
    const value = fc.letrec((tie) => ({
      node: fc.oneof({ depthSize: 'small' }, tricky, fc.integer(), fc.constant(null), fc.array(tie('node')), fc.dictionary(tricky, tie('node'))),
    })).node;
    fc.assert(
      fc.property(value, fc.integer({ min: 0, max: 8 }), fc.boolean(), (v, max, asBytes) => {
        const json = JSON.stringify(v, null, asBytes ? 1 : undefined);
        expect(jsonDeeperThan(asBytes ? Buffer.from(json) : json, max)).toBe(depthOf(v) > max);
      }),
      { numRuns: 2000 },
    );
  });

  it('given 100,000 levels, then it answers without recursion, at the first level past the limit', () => {
    const deep = '['.repeat(100_000);
    expect(jsonDeeperThan(deep)).toBe(true);
    expect(jsonDeeperThan(`${'['.repeat(MAX_JSON_DEPTH)}${']'.repeat(MAX_JSON_DEPTH)}`)).toBe(false);
  });
});

describe('decodeUtf8', () => {
  it('given valid UTF-8, then its text; given anything else, then null (never U+FFFD)', () => {
    // a leading byte order mark is not part of the text
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme' }), (s) => {
        expect(decodeUtf8(Buffer.from(s))).toBe(s.replace(/^\ufeff/, ''));
      }),
    );
    for (const bad of [[0x80], [0xff], [0xe2, 0x82], [0xc0, 0x80], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80]]) {
      expect(decodeUtf8(Uint8Array.from(bad)), JSON.stringify(bad)).toBeNull();
    }
  });
});

describe('the shared text schemas', () => {
  it('given any well-formed string without NUL, then Text takes it unchanged; with NUL or a lone surrogate, then it names the problem', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (s) => {
        const r = Text.safeParse(s);
        const problem = s.includes('\u0000') ? TEXT_NUL : isWellFormed(s) ? null : TEXT_LONE_SURROGATE;
        expect(textProblem(s)).toBe(problem);
        if (problem) expect(r.error?.issues[0].message).toBe(problem);
        else expect(r.data).toBe(s);
      }),
    );
    expect(Text.safeParse('\ud83d\ude00').success).toBe(true);
    expect(Text.safeParse('\ude00\ud83d').error?.issues[0].message).toBe(TEXT_LONE_SURROGATE);
  });

  it('given a label, then surrounding whitespace is trimmed as before and only visible, unreordered text is kept', () => {
    const name = label(200);
    expect(name.parse('  Acme\n')).toBe('Acme');
    for (const ok of ['Acme & Co.', 'Zürich', 'שלום\u200fעולם', 'a\u00a0b', '日本']) expect(name.safeParse(ok).success, ok).toBe(true);
    for (const bad of ['a\nb', 'a\tb', 'a\u0085b', 'a\u2028b', 'a\u202eb', 'a\u2066b', 'a\u2069b', 'a\u202ab'])
      expect(name.safeParse(bad).success, JSON.stringify(bad)).toBe(false);
  });
});
