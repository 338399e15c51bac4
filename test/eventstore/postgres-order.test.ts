import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { START } from '../../src/eventstore/port';
import { useFreshStore, type TestStore } from '../support/db';
import { testMetadata } from '../support/events';

// Transaction ids must order as numbers: as text, '10' sorts before '9' and a catch-up reader would re-read or skip.
describe('Postgres event store ordering', () => {
  let t: TestStore;
  useFreshStore((x) => (t = x));

  it('given events whose transaction ids straddle a power of ten, then catch-up reads them in numeric order, once each', async () => {
    const ids = [randomUUID(), randomUUID(), randomUUID()];
    // txids 9, 10 and 100 are long finished on any cluster, so all three are below the xmin horizon
    for (const [i, txid] of [9, 10, 100].entries()) {
      await t.db('aivis_events').insert({
        txid,
        stream_id: `order-${i}`,
        revision: 0,
        event_id: ids[i],
        type: 'ApiKeyRevoked',
        data: { api_key_id: ids[i] },
        metadata: testMetadata(),
      });
    }
    const all = await t.store.readAll(START, 10);
    expect(all.map((e) => e.position[0])).toEqual([9n, 10n, 100n]);
    const afterNine = await t.store.readAll(all[0].position, 10);
    expect(afterNine.map((e) => e.id)).toEqual([ids[1], ids[2]]);
    const paged = [
      ...(await t.store.readAll(START, 1)),
      ...(await t.store.readAll(all[0].position, 1)),
      ...(await t.store.readAll(all[1].position, 1)),
    ];
    expect(paged.map((e) => e.id)).toEqual(ids);
    expect((await t.store.headPosition())[0]).toBeGreaterThanOrEqual(100n);
  });
});
