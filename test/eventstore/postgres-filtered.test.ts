import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { knownEventTypes } from '../../src/domain/events';
import { comparePositions, type Position, START } from '../../src/eventstore/port';
import { until } from '../support/until';
import { useFreshStore, type TestStore } from '../support/db';
import { testMetadata } from '../support/events';

// A projection that handles a few types reads only those, but its checkpoint still moves past what it skipped.
describe('Postgres event store: catch-up read of some types', () => {
  let t: TestStore;
  useFreshStore((x) => (t = x));

  // a slow write transaction elsewhere on the server (another test file) holds the xmin horizon back for a moment
  const visible = (p: Position) =>
    until('the appends to be visible to catch-up readers', async () => comparePositions(await t.store.headPosition(), p) >= 0);

  it('given interleaved types, when read by type in pages, then every matching event comes once, in order, and the scan ends at the head', async () => {
    // given: 10 events alternating between a handled and a skipped type, each its own append
    const handled: string[] = [];
    let last: Position = START;
    for (let i = 0; i < 10; i++) {
      const id = randomUUID();
      const type = i % 2 === 0 ? 'ApiKeyRevoked' : 'WebsiteStatusChanged';
      if (type === 'ApiKeyRevoked') handled.push(id);
      last = (await t.store.append(`filtered-${i}`, [{ id, type, data: { api_key_id: id }, metadata: testMetadata() }], 'no_stream')).position;
    }
    await visible(last);
    const all = await t.store.readAll(START, 100);
    expect(all).toHaveLength(10);
    // when: pages of 3 scanned events
    const seen: string[] = [];
    let cursor: Position = START;
    let pages = 0;
    for (;;) {
      const page = await t.store.readAllOfTypes!(cursor, 3, ['ApiKeyRevoked'], knownEventTypes());
      if (page.scanned === 0) break;
      pages++;
      expect(page.scanned).toBeLessThanOrEqual(3);
      expect(page.events.every((e) => e.type === 'ApiKeyRevoked')).toBe(true);
      // the payload of a returned event is all there
      for (const e of page.events) expect(e.data).toEqual({ api_key_id: e.id });
      seen.push(...page.events.map((e) => e.id));
      cursor = page.scannedTo;
    }
    // then
    expect(seen).toEqual(handled);
    expect(pages).toBe(4);
    expect(cursor).toEqual(all[9].position);
    // a page that matched nothing still moved past what it scanned
    const onlySkipped = await t.store.readAllOfTypes!(all[0].position, 1, ['ApiKeyRevoked'], knownEventTypes());
    expect(onlySkipped).toMatchObject({ events: [], scanned: 1, scannedTo: all[1].position });
  });

  it('given an event of a type outside the catalogue, when read by type, then it is returned so the reader can report it', async () => {
    const head = await t.store.headPosition();
    const id = randomUUID();
    await visible(
      (await t.store.append('filtered-unknown', [{ id, type: 'SomethingNobodyKnows', data: {}, metadata: testMetadata() }], 'no_stream')).position,
    );
    const page = await t.store.readAllOfTypes!(head, 10, ['ApiKeyRevoked'], knownEventTypes());
    expect(page.events.map((e) => [e.id, e.type])).toEqual([[id, 'SomethingNobodyKnows']]);
  });

  it('given a type read from some streams only, then its events elsewhere are skipped and the others come as before', async () => {
    const head = await t.store.headPosition();
    const [inside, outside, other] = [randomUUID(), randomUUID(), randomUUID()];
    await t.store.append(
      `answer-${inside}`,
      [{ id: inside, type: 'ApiKeyRevoked', data: { api_key_id: inside }, metadata: testMetadata() }],
      'no_stream',
    );
    await t.store.append(
      `import-${outside}`,
      [{ id: outside, type: 'ApiKeyRevoked', data: { api_key_id: outside }, metadata: testMetadata() }],
      'no_stream',
    );
    await visible(
      (
        await t.store.append(
          `key-${other}`,
          [{ id: other, type: 'WebsiteStatusChanged', data: { api_key_id: other }, metadata: testMetadata() }],
          'no_stream',
        )
      ).position,
    );
    const page = await t.store.readAllOfTypes!(head, 10, ['ApiKeyRevoked', 'WebsiteStatusChanged'], knownEventTypes(), { ApiKeyRevoked: 'answer-' });
    expect(page.scanned).toBe(3);
    expect(page.events.map((e) => e.id)).toEqual([inside, other]);
  });

  it('given a stream id and a type with spaces, when read by readStream, readAll and readAllOfTypes, then each read returns the event as stored, field by field', async () => {
    const head = await t.store.headPosition();
    const streamId = `with spaces ${randomUUID()}  twice `;
    const [first, second] = [randomUUID(), randomUUID()];
    await t.store.append(streamId, [{ id: first, type: 'ApiKeyRevoked', data: { api_key_id: first }, metadata: testMetadata() }], 'no_stream');
    const r = await t.store.append(streamId, [{ id: second, type: 'A type nobody knows', data: { n: 1 }, metadata: testMetadata() }], 0n);
    await visible(r.position);
    const [stored] = (await t.db.raw(`select max(recorded_at) as at from aivis_events where stream_id = ?`, [streamId])).rows;

    const byStream = await t.store.readStream(streamId);
    const all = (await t.store.readAll(head, 100)).filter((e) => e.streamId === streamId);
    const byType = (await t.store.readAllOfTypes!(head, 100, ['ApiKeyRevoked'], knownEventTypes())).events.filter((e) => e.streamId === streamId);

    expect(byStream.map((e) => [e.id, e.type, e.streamId, e.revision])).toEqual([
      [first, 'ApiKeyRevoked', streamId, 0n],
      [second, 'A type nobody knows', streamId, 1n],
    ]);
    expect(byStream[1].position).toEqual(r.position);
    expect(byStream[1].recordedAt.getTime()).toBe(new Date(stored.at).getTime());
    // the same events, to the field, whichever read returns them
    expect(all).toEqual(byStream);
    expect(byType).toEqual(byStream);
  });
});
