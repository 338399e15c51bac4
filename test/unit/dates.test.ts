import { describe, expect, it } from 'vitest';
import {
  filterDateSchema,
  parseFilterDate,
  parseFilterDateRange,
  parseToolDate,
  parseToolDateRange,
  toolDateSchema,
  utcDay,
  type DateSide,
} from '../../src/domain/dates';

const accepted = (input: string, side: DateSide, iso: string) => ({ input, side, iso });
const rejected = (input: string, error: RegExp) => ({ input, error });

describe('parseToolDate', () => {
  describe('given an accepted input, when parsed, then it is that instant', () => {
    it.each([
      // date-only: midnight at the start, the whole UTC day at the end
      accepted('2026-03-05', 'start', '2026-03-05T00:00:00.000Z'),
      accepted('2026-03-05', 'end', '2026-03-05T23:59:59.999Z'),
      accepted('  2026-03-05  ', 'start', '2026-03-05T00:00:00.000Z'),
      accepted('2024-02-29', 'end', '2024-02-29T23:59:59.999Z'),
      accepted('2026-12-31', 'end', '2026-12-31T23:59:59.999Z'),
      accepted('0099-01-01', 'start', '0099-01-01T00:00:00.000Z'),
      // ISO timestamps: zone honoured, none = UTC, exact at both sides
      accepted('2026-03-05T14:30:00Z', 'start', '2026-03-05T14:30:00.000Z'),
      accepted('2026-03-05T14:30:00Z', 'end', '2026-03-05T14:30:00.000Z'),
      accepted('2026-03-05T14:30:00.123Z', 'start', '2026-03-05T14:30:00.123Z'),
      accepted('2026-03-05T14:30:00.123456789Z', 'start', '2026-03-05T14:30:00.123Z'),
      accepted('2026-03-05T14:30:00.5Z', 'start', '2026-03-05T14:30:00.500Z'),
      accepted('2026-03-05T14:30:00,5Z', 'start', '2026-03-05T14:30:00.500Z'),
      accepted('2026-03-05T14:30:00', 'start', '2026-03-05T14:30:00.000Z'),
      accepted('2026-03-05T14:30', 'end', '2026-03-05T14:30:00.000Z'),
      accepted('2026-03-05 14:30:00', 'start', '2026-03-05T14:30:00.000Z'),
      accepted('2026-03-05t14:30:00z', 'start', '2026-03-05T14:30:00.000Z'),
      accepted('2026-03-05T14:30:00+02:00', 'start', '2026-03-05T12:30:00.000Z'),
      accepted('2026-03-05T14:30:00+0200', 'start', '2026-03-05T12:30:00.000Z'),
      accepted('2026-03-05T14:30:00+02', 'start', '2026-03-05T12:30:00.000Z'),
      accepted('2026-03-05T01:00:00-05:30', 'start', '2026-03-05T06:30:00.000Z'),
      accepted('2026-03-05T23:00:00-02:00', 'start', '2026-03-06T01:00:00.000Z'),
      accepted('2026-03-05T00:00:00+00:00', 'end', '2026-03-05T00:00:00.000Z'),
      // spelled-out months behave like a plain date
      accepted('March 5, 2026', 'start', '2026-03-05T00:00:00.000Z'),
      accepted('March 5, 2026', 'end', '2026-03-05T23:59:59.999Z'),
      accepted('March 5 2026', 'start', '2026-03-05T00:00:00.000Z'),
      accepted('march 05, 2026', 'start', '2026-03-05T00:00:00.000Z'),
      accepted('MARCH 5, 2026', 'start', '2026-03-05T00:00:00.000Z'),
      accepted('5 March 2026', 'start', '2026-03-05T00:00:00.000Z'),
      accepted('5 March, 2026', 'end', '2026-03-05T23:59:59.999Z'),
      accepted('Mar 5 2026', 'start', '2026-03-05T00:00:00.000Z'),
      accepted('Mar. 5, 2026', 'start', '2026-03-05T00:00:00.000Z'),
      accepted('5-Mar-2026', 'start', '2026-03-05T00:00:00.000Z'),
      accepted('05 Mar 2026', 'start', '2026-03-05T00:00:00.000Z'),
      accepted('2026 March 5', 'start', '2026-03-05T00:00:00.000Z'),
      accepted('2026-Mar-05', 'start', '2026-03-05T00:00:00.000Z'),
      accepted('March 5th, 2026', 'start', '2026-03-05T00:00:00.000Z'),
      accepted('1st January 2026', 'start', '2026-01-01T00:00:00.000Z'),
      accepted('the 2nd of February 2026', 'start', '2026-02-02T00:00:00.000Z'),
      accepted('23rd Sept 2026', 'start', '2026-09-23T00:00:00.000Z'),
      accepted('Sep 23, 2026', 'start', '2026-09-23T00:00:00.000Z'),
      accepted('Thursday, March 5, 2026', 'start', '2026-03-05T00:00:00.000Z'),
      accepted('Thu 5 Mar 2026', 'end', '2026-03-05T23:59:59.999Z'),
      accepted('May 1, 2026', 'start', '2026-05-01T00:00:00.000Z'),
      accepted('February 29, 2024', 'start', '2024-02-29T00:00:00.000Z'),
      accepted('December 31, 2026', 'end', '2026-12-31T23:59:59.999Z'),
    ])('$input as $side -> $iso', ({ input, side, iso }) => {
      const r = parseToolDate(input, side);
      expect(r).toEqual({ ok: true, value: new Date(iso) });
    });
  });

  describe('given an unusable input, when parsed, then a validation error names the problem', () => {
    it.each([
      // empty
      rejected('', /empty/),
      rejected('   ', /empty/),
      // relative words
      rejected('now', /relative date "now"/),
      rejected('today', /relative date "today"/),
      rejected('Today', /relative date/),
      rejected('yesterday', /relative date "yesterday"/),
      rejected('tomorrow', /relative/),
      rejected('last week', /relative date "last week"/),
      rejected('last month', /relative/),
      rejected('this year', /relative/),
      rejected('next Monday', /relative/),
      rejected('3 days ago', /relative date "3 days ago"/),
      rejected('2 weeks ago', /relative/),
      rejected('past 30 days', /relative/),
      rejected('7d', /relative.*durations/),
      rejected('-24h', /relative/),
      rejected('P7D', /relative.*durations/),
      rejected('since March 5, 2026', /relative/),
      // incomplete
      rejected('2026', /incomplete date "2026": a year alone/),
      rejected('2026-03', /incomplete date "2026-03": no day of the month/),
      rejected('2026/3', /incomplete date.*no day/),
      rejected('March 2026', /incomplete date "March 2026": no day of the month/),
      rejected('Mar 2026', /incomplete.*no day/),
      rejected('March 5', /incomplete date "March 5": no year/),
      rejected('5 March', /incomplete.*no year/),
      rejected('March', /incomplete.*no day and no year/),
      rejected('03/04', /incomplete.*no year/),
      rejected('2026-03-05T', /invalid timestamp/),
      rejected('2026-03-05T14', /invalid timestamp/),
      // ambiguous numeric dates
      rejected('03/04/2026', /ambiguous date "03\/04\/2026"/),
      rejected('3/4/26', /ambiguous date/),
      rejected('04-03-2026', /ambiguous date/),
      rejected('04.03.2026', /ambiguous date/),
      rejected('13/04/2026', /ambiguous date/),
      rejected('March 5, 26', /ambiguous date.*four digits/),
      rejected('5 3 2026', /ambiguous|unrecognised/),
      // other numeric shapes
      rejected('2026/03/05', /YYYY-MM-DD/),
      rejected('2026-3-5', /two digits; write 2026-03-05/),
      rejected('20260305', /bare number/),
      rejected('1741132800', /bare number/),
      // impossible dates
      rejected('2026-02-30', /invalid date "2026-02-30": day 30 does not exist in February 2026 \(it has 28 days\)/),
      rejected('2026-02-29', /day 29 does not exist in February 2026/),
      rejected('2026-04-31', /day 31 does not exist in April/),
      rejected('2026-13-01', /month 13 does not exist/),
      rejected('2026-00-10', /month 0 does not exist/),
      rejected('2026-03-00', /day 0 does not exist/),
      rejected('0000-01-01', /year 0 is out of range/),
      rejected('February 30, 2026', /day 30 does not exist in February 2026/),
      rejected('2026-02-30T10:00:00Z', /day 30 does not exist/),
      rejected('2026-03-05T24:00:00Z', /not a time of day/),
      rejected('2026-03-05T12:60:00Z', /not a time of day/),
      rejected('2026-03-05T12:00:60Z', /not a time of day/),
      rejected('2026-03-05T12:00:00+25:00', /time zone offset/),
      // spelled-out oddities
      rejected('Monday, March 5, 2026', /March 5, 2026 is a Thursday, not a Monday/),
      rejected('March 5, 2026 10:00', /cannot carry a time/),
      rejected('March 5, 2026 3pm', /cannot carry a time/),
      rejected('March April 5 2026', /more than one month/),
      rejected('March 5 of 2026 foo', /unexpected "foo"/),
      rejected('5 2026 March', /write month day year/),
      // noise
      rejected('soon', /unrecognised date "soon"/),
      rejected('not a date', /unrecognised/),
    ])('$input -> $error', ({ input, error }) => {
      for (const side of ['start', 'end'] as const) {
        const r = parseToolDate(input, side);
        expect(r.ok).toBe(false);
        if (!r.ok) expect(r.error).toMatch(error);
      }
    });
  });
});

describe('parseToolDateRange', () => {
  it.each([
    {
      when: 'both sides are the same plain day',
      start: '2026-03-05',
      end: '2026-03-05',
      then: { start: '2026-03-05T00:00:00.000Z', end: '2026-03-05T23:59:59.999Z' },
    },
    {
      when: 'mixed forms',
      start: 'March 1, 2026',
      end: '2026-03-05T12:00:00+01:00',
      then: { start: '2026-03-01T00:00:00.000Z', end: '2026-03-05T11:00:00.000Z' },
    },
    { when: 'only a start', start: '2026-03-05', end: undefined, then: { start: '2026-03-05T00:00:00.000Z', end: undefined } },
    { when: 'only an end', start: undefined, end: '5 March 2026', then: { start: undefined, end: '2026-03-05T23:59:59.999Z' } },
    { when: 'null sides', start: null, end: null, then: { start: undefined, end: undefined } },
    {
      when: 'the end equals the start',
      start: '2026-03-05T10:00:00Z',
      end: '2026-03-05T10:00:00Z',
      then: { start: '2026-03-05T10:00:00.000Z', end: '2026-03-05T10:00:00.000Z' },
    },
  ])('given $when, then the range is accepted', ({ start, end, then }) => {
    const r = parseToolDateRange(start, end);
    expect(r).toEqual({
      ok: true,
      value: {
        start: then.start === undefined ? undefined : new Date(then.start),
        end: then.end === undefined ? undefined : new Date(then.end),
      },
    });
  });

  it.each([
    {
      when: 'the end is before the start',
      start: '2026-03-05',
      end: '2026-03-04',
      error: /^end_date \(2026-03-04T23:59:59\.999Z\) is before start_date \(2026-03-05T00:00:00\.000Z\)$/,
    },
    {
      when: 'the end instant precedes the start instant on one day',
      start: '2026-03-05T10:00:00Z',
      end: '2026-03-05T09:59:59Z',
      error: /end_date .* is before start_date/,
    },
    { when: 'a bad start', start: 'yesterday', end: '2026-03-05', error: /^start_date: relative date "yesterday"/ },
    { when: 'a bad end', start: '2026-03-05', end: '2026-03', error: /^end_date: incomplete date "2026-03"/ },
  ])('given $when, then a validation error', ({ start, end, error }) => {
    const r = parseToolDateRange(start, end);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error).toMatch(error);
  });

  it('given custom field names, then errors use them', () => {
    const r = parseToolDateRange('2026-03-05', '2026-03-01', { start: 'start_at_utc', end: 'end_at_utc' });
    expect(r).toEqual({ ok: false, error: expect.stringMatching(/^end_at_utc .* is before start_at_utc/) });
  });
});

describe('parseFilterDate', () => {
  it.each([
    accepted('2026-03-05', 'start', '2026-03-05T00:00:00.000Z'),
    accepted('2026-03-05', 'end', '2026-03-05T23:59:59.999Z'),
    accepted('2026-03-05T00:00:00Z', 'end', '2026-03-05T00:00:00.000Z'),
    accepted('2026-03-05T10:15:30.250Z', 'start', '2026-03-05T10:15:30.250Z'),
    accepted('2026-03-05T10:15:30+05:00', 'start', '2026-03-05T05:15:30.000Z'),
    accepted('2026-03-05T10:15:30-0800', 'end', '2026-03-05T18:15:30.000Z'),
    accepted('2026-03-05T10:15:30', 'start', '2026-03-05T10:15:30.000Z'),
  ])('given $input as $side, then $iso', ({ input, side, iso }) => {
    expect(parseFilterDate(input, side)).toEqual({ ok: true, value: new Date(iso) });
  });

  it.each([
    rejected('March 5, 2026', /invalid date "March 5, 2026": expected YYYY-MM-DD or an ISO 8601 date-time/),
    rejected('today', /expected YYYY-MM-DD/),
    rejected('03/04/2026', /expected YYYY-MM-DD/),
    rejected('2026-03', /expected YYYY-MM-DD/),
    rejected('2026-02-30', /day 30 does not exist in February 2026/),
    rejected('2026-03-05T25:00:00Z', /not a time of day/),
    rejected('', /empty/),
  ])('given $input, then $error', ({ input, error }) => {
    const r = parseFilterDate(input, 'start');
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error).toMatch(error);
  });

  it('given a plain date where a date-time is required, then an error says so', () => {
    const r = parseFilterDate('2026-03-05', 'start', { allowDateOnly: false });
    expect(r).toEqual({ ok: false, error: expect.stringMatching(/date-time is required/) });
    expect(parseFilterDate('2026-03-05T00:00:00Z', 'start', { allowDateOnly: false }).ok).toBe(true);
  });

  it('given a REST range with the end before the start, then an error', () => {
    expect(parseFilterDateRange('2026-03-05', '2026-03-04')).toEqual({
      ok: false,
      error: 'end_date (2026-03-04T23:59:59.999Z) is before start_date (2026-03-05T00:00:00.000Z)',
    });
    expect(parseFilterDateRange('2026-03-05', '2026-03-05').ok).toBe(true);
  });
});

describe('utcDay', () => {
  it.each([
    { iso: '2026-03-05T00:00:00.000Z', day: '2026-03-05' },
    { iso: '2026-03-05T23:59:59.999Z', day: '2026-03-05' },
    { iso: '2026-03-05T23:30:00-02:00', day: '2026-03-06' },
    { iso: '2026-01-01T00:30:00+01:00', day: '2025-12-31' },
  ])('given $iso, then $day', ({ iso, day }) => {
    expect(utcDay(new Date(iso))).toBe(day);
  });
});

describe('zod schemas', () => {
  it('given a valid tool date, then a Date; given an invalid one, then the parser message', () => {
    expect(toolDateSchema('end').parse('March 5, 2026')).toEqual(new Date('2026-03-05T23:59:59.999Z'));
    const r = toolDateSchema('start').safeParse('last week');
    expect(r.success).toBe(false);
    if (!r.success) expect(r.error.issues[0].message).toMatch(/relative date "last week"/);
    expect(filterDateSchema('end').parse('2026-03-05')).toEqual(new Date('2026-03-05T23:59:59.999Z'));
    expect(filterDateSchema('start').safeParse('March 5, 2026').success).toBe(false);
  });
});
