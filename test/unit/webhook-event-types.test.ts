import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { WEBHOOK_EVENT_TYPES_LIST } from '../../commands/webhooks/event-types';

describe('webhook event types', () => {
  it('given every feed entry an area manifest writes with literal words, then a webhook can subscribe to it', () => {
    const dir = join(__dirname, '../../src/areas');
    const found = new Set<string>();
    for (const f of readdirSync(dir)) {
      for (const m of readFileSync(join(dir, f), 'utf8').matchAll(/entry\('([a-z_]+)', '([a-z_]+)'/g)) found.add(`${m[1]}.${m[2]}`);
    }
    expect(found.size).toBeGreaterThan(50);
    const listed = new Set<string>(WEBHOOK_EVENT_TYPES_LIST);
    expect([...found].filter((t) => !listed.has(t))).toEqual([]);
  });
});
