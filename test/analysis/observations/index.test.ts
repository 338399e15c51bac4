import { describe, expect, it } from 'vitest';
import { compileEntities, type EntityInput } from '../../../src/analysis/answer';
import { compileAttributes, extractObservations } from '../../../src/analysis/observations';

const ENTITIES: EntityInput[] = [
  { id: 'acme', name: 'Acme', is_self: true, identifiers: [], url: 'https://acme.com' },
  { id: 'globex', name: 'Globex', is_self: false, identifiers: [], url: 'https://globex.io' },
];
const attributes = compileAttributes([
  { id: 'price', name: 'Price' },
  { id: 'support', name: 'Support' },
]);
const said = (os: ReturnType<typeof extractObservations>) => os.map((o) => `${o.entity_id}/${o.attribute_id}/${o.score}: ${o.text_span}`);

const OUTER = 'Acme has great support. Its pricing is steep, though.\n- Globex is cheap\n- Globex support is slow';
const INNER = 'Globex offers excellent support and fair prices. Acme is expensive.';

describe('extractObservations: no state shared between calls', () => {
  it('given a call made while another is under way (re-entrancy), then each gets the answer it gets alone', () => {
    const alone = {
      outer: said(extractObservations(compileEntities(ENTITIES), attributes, OUTER)),
      inner: said(extractObservations(compileEntities(ENTITIES), attributes, INNER)),
    };
    expect(alone.outer.length).toBeGreaterThan(1);
    expect(alone.inner.length).toBeGreaterThan(1);

    // the outer call's entity scans run a whole other extraction in the middle of reading its sentences
    const outerEntities = compileEntities(ENTITIES);
    const innerEntities = compileEntities(ENTITIES);
    const scan = outerEntities.matcher.scan.bind(outerEntities.matcher);
    const nested: string[][] = [];
    (outerEntities.matcher as { scan: typeof scan }).scan = (text, first) => {
      const n = scan(text, first);
      nested.push(said(extractObservations(innerEntities, attributes, INNER)));
      return n;
    };
    const outer = said(extractObservations(outerEntities, attributes, OUTER));
    expect(nested.length).toBeGreaterThan(2);
    for (const inner of nested) expect(inner).toEqual(alone.inner);
    expect(outer).toEqual(alone.outer);
  });

  it('given a very long answer and then a short one, then the short one reads as it does first (scratch reused, never carried over)', () => {
    const entities = compileEntities(ENTITIES);
    const first = said(extractObservations(entities, attributes, INNER));
    const long = Array.from({ length: 2000 }, (_, i) => `Point ${i}: Acme support is ${i % 2 ? 'great' : 'slow'}, and Globex pricing is fair.`).join(
      '\n',
    );
    expect(extractObservations(entities, attributes, long).length).toBeGreaterThan(2000);
    expect(said(extractObservations(entities, attributes, INNER))).toEqual(first);
  });
});
