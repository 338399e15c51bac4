import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type AppendResult,
  type EventStore,
  type NewEvent,
  type Position,
  type RecordedEvent,
  WrongExpectedRevisionError,
  comparePositions,
} from '../../src/eventstore/port';
import { anEvent, sleep, testMetadata } from '../support/events';
import { rejection } from '../support/rejection';

/**
 * The behaviour every EventStore adapter must have. The store may be shared with other tests (and, for a
 * server, other processes), so every test writes to its own random streams and catch-up reads start from
 * the head captured before the test appends.
 */
export function eventStoreContract(name: string, open: () => Promise<EventStore>): void {
  describe(name, () => {
    let store: EventStore;

    beforeAll(async () => {
      store = await open();
    }, 180_000);

    afterAll(async () => {
      await store?.close();
    });

    const newStream = (label = 'contract') => `${label}-${randomUUID()}`;

    /** Waits for a condition that a catch-up view reaches shortly (a store may hide in-flight commits). */
    async function eventually<T>(probe: () => Promise<T | undefined>, what: string, timeoutMs = 10_000): Promise<T> {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const v = await probe();
        if (v !== undefined) return v;
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
        await sleep(20);
      }
    }

    /** Follows the log from `after` page by page until every id in `ids` has been read; returns all pages. */
    async function readAllUntil(after: Position, ids: string[], pageSize = 500): Promise<RecordedEvent[][]> {
      const wanted = new Set(ids);
      const pages: RecordedEvent[][] = [];
      let cursor = after;
      return eventually(async () => {
        for (;;) {
          const page = await store.readAll(cursor, pageSize);
          expect(page.length).toBeLessThanOrEqual(pageSize);
          if (page.length === 0) break;
          pages.push(page);
          cursor = page[page.length - 1].position;
          for (const e of page) wanted.delete(e.id);
          if (wanted.size === 0) return pages;
        }
        return wanted.size === 0 ? pages : undefined;
      }, `readAll to reach ${ids.length} appended events`);
    }

    const expectStrictlyIncreasing = (positions: Position[]) => {
      for (let i = 1; i < positions.length; i++) {
        expect(comparePositions(positions[i - 1], positions[i]), `position ${i} after ${i - 1}`).toBeLessThan(0);
      }
    };

    const appendError = (streamId: string, events: NewEvent[], expected: bigint | 'no_stream' | 'any') =>
      rejection(store.append(streamId, events, expected), WrongExpectedRevisionError);

    /** A stream of five single-event appends, revisions 0..4. */
    async function fiveEventStream() {
      const streamId = newStream('read');
      const events = Array.from({ length: 5 }, () => anEvent());
      let expected: bigint | 'no_stream' = 'no_stream';
      for (const e of events) {
        const r = await store.append(streamId, [e], expected);
        expected = r.revision;
      }
      return { streamId, ids: events.map((e) => e.id) };
    }

    describe('optimistic concurrency', () => {
      it('given a new stream, when appending with no_stream, then the event is stored at revision 0', async () => {
        const streamId = newStream();
        const e = anEvent();
        const r = await store.append(streamId, [e], 'no_stream');
        expect(r.revision).toBe(0n);
        expect(r.noop).toBe(false);
        const stored = await store.readStream(streamId);
        expect(stored.map((x) => x.id)).toEqual([e.id]);
        expect(stored[0].streamId).toBe(streamId);
        expect(stored[0].revision).toBe(0n);
        expect(stored[0].position).toEqual(r.position);
      });

      it('given an existing stream, when appending with no_stream again, then WrongExpectedRevisionError with the actual revision', async () => {
        const streamId = newStream();
        await store.append(streamId, [anEvent()], 'no_stream');
        const err = await appendError(streamId, [anEvent()], 'no_stream');
        expect(err.streamId).toBe(streamId);
        expect(err.expected).toBe('no_stream');
        expect(err.actual).toBe(0n);
        expect(await store.readStream(streamId)).toHaveLength(1);
      });

      it('given a stream at revision 0, when appending with expected revision 0, then the event is stored at revision 1', async () => {
        const streamId = newStream();
        await store.append(streamId, [anEvent()], 'no_stream');
        const r = await store.append(streamId, [anEvent()], 0n);
        expect(r.revision).toBe(1n);
        expect(r.noop).toBe(false);
        expect((await store.readStream(streamId)).map((x) => x.revision)).toEqual([0n, 1n]);
      });

      it('given a stream at revision 1, when appending with the stale revision 0, then WrongExpectedRevisionError with actual 1 and nothing is written', async () => {
        const streamId = newStream();
        await store.append(streamId, [anEvent()], 'no_stream');
        await store.append(streamId, [anEvent()], 0n);
        const err = await appendError(streamId, [anEvent()], 0n);
        expect(err.expected).toBe(0n);
        expect(err.actual).toBe(1n);
        expect(await store.readStream(streamId)).toHaveLength(2);
      });

      it('given a missing stream, when appending with an exact revision, then WrongExpectedRevisionError with actual no_stream', async () => {
        const streamId = newStream();
        const err = await appendError(streamId, [anEvent()], 0n);
        expect(err.streamId).toBe(streamId);
        expect(err.actual).toBe('no_stream');
        expect(await store.readStream(streamId)).toEqual([]);
      });

      it('given any stream state, when appending with any, then it always appends', async () => {
        const streamId = newStream();
        const first = await store.append(streamId, [anEvent()], 'any');
        expect(first.revision).toBe(0n);
        const second = await store.append(streamId, [anEvent()], 'any');
        expect(second.revision).toBe(1n);
        expect(second.noop).toBe(false);
        expect(await store.readStream(streamId)).toHaveLength(2);
      });
    });

    describe('idempotent appends', () => {
      it('given a stored event, when an event with the same id is appended again, then it is a no-op returning the stored position', async () => {
        const streamId = newStream();
        const e = anEvent();
        const first = await store.append(streamId, [e], 'no_stream');
        const again = await store.append(streamId, [e], 'any');
        expect(again.noop).toBe(true);
        expect(again.position).toEqual(first.position);
        expect(again.revision).toBe(0n);
        const stored = await store.readStream(streamId);
        expect(stored.map((x) => x.id)).toEqual([e.id]);
      });

      it('given a command that succeeded, when it is retried with the expected revision it used the first time, then it is a no-op with the original result', async () => {
        const streamId = newStream();
        const e1 = anEvent();
        const [e2, e3] = [anEvent(), anEvent()];
        const r1 = await store.append(streamId, [e1], 'no_stream');
        const r2 = await store.append(streamId, [e2, e3], 0n);
        await store.append(streamId, [anEvent()], 2n); // the stream moves on before the retries arrive

        const retry2 = await store.append(streamId, [e2, e3], 0n);
        expect(retry2).toEqual<AppendResult>({ revision: r2.revision, position: r2.position, noop: true });
        const retry1 = await store.append(streamId, [e1], 'no_stream');
        expect(retry1).toEqual<AppendResult>({ revision: r1.revision, position: r1.position, noop: true });

        const stored = await store.readStream(streamId);
        expect(stored.map((x) => x.id)).toEqual([e1.id, e2.id, e3.id, stored[3].id]);
      });

      it('given a stored event, when a reloaded retry re-appends it with the current revision, then it is a no-op', async () => {
        const streamId = newStream();
        const e = anEvent();
        const first = await store.append(streamId, [e], 'no_stream');
        const again = await store.append(streamId, [e], 0n);
        expect(again.noop).toBe(true);
        expect(again.position).toEqual(first.position);
        expect(await store.readStream(streamId)).toHaveLength(1);
      });
    });

    describe('multi-event append', () => {
      it('given three events appended at once, then revisions are consecutive, positions increase and the result carries the last position', async () => {
        const head = await store.headPosition();
        const streamId = newStream();
        const events = [anEvent(), anEvent(), anEvent()];
        const r = await store.append(streamId, events, 'no_stream');
        expect(r.revision).toBe(2n);
        expect(r.noop).toBe(false);

        const stored = await store.readStream(streamId);
        expect(stored.map((x) => x.id)).toEqual(events.map((e) => e.id));
        expect(stored.map((x) => x.revision)).toEqual([0n, 1n, 2n]);
        expectStrictlyIncreasing(stored.map((x) => x.position));
        expect(r.position).toEqual(stored[2].position);

        // the catch-up log reports the same positions as the stream
        const ours = (
          await readAllUntil(
            head,
            events.map((e) => e.id),
          )
        )
          .flat()
          .filter((x) => x.streamId === streamId);
        expect(ours.map((x) => x.position)).toEqual(stored.map((x) => x.position));
      });
    });

    describe('readStream', () => {
      it('given five events, when reading forwards, then all come back in revision order', async () => {
        const { streamId, ids } = await fiveEventStream();
        const all = await store.readStream(streamId);
        expect(all.map((e) => e.id)).toEqual(ids);
        expect(all.map((e) => e.revision)).toEqual([0n, 1n, 2n, 3n, 4n]);
        expect(all.every((e) => e.streamId === streamId)).toBe(true);
        expectStrictlyIncreasing(all.map((e) => e.position));
      });

      it('given five events, when reading backwards, then all come back newest first', async () => {
        const { streamId, ids } = await fiveEventStream();
        const all = await store.readStream(streamId, { direction: 'backwards' });
        expect(all.map((e) => e.id)).toEqual([...ids].reverse());
        expect(all.map((e) => e.revision)).toEqual([4n, 3n, 2n, 1n, 0n]);
      });

      it('given five events, when reading from a revision, then the start is inclusive in both directions', async () => {
        const { streamId } = await fiveEventStream();
        const fwd = await store.readStream(streamId, { fromRevision: 2n });
        expect(fwd.map((e) => e.revision)).toEqual([2n, 3n, 4n]);
        const bwd = await store.readStream(streamId, { direction: 'backwards', fromRevision: 2n });
        expect(bwd.map((e) => e.revision)).toEqual([2n, 1n, 0n]);
      });

      it('given five events, when reading with maxCount, then at most that many come back from the start point', async () => {
        const { streamId } = await fiveEventStream();
        expect((await store.readStream(streamId, { maxCount: 2 })).map((e) => e.revision)).toEqual([0n, 1n]);
        expect((await store.readStream(streamId, { direction: 'backwards', maxCount: 2 })).map((e) => e.revision)).toEqual([4n, 3n]);
        expect((await store.readStream(streamId, { fromRevision: 1n, maxCount: 2 })).map((e) => e.revision)).toEqual([1n, 2n]);
        expect((await store.readStream(streamId, { fromRevision: 3n, maxCount: 10 })).map((e) => e.revision)).toEqual([3n, 4n]);
      });

      it('given no stream, when reading it, then it reads as empty in both directions', async () => {
        const streamId = newStream('missing');
        expect(await store.readStream(streamId)).toEqual([]);
        expect(await store.readStream(streamId, { direction: 'backwards' })).toEqual([]);
        expect(await store.readStream(streamId, { fromRevision: 3n, maxCount: 1 })).toEqual([]);
      });
    });

    describe('round trip', () => {
      it('given nested data and metadata with nulls and unicode, when read back, then both are exactly as appended', async () => {
        const head = await store.headPosition();
        const streamId = newStream('roundtrip');
        const e = anEvent({
          type: 'WebsiteCreated',
          data: {
            website_id: randomUUID(),
            name: 'Café ☕ — 日本語 — עברית — 🎉👩‍👩‍👧',
            url: 'https://example.com/päth?q="quoted"&x=\\back\\slash',
            normalized_url: 'example.com/päth',
            external_id: null,
            nested: {
              list: [1, 2.5, -3, { deep: [null, true, false, 'x'] }],
              empty_object: {},
              empty_list: [],
              big: 9007199254740991,
              line_separator: 'a\u2028b\n\tc',
            },
          },
          metadata: testMetadata({
            organization_id: `org-ü-${randomUUID()}`,
            website_id: 'site-ß',
            actor: { kind: 'api_key', user_id: null, api_key_id: 'key-ñ' },
            causation_id: randomUUID(),
          }),
        });
        const withNulls = anEvent({ data: { api_key_id: 'k', note: null }, metadata: testMetadata() });
        await store.append(streamId, [e, withNulls], 'no_stream');

        const stored = await store.readStream(streamId);
        expect(stored).toHaveLength(2);
        for (const [i, original] of [e, withNulls].entries()) {
          expect(stored[i].id).toBe(original.id);
          expect(stored[i].type).toBe(original.type);
          expect(stored[i].data).toEqual(original.data);
          expect(stored[i].metadata).toEqual(original.metadata);
          expect(stored[i].recordedAt).toBeInstanceOf(Date);
          expect(Number.isNaN(stored[i].recordedAt.getTime())).toBe(false);
        }

        const fromLog = (await readAllUntil(head, [e.id, withNulls.id])).flat().filter((x) => x.streamId === streamId);
        expect(fromLog.map((x) => x.data)).toEqual([e.data, withNulls.data]);
        expect(fromLog.map((x) => x.metadata)).toEqual([e.metadata, withNulls.metadata]);
        expect(fromLog.map((x) => x.type)).toEqual([e.type, withNulls.type]);
      });
    });

    describe('catch-up reads', () => {
      it('given events appended after the head, when reading all after the head, then exactly those come back strictly after it in position order', async () => {
        const head = await store.headPosition();
        const a = newStream('all-a');
        const b = newStream('all-b');
        const [a0, a1, b0] = [anEvent(), anEvent(), anEvent()];
        await store.append(a, [a0, a1], 'no_stream');
        await store.append(b, [b0], 'no_stream');

        const read = (await readAllUntil(head, [a0.id, a1.id, b0.id])).flat();
        for (const e of read) expect(comparePositions(e.position, head)).toBeGreaterThan(0);
        expectStrictlyIncreasing(read.map((e) => e.position));
        const ours = read.filter((e) => e.streamId === a || e.streamId === b);
        expect(ours.map((e) => e.id)).toEqual([a0.id, a1.id, b0.id]);
        expect(ours.map((e) => e.revision)).toEqual([0n, 1n, 0n]);

        // strictly after: reading after a0's own position starts past it
        const afterA0 = (await readAllUntil(ours[0].position, [a1.id, b0.id])).flat();
        expect(afterA0.map((e) => e.id)).not.toContain(a0.id);
        expect(afterA0.filter((e) => e.streamId === a || e.streamId === b).map((e) => e.id)).toEqual([a1.id, b0.id]);
      });

      it('given events appended after the head, when paging with a small maxCount, then pages respect it and positions increase across pages', async () => {
        const head = await store.headPosition();
        const streamId = newStream('paging');
        const events = [anEvent(), anEvent(), anEvent(), anEvent()];
        let expected: bigint | 'no_stream' = 'no_stream';
        for (const e of events) expected = (await store.append(streamId, [e], expected)).revision;

        for (const pageSize of [1, 2, 3]) {
          const pages = await readAllUntil(
            head,
            events.map((e) => e.id),
            pageSize,
          );
          for (const p of pages) expect(p.length).toBeLessThanOrEqual(pageSize);
          const read = pages.flat();
          expectStrictlyIncreasing(read.map((e) => e.position));
          expect(read.filter((e) => e.streamId === streamId).map((e) => e.id)).toEqual(events.map((e) => e.id));
        }
      });

      it('given an append, then lastPosition() is at least its position at once', async () => {
        const r = await store.append(newStream('last'), [anEvent()], 'no_stream');
        expect(comparePositions(await store.lastPosition(), r.position)).toBeGreaterThanOrEqual(0);
      });

      it('given an append, then headPosition() reaches at least its position', async () => {
        const before = await store.headPosition();
        const r = await store.append(newStream('head'), [anEvent()], 'no_stream');
        expect(comparePositions(r.position, before)).toBeGreaterThan(0);
        const head = await eventually(async () => {
          const h = await store.headPosition();
          return comparePositions(h, r.position) >= 0 ? h : undefined;
        }, 'headPosition to reach the append');
        expect(comparePositions(head, before)).toBeGreaterThan(0);
      });
    });

    describe('onAppend', () => {
      it('given a listener, when this process appends, then it fires; once unsubscribed, it no longer fires', async () => {
        let calls = 0;
        const off = store.onAppend(() => {
          calls++;
        });
        try {
          await store.append(newStream('listener'), [anEvent()], 'no_stream');
          await eventually(async () => (calls > 0 ? true : undefined), 'the onAppend listener', 2_000);
        } finally {
          off();
        }
        const seen = calls;
        await store.append(newStream('listener'), [anEvent()], 'no_stream');
        await sleep(50);
        expect(calls).toBe(seen);
      });
    });
  });
}
