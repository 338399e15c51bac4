import { z } from 'zod';
import { text } from './schemas';

/** The one date parser: `parseToolDate` for MCP filters, `parseFilterDate` for REST; the same string means the same instant on both (rules: docs/analysis.md#dates) */

export type DateSide = 'start' | 'end';
export type DateResult = { ok: true; value: Date } | { ok: false; error: string };
export type DateRangeResult = { ok: true; value: { start: Date | undefined; end: Date | undefined } } | { ok: false; error: string };

const MS_PER_DAY = 86_400_000;
const MONTH_NAMES = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
const WEEKDAY_NAMES = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];

const MONTH_TOKENS: Record<string, number> = {};
MONTH_NAMES.forEach((name, i) => {
  const lower = name.toLowerCase();
  MONTH_TOKENS[lower] = i + 1;
  MONTH_TOKENS[lower.slice(0, 3)] = i + 1;
});
MONTH_TOKENS.sept = 9;

const WEEKDAY_TOKENS: Record<string, number> = {};
WEEKDAY_NAMES.forEach((name, i) => {
  const lower = name.toLowerCase();
  WEEKDAY_TOKENS[lower] = i;
  WEEKDAY_TOKENS[lower.slice(0, 3)] = i;
});
Object.assign(WEEKDAY_TOKENS, { tues: 2, wednes: 3, thur: 4, thurs: 4 });

const EXAMPLES = 'use YYYY-MM-DD (e.g. 2026-03-05), an ISO 8601 timestamp (e.g. 2026-03-05T14:30:00Z) or a spelled-out date (e.g. March 5, 2026)';

const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const ISO_DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?(?:([Zz])|([+-])(\d{2})(?::?(\d{2}))?)?$/;

const RELATIVE_WORDS =
  /\b(now|today|tonight|yesterday|tomorrow|ago|last|next|this|past|previous|prior|recent|recently|earlier|later|since|until|current|week|weeks|weekend|fortnight|days?|hours?|minutes?|seconds?|months?|years?|quarters?|ytd|mtd|qtd|eod|eow|eom|eoy)\b/i;
const RELATIVE_SHORTHAND = /^[+-]?\d+\s*(ms|s|m|h|d|w|y|mo|min|hr|hrs|wk|wks)$/i;
const ISO_DURATION = /^[+-]?P(?=\d|T\d)(\d+Y)?(\d+M)?(\d+W)?(\d+D)?(T(\d+H)?(\d+M)?(\d+(\.\d+)?S)?)?$/i;

const fail = (error: string): DateResult => ({ ok: false, error });
const quote = (s: string) => JSON.stringify(s);

function daysInMonth(year: number, month: number): number {
  return new Date(utcMs(year, month + 1, 0)).getUTCDate();
}

/** Milliseconds for a UTC calendar time; safe for years below 100, which Date.UTC would shift to 19xx. */
function utcMs(year: number, month: number, day: number, h = 0, m = 0, s = 0, ms = 0): number {
  const d = new Date(0);
  d.setUTCFullYear(year, month - 1, day);
  d.setUTCHours(h, m, s, ms);
  return d.getTime();
}

/** Why a calendar date does not exist, or null when it does. */
function impossibleDate(year: number, month: number, day: number): string | null {
  if (year < 1) return `year ${year} is out of range`;
  if (month < 1 || month > 12) return `month ${month} does not exist (months are 01 to 12)`;
  const last = daysInMonth(year, month);
  if (day < 1 || day > last) {
    return `day ${day} does not exist in ${MONTH_NAMES[month - 1]} ${year} (it has ${last} days)`;
  }
  return null;
}

function calendarDay(input: string, year: number, month: number, day: number, side: DateSide): DateResult {
  const why = impossibleDate(year, month, day);
  if (why) return fail(`invalid date ${quote(input)}: ${why}`);
  const start = utcMs(year, month, day);
  return { ok: true, value: new Date(side === 'start' ? start : start + MS_PER_DAY - 1) };
}

/** Plain ISO date or ISO date-time; null when the input has neither shape. */
function parseIso(input: string, side: DateSide, allowDateOnly: boolean): DateResult | null {
  const d = ISO_DATE.exec(input);
  if (d) {
    if (!allowDateOnly) {
      return fail(`invalid date ${quote(input)}: a date-time is required here (e.g. ${input}T00:00:00Z)`);
    }
    return calendarDay(input, Number(d[1]), Number(d[2]), Number(d[3]), side);
  }
  const t = ISO_DATE_TIME.exec(input);
  if (!t) return null;
  const [, y, mo, da, hh, mi, ss, frac, zulu, sign, oh, om] = t;
  const why = impossibleDate(Number(y), Number(mo), Number(da));
  if (why) return fail(`invalid date ${quote(input)}: ${why}`);
  const hour = Number(hh);
  const minute = Number(mi);
  const second = ss === undefined ? 0 : Number(ss);
  if (hour > 23 || minute > 59 || second > 59) {
    return fail(`invalid time in ${quote(input)}: ${hh}:${mi}${ss === undefined ? '' : `:${ss}`} is not a time of day`);
  }
  let offsetMinutes = 0;
  if (!zulu && sign) {
    const offH = Number(oh);
    const offM = om === undefined ? 0 : Number(om);
    if (offH > 23 || offM > 59) return fail(`invalid time zone offset in ${quote(input)}`);
    offsetMinutes = (sign === '-' ? -1 : 1) * (offH * 60 + offM);
  }
  const millis = frac === undefined ? 0 : Number(frac.slice(0, 3).padEnd(3, '0'));
  const ms = utcMs(Number(y), Number(mo), Number(da), hour, minute, second, millis) - offsetMinutes * 60_000;
  return { ok: true, value: new Date(ms) };
}

/** Tokens of a date written with a month name, or null when no month name appears. */
function parseSpelled(input: string, side: DateSide): DateResult | null {
  const tokens = input
    .toLowerCase()
    .replace(/\b(\d{1,2})(st|nd|rd|th)\b/g, '$1')
    .split(/[\s,./-]+/)
    .filter((t) => t !== '' && t !== 'of' && t !== 'the');
  if (!tokens.some((t) => t in MONTH_TOKENS)) return null;

  let weekday: number | undefined;
  if (tokens.length > 0 && tokens[0] in WEEKDAY_TOKENS) weekday = WEEKDAY_TOKENS[tokens.shift()!];

  if (tokens.some((t) => /^\d{1,2}(:\d{2}|am|pm)/.test(t) || ['am', 'pm', 'utc', 'gmt', 'noon', 'midnight'].includes(t))) {
    return fail(`invalid date ${quote(input)}: a spelled-out date cannot carry a time; use an ISO 8601 timestamp such as 2026-03-05T14:30:00Z`);
  }
  const unknown = tokens.find((t) => !(t in MONTH_TOKENS) && !/^\d+$/.test(t));
  if (unknown !== undefined) return fail(`unrecognised date ${quote(input)}: unexpected ${quote(unknown)}; ${EXAMPLES}`);
  if (tokens.filter((t) => t in MONTH_TOKENS).length > 1) return fail(`invalid date ${quote(input)}: more than one month name`);

  const monthAt = tokens.findIndex((t) => t in MONTH_TOKENS);
  const month = MONTH_TOKENS[tokens[monthAt]];
  const numbers = tokens.filter((_, i) => i !== monthAt);
  const years = numbers.filter((n) => n.length === 4);
  const small = numbers.filter((n) => n.length <= 2);

  if (numbers.length === 1 && years.length === 1) {
    return fail(`incomplete date ${quote(input)}: no day of the month; write e.g. ${MONTH_NAMES[month - 1]} 1, ${years[0]}`);
  }
  if (numbers.length === 1 && small.length === 1) {
    return fail(`incomplete date ${quote(input)}: no year; write the four-digit year, e.g. ${MONTH_NAMES[month - 1]} ${Number(small[0])}, 2026`);
  }
  if (numbers.length === 0) return fail(`incomplete date ${quote(input)}: no day and no year`);
  if (numbers.length === 2 && years.length === 0 && small.length === 2) {
    return fail(`ambiguous date ${quote(input)}: the year must have four digits`);
  }
  if (numbers.length !== 2 || years.length !== 1 || small.length !== 1) {
    return fail(`unrecognised date ${quote(input)}: expected a day, a month name and a four-digit year; ${EXAMPLES}`);
  }
  // Accepted orders: month day year, day month year, year month day.
  const yearAt = tokens.indexOf(years[0]);
  const dayAt = tokens.indexOf(small[0]);
  const ok = (monthAt < dayAt && dayAt < yearAt) || (dayAt < monthAt && monthAt < yearAt) || (yearAt < monthAt && monthAt < dayAt);
  if (!ok) return fail(`unrecognised date ${quote(input)}: write month day year, day month year or year month day; ${EXAMPLES}`);

  const year = Number(years[0]);
  const day = Number(small[0]);
  const result = calendarDay(input, year, month, day, side);
  if (result.ok && weekday !== undefined) {
    const actual = new Date(utcMs(year, month, day)).getUTCDay();
    if (actual !== weekday) {
      return fail(
        `invalid date ${quote(input)}: ${MONTH_NAMES[month - 1]} ${day}, ${year} is a ${WEEKDAY_NAMES[actual]}, not a ${WEEKDAY_NAMES[weekday]}`,
      );
    }
  }
  return result;
}

/** A specific reason for a numeric or otherwise unusable shape. */
function explainRejected(input: string): string {
  const q = quote(input);
  if (RELATIVE_SHORTHAND.test(input) || ISO_DURATION.test(input)) {
    return `relative date ${q} is not accepted: durations and offsets are not dates; ${EXAMPLES}`;
  }
  if (RELATIVE_WORDS.test(input)) return `relative date ${q} is not accepted; ${EXAMPLES}`;
  if (/^\d{4}$/.test(input)) return `incomplete date ${q}: a year alone has no month and day; write e.g. ${input}-01-01`;
  if (/^\d{4}[-/.]\d{1,2}$/.test(input))
    return `incomplete date ${q}: no day of the month; write e.g. ${input.slice(0, 4)}-${input.slice(5).padStart(2, '0')}-01`;
  if (/^\d{1,2}[-/.]\d{1,2}$/.test(input)) return `incomplete date ${q}: no year, and day and month order is ambiguous; use YYYY-MM-DD`;
  if (/^\d{1,2}[-/.]\d{1,2}[-/.]\d{2,4}$/.test(input)) {
    return `ambiguous date ${q}: numeric day and month order is unknown; use YYYY-MM-DD or spell out the month`;
  }
  if (/^\d{4}-\d{1,2}-\d{1,2}$/.test(input)) {
    const [y, m, d] = input.split('-');
    return `invalid date ${q}: month and day need two digits; write ${y}-${m.padStart(2, '0')}-${d.padStart(2, '0')}`;
  }
  if (/^\d{4}[/.]\d{1,2}[/.]\d{1,2}$/.test(input)) return `unrecognised date ${q}: numeric dates must be written YYYY-MM-DD`;
  if (/^\d+$/.test(input)) return `unrecognised date ${q}: a bare number is not a date; ${EXAMPLES}`;
  if (/^\d{4}-\d{2}-\d{2}[Tt ]/.test(input)) {
    return `invalid timestamp ${q}: expected an ISO 8601 timestamp with hours and minutes, e.g. 2026-03-05T14:30:00Z`;
  }
  return `unrecognised date ${q}; ${EXAMPLES}`;
}

/** Parses one date input of an MCP tool filter. `side` decides what a day-only value covers. */
export function parseToolDate(input: string, side: DateSide): DateResult {
  if (typeof input !== 'string') return fail('invalid date: expected a string');
  const s = input.trim();
  if (s === '') return fail(`date is empty; ${EXAMPLES}`);
  const iso = parseIso(s, side, true);
  if (iso) return iso;
  if (RELATIVE_WORDS.test(s) || RELATIVE_SHORTHAND.test(s) || ISO_DURATION.test(s)) return fail(explainRejected(s));
  const spelled = parseSpelled(s, side);
  if (spelled) return spelled;
  return fail(explainRejected(s));
}

export interface RangeNames {
  start: string;
  end: string;
}

/** Both sides of a tool filter range; absent sides stay undefined; an end before the start is an error. */
export function parseToolDateRange(
  start?: string | null,
  end?: string | null,
  names: RangeNames = { start: 'start_date', end: 'end_date' },
): DateRangeResult {
  return parseRange(start, end, names, parseToolDate);
}

/** Both sides of a REST filter range (see parseFilterDate). */
export function parseFilterDateRange(
  start?: string | null,
  end?: string | null,
  names: RangeNames = { start: 'start_date', end: 'end_date' },
): DateRangeResult {
  return parseRange(start, end, names, (s, side) => parseFilterDate(s, side));
}

function parseRange(
  start: string | null | undefined,
  end: string | null | undefined,
  names: RangeNames,
  parse: (s: string, side: DateSide) => DateResult,
): DateRangeResult {
  let from: Date | undefined;
  let to: Date | undefined;
  if (start !== undefined && start !== null) {
    const r = parse(start, 'start');
    if (!r.ok) return { ok: false, error: `${names.start}: ${r.error}` };
    from = r.value;
  }
  if (end !== undefined && end !== null) {
    const r = parse(end, 'end');
    if (!r.ok) return { ok: false, error: `${names.end}: ${r.error}` };
    to = r.value;
  }
  if (from && to && to.getTime() < from.getTime()) {
    return {
      ok: false,
      error: `${names.end} (${to.toISOString()}) is before ${names.start} (${from.toISOString()})`,
    };
  }
  return { ok: true, value: { start: from, end: to } };
}

export interface FilterDateOptions {
  /** false where the spec wants a date-time only; default true (metric endpoints take a plain date). */
  allowDateOnly?: boolean;
}

/**
 * Parses a REST filter date: a plain date `YYYY-MM-DD` (an end is inclusive through 23:59:59.999Z)
 * or an ISO 8601 date-time with `Z` or an offset; a date-time without a zone is UTC.
 */
export function parseFilterDate(input: string, side: DateSide, options: FilterDateOptions = {}): DateResult {
  if (typeof input !== 'string') return fail('invalid date: expected a string');
  const s = input.trim();
  const allowDateOnly = options.allowDateOnly ?? true;
  const expected = allowDateOnly
    ? 'expected YYYY-MM-DD or an ISO 8601 date-time such as 2026-03-05T00:00:00Z'
    : 'expected an ISO 8601 date-time such as 2026-03-05T00:00:00Z';
  if (s === '') return fail(`date is empty; ${expected}`);
  const iso = parseIso(s, side, allowDateOnly);
  if (iso) return iso;
  return fail(`invalid date ${quote(s)}: ${expected}`);
}

/** The UTC calendar day of an instant, `YYYY-MM-DD`. */
export function utcDay(date: Date): string {
  const y = date.getUTCFullYear();
  const m = date.getUTCMonth() + 1;
  const d = date.getUTCDate();
  return `${String(y).padStart(4, '0')}-${String(m).padStart(2, '0')}-${String(d).padStart(2, '0')}`;
}

function dateSchema(parse: (s: string) => DateResult) {
  return text().transform((s, ctx) => {
    const r = parse(s);
    if (r.ok) return r.value;
    ctx.addIssue({ code: 'custom', message: r.error, input: s });
    return z.NEVER;
  });
}

/** Zod schema of one tool-filter date side: a string in, a Date out, the parser's message on error. */
export const toolDateSchema = (side: DateSide) =>
  dateSchema((s) => parseToolDate(s, side)).describe(
    `${side === 'start' ? 'Start of the range' : 'End of the range'}: YYYY-MM-DD (${side === 'start' ? 'from 00:00:00Z' : 'through 23:59:59.999Z'}), an ISO 8601 timestamp (no zone = UTC) or a spelled-out date such as "March 5, 2026"; relative words and ambiguous numeric dates are refused`,
  );

/** Zod schema of one REST filter date side. */
export const filterDateSchema = (side: DateSide, options: FilterDateOptions = {}) =>
  dateSchema((s) => parseFilterDate(s, side, options)).describe(
    `${side === 'start' ? 'Start of the range' : 'End of the range'}: ` +
      (options.allowDateOnly === false
        ? 'an ISO 8601 date-time (no zone = UTC)'
        : `YYYY-MM-DD (${side === 'start' ? 'from 00:00:00Z' : 'inclusive, through 23:59:59.999Z'}) or an ISO 8601 date-time (no zone = UTC)`),
  );

/** A UTC day as `YYYY-MM-DD` kept as text (crawler periods, reports); an impossible day (2026-02-30) is refused. */
export const PlainDay = text('must be a date YYYY-MM-DD')
  .regex(/^\d{4}-\d{2}-\d{2}$/, 'must be a date YYYY-MM-DD')
  .refine((d) => !Number.isNaN(Date.parse(`${d}T00:00:00Z`)) && new Date(`${d}T00:00:00Z`).toISOString().startsWith(d), 'must be a date YYYY-MM-DD');
