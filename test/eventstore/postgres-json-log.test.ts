import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SYSTEM_ACTOR } from '../../src/domain/events';
import { openPostgresEventStore } from '../../src/eventstore/postgres';
import { freshDatabase, type TestDatabase } from '../support/db';

const metadata = () => ({
  time: new Date().toISOString(),
  actor: SYSTEM_ACTOR,
  organization_id: randomUUID(),
  website_id: null,
  causation_id: null,
  correlation_id: randomUUID(),
});

// The log keeps each event's documents as written (json): a log written before, in jsonb, is converted when a store
// opens on it, and what it held reads back the same.
describe('a log stored in jsonb, opened by this version', () => {
  let d: TestDatabase;
  const before = { id: randomUUID(), data: { b: 1, a: 'x "quoted" \u00e9', list: [1, { z: null }] } };
  beforeAll(async () => {
    d = await freshDatabase(4);
    // given the table as the store created it before (jsonb documents) with one event in it
    await d.db.raw(`create table aivis_events (
      position bigserial primary key, txid xid8 not null default pg_current_xact_id(), stream_id text not null,
      revision bigint not null, event_id uuid not null unique, type text not null, data jsonb not null, metadata jsonb not null,
      recorded_at timestamptz not null default now(), unique (stream_id, revision))`);
    await d.db.raw('insert into aivis_events (stream_id, revision, event_id, type, data, metadata) values (?, 0, ?, ?, ?::jsonb, ?::jsonb)', [
      'old-1',
      before.id,
      'Something',
      JSON.stringify(before.data),
      JSON.stringify(metadata()),
    ]);
  });
  afterAll(async () => d?.close());

  it('when a store opens on it, then the documents are json, the old event reads back and appends go on', async () => {
    const store = await openPostgresEventStore(d.db);
    const types = (
      await d.db.raw(
        `select attname, format_type(atttypid, atttypmod) as t from pg_attribute where attrelid = 'aivis_events'::regclass and attname in ('data', 'metadata') order by attname`,
      )
    ).rows;
    expect(types).toEqual([
      { attname: 'data', t: 'json' },
      { attname: 'metadata', t: 'json' },
    ]);
    const next = { id: randomUUID(), type: 'Something', data: { n: 2, text: 'a\nb' }, metadata: metadata() };
    const r = await store.append('old-1', [next], 0n);
    expect(r.revision).toBe(1n);
    // two appends side by side go through the batch path (flat json arrays)
    const [x, y] = await Promise.all([
      store.append(
        'new-a',
        [
          { ...next, id: randomUUID(), data: { k: 'a' } },
          { ...next, id: randomUUID(), data: { k: 'b' } },
        ],
        'no_stream',
      ),
      store.append('new-b', [{ ...next, id: randomUUID(), data: { k: 'c' } }], 'no_stream'),
    ]);
    expect([x.revision, y.revision]).toEqual([1n, 0n]);
    const read = await store.readStream('old-1');
    expect(read.map((e) => [e.id, e.data])).toEqual([
      [before.id, before.data],
      [next.id, next.data],
    ]);
    expect((await store.readStream('new-a')).map((e) => e.data)).toEqual([{ k: 'a' }, { k: 'b' }]);
  });

  it('when a document holds what jsonb refuses (\\u0000, a lone surrogate), then its append fails as before and writes nothing', async () => {
    const store = await openPostgresEventStore(d.db);
    const bad = (text: string) => ({ id: randomUUID(), type: 'Something', data: { text }, metadata: metadata() });
    await expect(store.append('bad-nul', [bad('a\u0000b')], 'no_stream')).rejects.toMatchObject({ code: '22P05' });
    await expect(store.append('bad-surrogate', [bad('host \ud800')], 'no_stream')).rejects.toMatchObject({ code: '22P02' });
    // side by side (the batch path): the bad one fails alone, the good one is stored
    const [good, nul] = await Promise.allSettled([
      store.append('good-c', [bad('fine \u00e9 \ud83d\ude00')], 'no_stream'),
      store.append('bad-nul-2', [bad('\u0000')], 'no_stream'),
    ]);
    expect(good.status).toBe('fulfilled');
    expect(nul).toMatchObject({ status: 'rejected', reason: { code: '22P05' } });
    const n = await d.db('aivis_events').whereIn('stream_id', ['bad-nul', 'bad-surrogate', 'bad-nul-2']).count<{ n: string }[]>('* as n');
    expect(Number(n[0].n)).toBe(0);
    expect((await store.readStream('good-c')).map((e) => e.data)).toEqual([{ text: 'fine \u00e9 \ud83d\ude00' }]);
  });

  it('when an append is sent fewer documents than ids, then it fails on the missing one (as before) and writes nothing', async () => {
    await openPostgresEventStore(d.db);
    const call = (fn: string, expected: string) =>
      d.db.raw(`select * from ${fn}(?, ?, ?::uuid[], ?::text[], ?::json, ?::json)`, [
        `short-${expected}`,
        expected,
        [randomUUID(), randomUUID()],
        ['Something', 'Something'],
        JSON.stringify([{ only: 'one' }]),
        JSON.stringify([metadata(), metadata()]),
      ]);
    await expect(call('aivis_append_events', 'any')).rejects.toMatchObject({ code: '23502' });
    await expect(call('aivis_append_events', 'no_stream')).rejects.toMatchObject({ code: '23502' });
    const n = await d.db('aivis_events').where('stream_id', 'like', 'short-%').count<{ n: string }[]>('* as n');
    expect(Number(n[0].n)).toBe(0);
  });
});
