import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { oneOffBalance } from '../../src/domain/credits';

const month = fc.record({
  granted: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 5_000 })),
  used: fc.integer({ min: 0, max: 3_000 }),
});

describe('the one-off credit balance', () => {
  it('given months of grants and use, then the balance is never below zero nor above what was granted', () => {
    fc.assert(
      fc.property(fc.array(month, { maxLength: 24 }), fc.integer({ min: 0, max: 2_000 }), (months, allowance) => {
        const b = oneOffBalance(months, allowance);
        expect(b).toBeGreaterThanOrEqual(0);
        expect(b).toBeLessThanOrEqual(months.reduce((a, m) => a + m.granted, 0));
      }),
    );
  });

  it('given no month past its allowance, then every grant is still there', () => {
    fc.assert(
      fc.property(fc.array(month, { maxLength: 24 }), (months) => {
        const allowance = Math.max(0, ...months.map((m) => m.used));
        expect(oneOffBalance(months, allowance)).toBe(months.reduce((a, m) => a + m.granted, 0));
      }),
    );
  });

  it('given overuse before a grant, then the later grant does not pay for it; overuse after it does', () => {
    // two months against an allowance of 1,000: what is left of the one-off grants
    const m = (granted: number, used: number) => ({ granted, used });
    const cases: [months: { granted: number; used: number }[], left: number][] = [
      [[m(0, 1_500), m(300, 900)], 300],
      [[m(300, 1_100), m(0, 1_050)], 150],
      [[m(300, 2_000), m(40.25, 0)], 40.25],
    ];
    for (const [months, left] of cases) expect(oneOffBalance(months, 1_000)).toBe(left);
  });
});
