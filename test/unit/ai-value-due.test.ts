import { describe, expect, it } from 'vitest';
import { DEBOUNCE_MS, dueReason } from '../../src/workers/ai-value';

// When the AI search value is computed (docs/VALUATION.md, section 7): after new answers, debounced; after a change
// of economics, once per change; daily, when the last computation is from an earlier UTC day.
const NOW = new Date('2026-11-25T12:00:30.000Z');
const minutesAgo = (m: number) => new Date(NOW.getTime() - m * 60_000);
const row = (r: Partial<Parameters<typeof dueReason>[0]> = {}): Parameters<typeof dueReason>[0] => ({
  website_id: 'w',
  organization_id: 'o',
  requested_at: null,
  economics_changed_at: null,
  checked_at: null,
  facts_version: null,
  facts_now: null,
  ...r,
});

describe('when the AI search value is due', () => {
  it('given answers never valued, then it is due for the answers, in the current debounce slot', () => {
    expect(dueReason(row({ facts_now: '3' }), NOW)).toEqual({ reason: 'answers', slot: `at-${Math.floor(NOW.getTime() / DEBOUNCE_MS)}` });
    // a website with no answer at all is not
    expect(dueReason(row({ facts_now: '0' }), NOW)).toBeNull();
    expect(dueReason(row(), NOW)).toBeNull();
  });

  it('given new answers since the last computation, then it is due, but not within 2 minutes of the last request (debounced)', () => {
    const moved = { checked_at: minutesAgo(5), facts_version: '7', facts_now: '8' };
    expect(dueReason(row({ ...moved, requested_at: minutesAgo(1) }), NOW)).toBeNull();
    expect(dueReason(row({ ...moved, requested_at: minutesAgo(3) }), NOW)).toMatchObject({ reason: 'answers' });
    // two instances asking in the same 2 minutes name the same job slot
    const later = new Date(NOW.getTime() + 1000);
    expect(dueReason(row({ ...moved, requested_at: minutesAgo(3) }), later)!.slot).toBe(
      dueReason(row({ ...moved, requested_at: minutesAgo(3) }), NOW)!.slot,
    );
  });

  it('given nothing new and a computation from today, then it is not due', () => {
    expect(dueReason(row({ checked_at: minutesAgo(60), facts_version: '8', facts_now: '8', requested_at: minutesAgo(60) }), NOW)).toBeNull();
  });

  it('given nothing new and a computation from an earlier UTC day, then it is due daily, once for the day', () => {
    const yesterday = new Date('2026-11-24T23:59:00.000Z');
    expect(dueReason(row({ checked_at: yesterday, facts_version: '8', facts_now: '8', requested_at: yesterday }), NOW)).toEqual({
      reason: 'daily',
      slot: 'day-2026-11-25',
    });
  });

  it('given economics changed after the last computation, then it is due at once (not debounced), one job per change', () => {
    const changed = minutesAgo(0.5);
    const r = row({ checked_at: minutesAgo(1), requested_at: minutesAgo(0.2), economics_changed_at: changed, facts_version: '8', facts_now: '8' });
    expect(dueReason(r, NOW)).toEqual({ reason: 'economics', slot: `economics-${changed.getTime()}` });
    // computed since: not again
    expect(dueReason({ ...r, checked_at: minutesAgo(0.1) }, NOW)).toBeNull();
  });
});
