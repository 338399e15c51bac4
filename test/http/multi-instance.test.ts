import { expect, it } from 'vitest';
import { sleep } from '../support/events';
import { call, useTwoInstances } from '../support/server';
import { onPostgresServer } from '../support/suites';

// Two instances over one database: needs a real server.
const suite = onPostgresServer('multi-instance HTTP test', 'two instances need a shared server');

suite('two instances over one database', () => {
  const two = useTwoInstances('Shared');

  it('given a write on either instance, then a read on either sees it at once (50 times)', async () => {
    const { a, b, key } = two;
    for (let i = 0; i < 50; i++) {
      const writer = i % 2 ? a : b;
      const reader = i % 3 ? b : a;
      const r = await call(writer, 'POST', '/api/v1/websites', { key, body: { name: `S${i}`, url: `https://s${i}.example.com` } });
      expect(r.status).toBe(201);
      const list = await call(reader, 'GET', '/api/v1/websites', { key });
      expect(list.body.websites.some((x: { id: string }) => x.id === r.body.website.id)).toBe(true);
    }
  });

  it('given a key cached by one instance, when revoked through the other, then the first refuses it', async () => {
    const { a, b, key } = two;
    const k = (await call(a, 'POST', '/api/v1/api-keys', { key, body: { name: 'cached elsewhere' } })).body;
    expect((await call(b, 'GET', '/api/v1/websites', { key: k.key })).status).toBe(200);
    expect((await call(a, 'DELETE', `/api/v1/api-keys/${k.id}`, { key })).status).toBe(200);
    // the other instance hears the NOTIFY sent at commit; allow it the time of a round trip
    let status = 0;
    for (let i = 0; i < 50; i++) {
      status = (await call(b, 'GET', '/api/v1/websites', { key: k.key })).status;
      if (status === 401) break;
      await sleep(10);
    }
    expect(status).toBe(401);
  });

  it('given both instances running, then each projection has exactly one leader', async () => {
    const { a, b } = two;
    const names = [...a.rt.runners.keys()];
    for (const n of names) {
      const leaders = [a.rt.runners.get(n)!.status().leader, b.rt.runners.get(n)!.status().leader].filter(Boolean);
      expect(leaders, n).toHaveLength(1);
    }
  });
});
