/** The statistics of the period comparison and stability reads (CONTRACT "Signal, not noise"); proportions in 0..1. */

export const Z95 = 1.959964;

/** 95% Wilson score interval of x successes in n (no continuity correction); null for n = 0. */
export function wilsonInterval(x: number, n: number, z = Z95): [number, number] | null {
  if (n === 0) return null;
  const p = x / n;
  const z2 = z * z;
  const denom = 1 + z2 / n;
  const center = (p + z2 / (2 * n)) / denom;
  const half = (z * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n))) / denom;
  return [Math.max(0, center - half), Math.min(1, center + half)];
}

/** Newcombe's hybrid score interval (1998, method 10) of p1 − p2 from the two Wilson intervals; null when a period is empty. */
export function newcombeInterval(x1: number, n1: number, x2: number, n2: number): [number, number] | null {
  const w1 = wilsonInterval(x1, n1);
  const w2 = wilsonInterval(x2, n2);
  if (!w1 || !w2) return null;
  const p1 = x1 / n1;
  const p2 = x2 / n2;
  const d = p1 - p2;
  const lower = d - Math.sqrt((p1 - w1[0]) ** 2 + (w2[1] - p2) ** 2);
  const upper = d + Math.sqrt((w1[1] - p1) ** 2 + (p2 - w2[0]) ** 2);
  return [Math.max(-1, lower), Math.min(1, upper)];
}

/** erfc with fractional error below 1.2e-7 (Chebyshev fit, Numerical Recipes 6.2). */
function erfc(x: number): number {
  const z = Math.abs(x);
  const t = 1 / (1 + 0.5 * z);
  const r =
    t *
    Math.exp(
      -z * z -
        1.26551223 +
        t *
          (1.00002368 +
            t *
              (0.37409196 +
                t * (0.09678418 + t * (-0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277)))))))),
    );
  return x >= 0 ? r : 2 - r;
}

/** Two-sided p-value of a standard normal statistic. */
export function twoSidedP(z: number): number {
  if (!Number.isFinite(z)) return 0;
  return Math.min(1, erfc(Math.abs(z) / Math.SQRT2));
}

/** Two-sided two-proportion z-test with pooled variance; 1 when the pooled variance is 0 (both periods alike, all or none). */
export function twoProportionP(x1: number, n1: number, x2: number, n2: number): number | null {
  if (n1 === 0 || n2 === 0) return null;
  const pooled = (x1 + x2) / (n1 + n2);
  const se = Math.sqrt(pooled * (1 - pooled) * (1 / n1 + 1 / n2));
  if (se === 0) return 1;
  return twoSidedP((x1 / n1 - x2 / n2) / se);
}

/** A sample of positions: how many, their sum and sum of squares. */
export interface Moments {
  n: number;
  sum: number;
  sumSq: number;
}

const variance = (m: Moments) => {
  const mean = m.sum / m.n;
  return Math.max(0, (m.sumSq - m.n * mean * mean) / (m.n - 1));
};

/** Difference of two means with the normal approximation: ±1.96 × √(s₁²/n₁ + s₂²/n₂); null below 2 values on a side. */
export function meanDifference(a: Moments, b: Moments): { change: number; low: number; high: number; p: number } | null {
  if (a.n < 2 || b.n < 2) return null;
  const change = a.sum / a.n - b.sum / b.n;
  const se = Math.sqrt(variance(a) / a.n + variance(b) / b.n);
  const half = 1.96 * se;
  const p = se === 0 ? (change === 0 ? 1 : 0) : twoSidedP(change / se);
  return { change, low: change - half, high: change + half, p };
}

export type Verdict = 'up' | 'down' | 'within_noise' | 'insufficient_data';

export const verdictOf = (interval: [number, number] | null): Verdict =>
  interval === null ? 'insufficient_data' : interval[0] > 0 ? 'up' : interval[1] < 0 ? 'down' : 'within_noise';

export const round2 = (x: number) => Math.round(x * 100) / 100;
export const round4 = (x: number) => Math.round(x * 10_000) / 10_000;
