import { describe, expect, it } from 'vitest';
import { blocksOf, cardsCte, scope, statement, wholeWordPattern } from '../../../queries/shopping/sql';
import type { ShoppingSelection } from '../../../queries/shopping/types';

const selection: ShoppingSelection = {
  websiteId: 'w1',
  scheduleId: null,
  models: ['chatgpt-shopping'],
  promptIds: ['p1', 'p2'],
  topProductsLimit: 5,
};

describe('shopping sql: one statement over the selected cards', () => {
  it('given identifiers, then one case-insensitive whole-word pattern, regex characters escaped and spaces matching any whitespace', () => {
    expect(wholeWordPattern(['Acme', ' Acme Pro+ ', ''])).toBe('(^|[^[:alnum:]_])(Acme|Acme\\s+Pro\\+)($|[^[:alnum:]_])');
  });

  it('given the default schedule and no range, then the scope selects schedule null, the prompts and the models, bound in order', () => {
    const q = scope('p', selection);
    expect(q.sql).toBe('p.website_id = ? and p.schedule_id is null and p.prompt_id = any(?::uuid[]) and p.model = any(?::text[])');
    expect(q.bindings).toEqual(['w1', ['p1', 'p2'], ['chatgpt-shopping']]);
  });

  it('given a schedule and a range, then both are bound after the website', () => {
    const start = new Date('2026-01-01T00:00:00Z');
    const end = new Date('2026-01-31T23:59:59Z');
    const q = scope('r', { ...selection, scheduleId: 's1', start, end });
    expect(q.sql).toContain('r.schedule_id = ?::uuid');
    expect(q.sql).toMatch(/r\.run_at >= \? and r\.run_at <= \?$/);
    expect(q.bindings).toEqual(['w1', 's1', ['p1', 'p2'], ['chatgpt-shopping'], start, end]);
  });

  it('given target identifiers, then a brand card is own only when its name or brand holds one; without, every brand card is own', () => {
    const withTargets = cardsCte({ ...selection, targetIdentifiers: ['Acme'] }, ['c1']);
    expect(withTargets.sql).toContain("when p.is_own and (p.name ~* ? or coalesce(p.brand, '') ~* ?) then 'own'");
    expect(withTargets.bindings.slice(0, 3)).toEqual([wholeWordPattern(['Acme']), wholeWordPattern(['Acme']), ['c1']]);
    const without = cardsCte({ ...selection, targetIdentifiers: ['  '] }, []);
    expect(without.sql).toContain("when p.is_own and true then 'own'");
    expect(without.bindings[0]).toEqual([]);
  });

  it('given a selection, then the statement has one placeholder per binding, the top-products limit last', () => {
    const q = statement({ ...selection, scheduleId: 's1', start: new Date() }, ['c1', 'c2']);
    expect((q.sql.match(/\?/g) ?? []).length).toBe(q.bindings.length);
    expect(q.bindings.at(-1)).toBe(5);
    // the statement names every block the row is read by
    const blocks = Object.keys(blocksOf({}));
    expect(blocks).toHaveLength(10);
    for (const block of blocks) expect(q.sql).toContain(`as ${block}`);
  });

  it('given the row as the driver hands it (json parsed, json as text, a block missing), then every block is a list', () => {
    const b = blocksOf({ answer_days: [{ day: '2026-01-01', answers: 3 }], merchants: '[{"merchant_key":"m"}]', top: null });
    expect(b.answer_days).toEqual([{ day: '2026-01-01', answers: 3 }]);
    expect(b.merchants).toEqual([{ merchant_key: 'm' }]);
    expect(b.top).toEqual([]);
    expect(b.prices).toEqual([]);
  });
});
