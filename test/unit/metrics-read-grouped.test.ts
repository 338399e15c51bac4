import type { Knex } from 'knex';
import { describe, expect, it } from 'vitest';
import { readForMetricsGrouped } from '../../queries/metrics/request';

const SITE = '00000000-0000-4000-8000-0000000000a1';
const OTHER = '00000000-0000-4000-8000-0000000000a2';

/** A database whose statements answer only when the test says so; each records its text, bindings and a snapshot number. */
function heldDatabase() {
  let snapshot = 0;
  const statements: { sql: string; bindings: unknown[]; snapshot: number; answer: () => void }[] = [];
  const db = {
    raw(sql: string, bindings: unknown[]) {
      return new Promise((resolve) => {
        const s = { sql, bindings, snapshot: ++snapshot, answer: (): void => undefined };
        s.answer = () =>
          resolve({
            rows: [
              {
                website: { organization_id: 'o', status: 'active' },
                stale: false,
                prompts: [],
                entities: [],
                site: null,
                locations: sql.includes('as locations') ? [`snapshot ${s.snapshot}`] : undefined,
                competitors: sql.includes('as competitors') ? [] : undefined,
              },
            ],
          });
        statements.push(s);
      });
    },
  } as unknown as Knex;
  return { db, statements };
}

const flush = () => new Promise<void>((resolve) => setImmediate(resolve));
const none = { locations: false, competitors: false, schedule: null };

describe('readForMetricsGrouped', () => {
  it('given requests arriving while their website statement runs, then they share the next one, started after they arrived', async () => {
    const { db, statements } = heldDatabase();
    const first = readForMetricsGrouped(db, SITE, none, ['answers']);
    await flush();
    expect(statements).toHaveLength(1);
    // arriving while the first statement runs: they must not be answered from it (it may predate a write they saw)
    const second = readForMetricsGrouped(db, SITE, { ...none, locations: true }, ['answers']);
    const third = readForMetricsGrouped(db, SITE, { ...none, competitors: true }, ['answers']);
    const other = readForMetricsGrouped(db, OTHER, none, ['answers']);
    await flush();
    expect(statements).toHaveLength(2); // the first, and the other website's own
    statements[0].answer();
    expect((await first).catalogue.locations).toBeNull();
    await flush();
    expect(statements).toHaveLength(3);
    // one statement for both, asking for every part either needs
    expect(statements[2].sql).toContain('as locations');
    expect(statements[2].sql).toContain('as competitors');
    statements[2].answer();
    const [a, b] = await Promise.all([second, third]);
    expect(a.catalogue.locations).toEqual([`snapshot ${statements[2].snapshot}`]);
    expect(b).toBe(a);
    statements[1].answer();
    expect((await other).website?.status).toBe('active');
    // nothing running: the next request starts its own statement at once
    const later = readForMetricsGrouped(db, SITE, none, ['answers']);
    await flush();
    expect(statements).toHaveLength(4);
    statements[3].answer();
    await later;
  });

  it('given another schedule, then the requests do not share a statement', async () => {
    const { db, statements } = heldDatabase();
    const a = readForMetricsGrouped(db, SITE, none, ['answers']);
    const b = readForMetricsGrouped(db, SITE, { ...none, schedule: '00000000-0000-4000-8000-0000000000b1' }, ['answers']);
    await flush();
    expect(statements).toHaveLength(2);
    expect(statements[1].bindings).toContain('00000000-0000-4000-8000-0000000000b1');
    for (const s of statements) s.answer();
    await Promise.all([a, b]);
  });
});
