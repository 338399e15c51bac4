import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventMetadata } from '../../src/domain/events';
import type { NewEvent } from '../../src/eventstore/port';
import { copyRows, type Projection } from '../../src/eventstore/projection';
import { ProjectionRunner } from '../../src/eventstore/runner';
import { silentLogger } from '../../src/logger';
import { activityProjection as activityOf } from '../../projections/activity';
import { feed } from '../../src/areas';
import { freshStore, onRealPostgres } from '../support/db';

type T = Awaited<ReturnType<typeof freshStore>>;

const activityProjection = activityOf(feed);

const org = randomUUID();
const site = randomUUID();
const user = randomUUID();
const key = randomUUID();
let clock = Date.parse('2025-03-01T00:00:00Z');

const meta = (over: Partial<EventMetadata> = {}): EventMetadata => ({
  organization_id: org,
  website_id: site,
  actor: { kind: 'api_key', user_id: null, api_key_id: key },
  correlation_id: randomUUID(),
  causation_id: null,
  time: new Date((clock += 1234)).toISOString(),
  ...over,
});
const ev = (type: string, data: unknown, over: Partial<EventMetadata> = {}): NewEvent => ({ id: randomUUID(), type, data, metadata: meta(over) });

/** A website's history with every shape of feed row: org-level (no website), a user actor, a topic carrying prompts, one carrying too many to list. */
function history(): NewEvent[] {
  const topic = randomUUID();
  const big = randomUUID();
  const prompts = Array.from({ length: 3 }, () => randomUUID());
  const many = Array.from({ length: 120 }, () => randomUUID());
  const asUser = { actor: { kind: 'user' as const, user_id: user, api_key_id: null } };
  return [
    ev(
      'UserAdded',
      { user_id: user, email: 'a@example.com', role: 'owner' },
      { website_id: null, actor: { kind: 'system', user_id: null, api_key_id: null } },
    ),
    ev(
      'ApiKeyCreated',
      { api_key_id: key, name: 'k', key_hash: 'h', key_prefix: 'p', user_id: user, website_ids: null, partner: false },
      { website_id: null, ...asUser },
    ),
    ev('WebsiteCreated', { website_id: site, name: 'Acme', url: 'https://acme.example/', normalized_url: 'acme.example', external_id: null }),
    ev('TopicCreated', { topic_id: topic, name: 'Pricing' }, asUser),
    ...prompts.map((p) => ev('PromptCreated', { prompt_id: p, text: 'best crm?', topic_id: topic, type: 'branded', status: 'active', tags: [] })),
    ev('TopicCreated', { topic_id: big, name: 'Big' }),
    ...many.map((p) => ev('PromptCreated', { prompt_id: p, text: 'q', topic_id: big, type: 'non_branded', status: 'paused', tags: ['x'] })),
    ev('TopicDeleted', { topic_id: topic, name: 'Pricing', soft_deleted_prompt_ids: prompts }),
    ev('TopicDeleted', { topic_id: big, name: 'Big', soft_deleted_prompt_ids: many }),
    ev('WebsiteStatusChanged', { website_id: site, status: 'paused' }, asUser),
    ev('ApiKeyRevoked', { api_key_id: key }, { website_id: null }),
  ];
}

const feedRows = async (t: T) =>
  (await t.db('rm_activity').select('*').orderBy('created_at')).map(({ seq, ...row }) => ({
    ...row,
    created_at: new Date(row.created_at).toISOString(),
  }));
const indexes = async (t: T) =>
  (await t.db.raw(`select indexname from pg_indexes where tablename = 'rm_activity' order by indexname`)).rows.map(
    (r: { indexname: string }) => r.indexname,
  );
const INDEXES = ['rm_activity_id_key', 'rm_activity_org_time', 'rm_activity_pkey', 'rm_activity_site_time'];

describe('activity projection', () => {
  let t: T;
  let total = 0;
  beforeAll(async () => {
    t = await freshStore();
    for (let i = 0; i < 3; i++) {
      const events = history();
      await t.store.append(`catalog-${randomUUID()}`, events, 'no_stream');
      total += events.length;
    }
  });
  afterAll(async () => t?.close());

  it('given a history, when rebuilt from zero in small batches, then the feed equals the one built event by event and the indexes are back', async () => {
    const live = new ProjectionRunner({ projection: activityProjection, store: t.store, db: t.db, logger: silentLogger(), pollMs: 10 });
    await live.start();
    expect(await live.waitFor(await t.store.lastPosition(), 10_000)).toBe(true);
    await live.stop();
    const incremental = await feedRows(t);
    expect(incremental).toHaveLength(total);
    expect(incremental.find((r) => r.entity_type === 'topic' && r.change_type === 'deleted' && r.entity_ids === null)).toBeDefined();
    expect(incremental.find((r) => r.entity_type === 'topic' && r.change_type === 'deleted' && r.entity_ids?.length === 4)).toBeDefined();

    const rebuild = new ProjectionRunner({ projection: activityProjection, store: t.store, db: t.db, logger: silentLogger(), batchSize: 7 });
    expect(await rebuild.rebuild()).toBe(total);
    expect(await feedRows(t)).toEqual(incremental);
    expect(await indexes(t)).toEqual(INDEXES);
    // the unique index is back, and the live path's ON CONFLICT finds it: a replayed event is skipped
    const row = await t.db('rm_activity').first();
    await expect(t.db('rm_activity').insert({ ...row, seq: undefined })).rejects.toMatchObject({ code: '23505' });
  });

  it('given a rebuild that fails midway, then the live read model is left as it was and serving, and a later rebuild swaps in', async () => {
    const live = await feedRows(t);
    const checkpoint = await t.db('aivis_checkpoints').where('name', 'activity').first('position', 'generation');
    let calls = 0;
    const failing: Projection = {
      ...activityProjection,
      async apply(trx, events, ctx) {
        if (++calls === 3) throw new Error('boom');
        await activityProjection.apply(trx, events, ctx);
      },
    };
    const runner = new ProjectionRunner({ projection: failing, store: t.store, db: t.db, logger: silentLogger(), batchSize: 10 });
    await expect(runner.rebuild()).rejects.toThrow('boom');
    // then: every live row, index and the checkpoint as before; the shadow is gone
    expect(await feedRows(t)).toEqual(live);
    expect(await indexes(t)).toEqual(INDEXES);
    expect(await t.db('aivis_checkpoints').where('name', 'activity').first('position', 'generation')).toEqual(checkpoint);
    expect((await t.db.raw(`select count(*)::int as n from pg_namespace where nspname like 'aivis_rebuild_%'`)).rows[0].n).toBe(0);
    // and a live runner goes on from where it was
    const more = history();
    const r = await t.store.append(`catalog-${randomUUID()}`, more, 'no_stream');
    total += more.length;
    const serving = new ProjectionRunner({ projection: activityProjection, store: t.store, db: t.db, logger: silentLogger(), pollMs: 10 });
    await serving.start();
    expect(await serving.waitFor(r.position, 10_000)).toBe(true);
    await serving.stop();
    expect(await feedRows(t)).toHaveLength(total);
    // when rebuilt again, then it swaps in: every event once
    expect(
      await new ProjectionRunner({ projection: activityProjection, store: t.store, db: t.db, logger: silentLogger(), batchSize: 10 }).rebuild(),
    ).toBe(total);
    const rows = await feedRows(t);
    expect(rows).toHaveLength(total);
    expect(new Set(rows.map((r) => r.id)).size).toBe(total);
    expect(await indexes(t)).toEqual(INDEXES);
  });

  it('given a table from before the rebuild hook dropped the unique constraint, when rebuilt, then it ends with the same indexes', async () => {
    await t.db.raw('drop table rm_activity');
    await t.db.raw(`create table rm_activity (
      seq bigserial primary key, id uuid not null unique, organization_id uuid not null, website_id uuid, entity_type text not null,
      change_type text not null, entity_ids uuid[], via_api_key boolean not null, api_key_id uuid, actor_user_id uuid,
      actor_kind text not null, created_at timestamptz not null)`);
    await t.db('aivis_checkpoints').where('name', 'activity').update({ lease_owner: null });
    const runner = new ProjectionRunner({ projection: activityProjection, store: t.store, db: t.db, logger: silentLogger() });
    expect(await runner.rebuild()).toBe(total);
    expect(await indexes(t)).toEqual(INDEXES);
    expect(await feedRows(t)).toHaveLength(total);
  });

  it('given a rebuild that died between before and after, when a running instance takes the lead, then it restores the indexes and goes on', async () => {
    const live = new ProjectionRunner({ projection: activityProjection, store: t.store, db: t.db, logger: silentLogger(), pollMs: 10 });
    await t
      .db('aivis_checkpoints')
      .where('name', 'activity')
      .update({ lease_owner: 'a-rebuild-that-dies', lease_until: t.db.raw(`now() + interval '1 hour'`) });
    await live.start();
    await activityProjection.rebuild!.before(t.db);
    await t
      .db('aivis_checkpoints')
      .where('name', 'activity')
      .update({ lease_until: t.db.raw(`now() - interval '1 second'`) });
    const events = history();
    const r = await t.store.append(`catalog-${randomUUID()}`, events, 'no_stream');
    total += events.length;
    expect(await live.waitFor(r.position, 10_000)).toBe(true);
    await live.stop();
    expect(await indexes(t)).toEqual(INDEXES);
    expect(await feedRows(t)).toHaveLength(total);
  });

  it('given the same event id twice without the unique index (a store that allows it), when migrated, then the first row is kept', async () => {
    await activityProjection.rebuild!.before(t.db);
    const first = await t.db('rm_activity').orderBy('seq').first();
    await t.db('rm_activity').insert({ ...first, seq: undefined, change_type: 'duplicate' });
    await activityProjection.migrate(t.db);
    expect(await indexes(t)).toEqual(INDEXES);
    expect(await t.db('rm_activity').where('id', first.id).select('change_type', 'seq')).toEqual([
      { change_type: first.change_type, seq: first.seq },
    ]);
  });
});

describe('copyRows', () => {
  let t: T;
  beforeAll(async () => {
    t = await freshStore();
    await t.db.raw('create table t_copy (n int primary key, s text, b boolean, a text[], u uuid)');
  });
  afterAll(async () => t?.close());

  it(`given values with tabs, newlines, backslashes and nulls, then they are stored as given (${onRealPostgres ? 'COPY' : 'PGlite: declined'})`, async () => {
    const u = randomUUID();
    const rows = [
      ['1', 'tab\there', true, '{"a\\\\b","c d"}', u],
      ['2', 'line\nbreak\r\nand \\N \\ back\\slash', false, null, null],
      ['3', null, null, '{}', u],
      ['4', '', true, '{"\\"quoted\\""}', u],
      // a value that would end the row and start a forged one if it were not escaped
      ['5', 'x\t\\N\tt\t{}\t00000000-0000-4000-8000-000000000000\n6', false, null, null],
    ];
    const copied = await t.db.transaction((trx) => copyRows(trx, 't_copy', ['n', 's', 'b', 'a', 'u'], rows));
    expect(copied).toBe(onRealPostgres);
    if (!copied) return;
    expect(await t.db('t_copy').orderBy('n').select('*')).toEqual([
      { n: 1, s: 'tab\there', b: true, a: ['a\\b', 'c d'], u },
      { n: 2, s: 'line\nbreak\r\nand \\N \\ back\\slash', b: false, a: null, u: null },
      { n: 3, s: null, b: null, a: [], u },
      { n: 4, s: '', b: true, a: ['"quoted"'], u },
      { n: 5, s: 'x\t\\N\tt\t{}\t00000000-0000-4000-8000-000000000000\n6', b: false, a: null, u: null },
    ]);
  });

  it('given a value the column rejects, then the transaction fails and nothing is stored', async () => {
    if (!onRealPostgres) return;
    await expect(t.db.transaction((trx) => copyRows(trx, 't_copy', ['n', 'u'], [['10', 'not-a-uuid']]))).rejects.toMatchObject({ code: '22P02' });
    expect(await t.db('t_copy').where('n', 10)).toEqual([]);
  });
});
