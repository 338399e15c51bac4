import { afterAll, beforeAll, expect, it } from 'vitest';
import { call, type TestServer } from '../support/server';
import { until } from '../support/until';
import { type DemoStart, startDemo } from '../support/demo';

/**
 * A newcomer's first start: the demo website shows a computed AI search value once its history is written. Embedded
 * (PGlite, the in-process bus) as `npm start` runs it with no configuration, whatever DATABASE_URL says.
 */
let d: DemoStart;
let s: TestServer;
let key: string;
let demo: string;

beforeAll(async () => {
  // the scheduler's pass is off in tests: what computes the value here is the demo's own request
  d = await startDemo('aivis-demo-value-', undefined, { embedded: true });
  ({ s, key, demo } = d);
}, 170_000);
afterAll(() => d?.close());

it('given a first embedded start, then the demo website gets a computed AI search value, priced, as bands', async () => {
  const v = await until(
    'the demo value',
    async () => {
      const r = await call(s, 'GET', '/api/v1/ai-search-value', { key, query: { website_id: demo } });
      return r.status === 200 && r.body.has_computed_valuations ? r.body : undefined;
    },
    230_000,
    500,
  );
  expect(s.rt.database.kind).toBe('pglite');
  expect(v.is_stale_value).toBe(false);
  expect(v.measured_responses).toBeGreaterThanOrEqual(50);
  expect(v.market.value_usd_mo).toBeGreaterThan(0);
  expect(v.market.topics_total).toBe(3);
  expect(v.captured.conservative).toBeLessThan(v.captured.upside);
  expect(v.topics.map((t: { category: string }) => t.category)).toEqual(['software', 'software', 'software']);
}, 240_000);
