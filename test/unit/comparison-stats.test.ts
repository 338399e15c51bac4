import { describe, expect, it } from 'vitest';
import { meanDifference, newcombeInterval, twoProportionP, twoSidedP, verdictOf, wilsonInterval } from '../../queries/metrics/stats';

const four = (r: [number, number] | null) => r?.map((x) => Number(x.toFixed(4)));

describe('the statistics against published worked examples', () => {
  // Newcombe 1998 (Statistics in Medicine 17:857-872), table II, method 10: the hybrid score interval
  it.each([
    [56, 70, 48, 80, 0.0524, 0.3339],
    [9, 10, 3, 10, 0.1705, 0.809],
    [6, 7, 2, 7, 0.0582, 0.8062],
    [5, 56, 0, 29, -0.0381, 0.1926],
    [0, 10, 0, 20, -0.1611, 0.2775],
    [0, 10, 0, 10, -0.2775, 0.2775],
    [10, 10, 0, 20, 0.6791, 1],
    [10, 10, 0, 10, 0.6075, 1],
  ])('%i/%i − %i/%i: Newcombe method 10 gives %f to %f', (x1, n1, x2, n2, lo, hi) => {
    expect(four(newcombeInterval(x1, n1, x2, n2))).toEqual([lo, hi]);
  });

  // Newcombe 1998 (Statistics in Medicine 17:857-872, the single proportion), table I, method 3: Wilson without correction
  it.each([
    [81, 263, 0.2553, 0.3662],
    [15, 148, 0.0624, 0.1605],
    [0, 20, 0, 0.1611],
    [1, 29, 0.0061, 0.1718],
  ])('%i/%i: the Wilson interval is %f to %f', (x, n, lo, hi) => {
    expect(four(wilsonInterval(x, n))).toEqual([lo, hi]);
  });

  it('an empty period has no interval', () => {
    expect(wilsonInterval(0, 0)).toBeNull();
    expect(newcombeInterval(3, 10, 0, 0)).toBeNull();
    expect(twoProportionP(3, 10, 0, 0)).toBeNull();
  });

  it('the two-sided normal p-value: 1.96 is 5 %, 2.5758 is 1 %, 0 is 1', () => {
    expect(twoSidedP(1.959964)).toBeCloseTo(0.05, 6);
    expect(twoSidedP(-2.575829)).toBeCloseTo(0.01, 6);
    expect(twoSidedP(0)).toBeCloseTo(1, 6);
  });

  it('the pooled two-proportion z-test: 56/70 against 48/80 is z = 2.6500, p = 0.0080', () => {
    // pooled p = 104/150; se = √(p(1−p)(1/70 + 1/80)) = 0.075471; z = 0.2 / se
    expect(twoProportionP(56, 70, 48, 80)).toBeCloseTo(twoSidedP(0.2 / Math.sqrt((104 / 150) * (46 / 150) * (1 / 70 + 1 / 80))), 12);
    expect(Number(twoProportionP(56, 70, 48, 80)!.toFixed(4))).toBe(0.008);
    expect(twoProportionP(0, 10, 0, 20)).toBe(1);
  });

  it('the difference of means: positions 1,2,3 against 2,4 (s² = 1 and 2)', () => {
    const r = meanDifference({ n: 3, sum: 6, sumSq: 14 }, { n: 2, sum: 6, sumSq: 20 })!;
    const se = Math.sqrt(1 / 3 + 2 / 2);
    expect(r.change).toBeCloseTo(-1, 12);
    expect(r.low).toBeCloseTo(-1 - 1.96 * se, 12);
    expect(r.high).toBeCloseTo(-1 + 1.96 * se, 12);
    expect(r.p).toBeCloseTo(twoSidedP(-1 / se), 12);
    expect(meanDifference({ n: 1, sum: 2, sumSq: 4 }, { n: 5, sum: 10, sumSq: 30 })).toBeNull();
  });

  it('verdicts: up above 0, down below, else within noise', () => {
    expect(verdictOf([0.01, 0.2])).toBe('up');
    expect(verdictOf([-0.2, -0.01])).toBe('down');
    expect(verdictOf([-0.1, 0.2])).toBe('within_noise');
    expect(verdictOf(null)).toBe('insufficient_data');
  });
});
