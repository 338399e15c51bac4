import { afterAll, beforeAll, expect, it } from 'vitest';
import type { EventStore } from '../../src/eventstore/port';
import { APPENDED_CHANNEL, openPostgresEventStore } from '../../src/eventstore/postgres';
import { freshDatabase, type TestDatabase } from '../support/db';
import { anEvent, sleep } from '../support/events';
import { until } from '../support/until';
import { onPostgresServer } from '../support/suites';

// LISTEN/NOTIFY between processes needs a real server (the embedded store has one process and no NOTIFY).
const suite = onPostgresServer('Postgres NOTIFY test', 'embedded PGlite wakes its readers in process');

suite('Postgres event store: appends wake the readers of other processes', () => {
  let d: TestDatabase;
  let store: EventStore;
  let heard = 0;
  let stop: () => Promise<void>;
  beforeAll(async () => {
    d = await freshDatabase();
    store = await openPostgresEventStore(d.db, { notify: true });
    // another process's listener, as runtime.ts has one: its own connection
    stop = await d.listen(APPENDED_CHANNEL, () => heard++);
  });
  afterAll(async () => {
    await stop?.();
    await d?.close();
  });

  it('given a listener, when appends commit alone or together, then it hears a wake-up for each commit (at most one per transaction)', async () => {
    // when: one append alone
    await store.append('n-1', [anEvent()], 'no_stream');
    await until('the wake-up of the first commit', async () => heard === 1, 5000, 10);
    // when: eight at once (committed together as one batch, or in a few)
    const before = heard;
    await Promise.all(Array.from({ length: 8 }, (_, i) => store.append(`n-batch-${i}`, [anEvent(), anEvent()], 'no_stream')));
    await until('the wake-ups of the batch', async () => heard > before, 5000, 10);
    await sleep(100);
    expect(heard - before).toBeGreaterThanOrEqual(1);
    expect(heard - before).toBeLessThanOrEqual(8);
  });
});
