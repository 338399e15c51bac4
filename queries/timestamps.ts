/** A timestamp column as the API answers it, an ISO 8601 string in UTC (the driver gives a Date, PGlite or json a string; a number is epoch milliseconds). */
export const iso = (d: Date | string | number): string => new Date(d).toISOString();

/** A nullable timestamp column as the API answers it: null stays null. */
export const isoOrNull = (d: Date | string | null | undefined): string | null => (d === null || d === undefined ? null : iso(d));
