/** How the shopping blocks read and round numbers (Postgres may hand a count or a sum over as a string). */

export const round2 = (x: number) => Math.round((x + Number.EPSILON) * 100) / 100;
/** A percentage 0..100 with two decimals; 0 over an empty set. */
export const rate = (n: number, d: number) => (d === 0 ? 0 : round2((100 * n) / d));
/** An average with two decimals; null over an empty set. */
export const mean = (sum: number, n: number) => (n === 0 ? null : round2(sum / n));
/** A count or a sum: 0 when absent. */
export const num = (v: unknown) => (v === null || v === undefined ? 0 : Number(v));
/** A price with two decimals. */
export const price = (v: unknown) => round2(Number(v));

/** A json column as the driver hands it: parsed already (pg, PGlite) or text. */
export const json = <T>(v: unknown): T[] => (typeof v === 'string' ? JSON.parse(v) : (v ?? [])) as T[];

export const byName = (a: { name: string }, b: { name: string }) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
/** Most cards first, then by currency code. */
export const byCards =
  <T extends { currency: string }>(n: (r: T) => number) =>
  (a: T, b: T) =>
    n(b) - n(a) || (a.currency < b.currency ? -1 : a.currency > b.currency ? 1 : 0);
