import { describe, expect, it } from 'vitest';
import { onRealPostgres } from '../support/db';
import { useStarted } from '../support/started';
import { useTwoInstancesOverNats } from '../support/nats-instances';
import { PROSPECT, type PitchSites, SLOW, startPitchSites } from '../support/pitch-site';
import { call, type TestServer } from '../support/server';
import { inOneMinute, until } from '../support/until';

// Two instances over one Postgres and a private nats-server (the pitch jobs go over JetStream): the pitch limits and the
// Idempotency-Key hold across them.
(onRealPostgres ? describe : describe.skip)('pitch reports on two instances', () => {
  let a: TestServer;
  let b: TestServer;
  let sites: PitchSites;
  useStarted(startPitchSites, (x) => (sites = x));
  useTwoInstancesOverNats(
    () => ({ app: { outbound: sites.outbound } }),
    (ctx) => ({ a, b } = ctx),
  );

  const create = (s: TestServer, key: string, body: unknown, idempotencyKey: string) =>
    call(s, 'POST', '/api/v1/pitches', { key, body, headers: { 'Idempotency-Key': idempotencyKey } });

  it('given one key sent to both instances at once, then both answer the one report and one pitch is charged', async () => {
    const org = await a.org('Both');
    await until('b knows the key', async () => (await call(b, 'GET', '/api/v1/pitches', { key: org.key })).status === 200);
    const [x, y] = await Promise.all([
      create(a, org.key, { website_url: PROSPECT }, 'both-1'),
      create(b, org.key, { website_url: PROSPECT }, 'both-1'),
    ]);
    expect([x.status, y.status]).toEqual([202, 202]);
    expect(y.body.pitch_id).toBe(x.body.pitch_id);
    await until(
      'the report',
      async () => (await call(a, 'GET', `/api/v1/pitches/${x.body.pitch_id}`, { key: org.key })).body.pitch.status === 'completed',
    );
    expect((await call(b, 'GET', '/api/v1/pitches/usage', { key: org.key })).body.used).toBe(1);
  });

  it('given 3 reports processing admitted through both instances, then a 4th on either is 429', async () => {
    const org = await a.org('Busy both');
    await until('b knows the key', async () => (await call(b, 'GET', '/api/v1/pitches', { key: org.key })).status === 200);
    const admitted = await Promise.all([0, 1, 2].map((i) => create(i % 2 ? b : a, org.key, { website_url: SLOW }, `busy-${i}`)));
    expect(admitted.map((r) => r.status)).toEqual([202, 202, 202]);
    for (const s of [a, b]) {
      const r = await create(s, org.key, { website_url: PROSPECT }, `busy-4-${s.url}`);
      expect(r.status).toBe(429);
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
    }
    sites.release();
  });

  it('given 10 requests in a minute spread over both instances, then the 11th on either is 429', async () => {
    const attempt = async () => {
      const org = await a.org('Chatty both');
      await until('b knows the key', async () => (await call(b, 'GET', '/api/v1/pitches/usage', { key: org.key })).status === 200);
      for (let i = 0; i < 10; i++) expect((await create(i % 2 ? b : a, org.key, { website_url: PROSPECT }, 'chatty')).status).not.toBe(429);
      expect((await create(b, org.key, { website_url: PROSPECT }, 'chatty')).status).toBe(429);
      expect((await create(a, org.key, { website_url: PROSPECT }, 'chatty')).status).toBe(429);
    };
    await inOneMinute(attempt);
  });
});
