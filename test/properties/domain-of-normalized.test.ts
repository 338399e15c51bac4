import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { domainOfNormalized } from '../../projections/answers/evidence';
import { hostOf } from '../../src/domain/urls';

/** What domainOfNormalized answered before it kept plain authorities' hosts: the whole string parsed each time. */
const parsedWhole = (n: string) => hostOf(`http://${n}`) ?? n.split('/')[0];

const label = fc.stringMatching(/^[a-z0-9-]{1,8}$/);
const piece = fc.constantFrom('', '/', '/a b', '?q=1', '#f', '\\x', '/p/../q', ':80', ':8080/x', '.', '..', ' ', '\t/x', '@h/x', '%20');
/** normalized URLs as the answers projection stores them, and stranger strings around the same hosts */
const normalized = fc
  .tuple(fc.array(label, { minLength: 1, maxLength: 4 }), fc.constantFrom('', ':443', ':1', ':99999'), piece, fc.string({ maxLength: 6 }))
  .map(([labels, port, rest, tail]) => `${labels.join('.')}${port}${rest}${tail}`);

describe('domainOfNormalized: the host of a stored normalized URL', () => {
  it('given any string, then it answers what parsing the whole string answers, asked once or again', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          normalized,
          fc.string({ maxLength: 30 }),
          fc.webUrl().map((u) => u.replace(/^https?:\/\//, '')),
        ),
        (n) => {
          expect(domainOfNormalized(n)).toBe(parsedWhole(n));
          expect(domainOfNormalized(n)).toBe(parsedWhole(n));
        },
      ),
      { numRuns: 3000, seed: 44 },
    );
  });

  it('given hosts that the URL parser rewrites (numeric, hex, punycode, a port), then the same answers as a whole parse', () => {
    for (const n of [
      '0x7f.1/x',
      '1.2.3/x',
      '127.1:8080/p',
      'xn--bcher-kva.example/p',
      'xn--abc/p',
      'example.com:8080?x',
      'example.com.#frag',
      'a..b/x',
      'localhost:3000/x',
      'ex-ample.com\\path',
      'nodot/path',
      'EXAMPLE.com/Path',
    ]) {
      expect(domainOfNormalized(n), n).toBe(parsedWhole(n));
      expect(domainOfNormalized(n), n).toBe(parsedWhole(n));
    }
  });
});
