import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { catalogStream } from '../../commands/catalog/catalog';
import { type CommandContext, newEventsFor } from '../../commands/handle';
import { endRun, RUN_IN_PROGRESS, runSlotStream } from '../../commands/responses/run-slot';
import { startRun } from '../../commands/responses/start-run';
import { isDomainError } from '../../src/domain/errors';
import { SYSTEM_ACTOR } from '../../src/domain/events';
import { newId } from '../../src/domain/ids';
import type { EventStore } from '../../src/eventstore/port';
import { openPostgresEventStore } from '../../src/eventstore/postgres';
import type { TestStore } from '../support/db';
import { sharedStore } from '../support/per-worker';

// Two stores over one database stand for two instances: each has its own stream locks and state cache, so only the
// expected version settles their writes to one slot (this holds on PGlite too: their steps interleave).
let db: TestStore;
let other: EventStore;
beforeAll(async () => {
  db = await sharedStore();
  other = await openPostgresEventStore(db.db);
});
afterAll(async () => db?.close());

const organizationId = newId();
const ctx = (store: EventStore): CommandContext => ({ store, organizationId, actor: SYSTEM_ACTOR });

async function websiteWithPrompt(): Promise<string> {
  const website = newId();
  const prompt = { prompt_id: newId(), text: 'best crm', topic_id: null, type: 'non_branded' as const, status: 'active' as const, tags: [] };
  await db.store.append(
    catalogStream(website),
    newEventsFor({ ...ctx(db.store), websiteId: website }, [{ type: 'PromptCreated', data: prompt }]),
    'no_stream',
  );
  return website;
}

const start = (store: EventStore, website: string) =>
  startRun(ctx(store), { website_id: website, schedule_id: null, trigger: 'manual', day: '2026-03-01' });

/** A store whose appends to `stream` wait until `both` is released: both writers then decided on the same revision. */
function gated(store: EventStore, stream: string, held: { go: () => void }[], bothDecided: () => void): EventStore {
  return Object.assign(Object.create(store) as EventStore, {
    append: async (...args: Parameters<EventStore['append']>) => {
      if (args[0] === stream && held.length < 2) {
        await new Promise<void>((go) => {
          held.push({ go });
          if (held.length === 2) bothDecided();
        });
      }
      return store.append(...args);
    },
  });
}

describe('one run in progress per schedule, across instances', () => {
  it('given two starts decided on the same revision of the slot, then the one appended second decides again and is refused', async () => {
    const website = await websiteWithPrompt();
    const held: { go: () => void }[] = [];
    let release: () => void = () => undefined;
    const decided = new Promise<void>((r) => (release = r));
    const slot = runSlotStream(website, null);
    const one = start(gated(db.store, slot, held, release), website);
    const two = start(gated(other, slot, held, release), website);
    await decided;
    held[0].go();
    const first = await Promise.race([one, two]);
    held[1].go();
    const [r1, r2] = await Promise.all([one, two]);
    const won = [r1, r2].filter((r) => !isDomainError(r));
    const lost = [r1, r2].filter(isDomainError);
    expect(won).toHaveLength(1);
    expect(first).toBe(won[0]);
    const runId = !isDomainError(won[0]) && won[0].result.run_id;
    expect(lost).toEqual([{ kind: 'conflict', message: RUN_IN_PROGRESS, details: { run: { run_id: runId } } }]);
    expect((await db.store.readStream(slot)).map((e) => e.type)).toEqual(['RunSlotTaken']);
  });

  it('given N starts at once through two instances, then one starts and N-1 are refused naming it', async () => {
    const website = await websiteWithPrompt();
    const rs = await Promise.all(Array.from({ length: 10 }, (_, i) => start(i % 2 ? other : db.store, website)));
    const won = rs.filter((r) => !isDomainError(r));
    expect(won).toHaveLength(1);
    const runId = !isDomainError(won[0]) && won[0].result.run_id;
    for (const r of rs.filter(isDomainError)) expect(r).toEqual({ kind: 'conflict', message: RUN_IN_PROGRESS, details: { run: { run_id: runId } } });
    expect((await db.store.readStream(`run-${runId}`))[0].type).toBe('RunStarted');
  });

  it("given a run's end recorded by two instances at once, then it is recorded once and one of them reports it", async () => {
    const website = await websiteWithPrompt();
    const r = await start(db.store, website);
    if (isDomainError(r)) throw new Error(r.message);
    const ref = { website_id: website, schedule_id: null };
    const ends = await Promise.all(Array.from({ length: 6 }, (_, i) => endRun(ctx(i % 2 ? other : db.store), ref, r.result.run_id, 'finished')));
    expect(ends.filter((e) => !isDomainError(e) && e.result)).toHaveLength(1);
    expect((await db.store.readStream(runSlotStream(website, null))).map((e) => e.type)).toEqual(['RunSlotTaken', 'RunEnded']);
    // the slot is free: the next start takes it, through either instance
    const next = await start(other, website);
    expect(isDomainError(next)).toBe(false);
  });

  it('given a scheduled slot started again with the same run id (a pass behind the read model), then nothing new is written', async () => {
    const website = await websiteWithPrompt();
    const runId = newId();
    const input = { run_id: runId, website_id: website, schedule_id: null, trigger: 'scheduled' as const, day: '2026-03-01' };
    const [x, y] = await Promise.all([startRun(ctx(db.store), input), startRun(ctx(other), input)]);
    if (isDomainError(x) || isDomainError(y)) throw new Error('refused');
    expect([x.result.started, y.result.started].sort()).toEqual([false, true]);
    await endRun(ctx(db.store), { website_id: website, schedule_id: null }, runId, 'finished');
    const again = await startRun(ctx(other), input);
    expect(!isDomainError(again) && again.result.started).toBe(false);
    expect((await db.store.readStream(runSlotStream(website, null))).map((e) => e.type)).toEqual(['RunSlotTaken', 'RunEnded']);
  });
});
