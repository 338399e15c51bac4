import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSafeFetcher } from '../../src/net/safe-fetch';

let port = 0;
let connections = 0;
const server = createServer((req, res) => {
  req.resume();
  req.on('end', () => res.end('ok'));
});
server.on('connection', () => connections++);
beforeAll(async () => {
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((ok) => server.close(ok));
});

describe('a keep-alive safe fetcher', () => {
  it('given an allowed address, then ten requests reuse their connections (at most two opened)', async () => {
    const f = createSafeFetcher({ keepAlive: true, allowAddress: (ip) => ip === '127.0.0.1' });
    const before = connections;
    for (let i = 0; i < 10; i++) expect((await f(`http://127.0.0.1:${port}/x`, { method: 'POST', body: 'b' })).status).toBe(200);
    expect(connections - before).toBeLessThanOrEqual(2);
  });

  it('given a private address, by literal or by name, then it is still refused', async () => {
    const f = createSafeFetcher({ keepAlive: true, resolver: async () => ['127.0.0.1'] });
    await expect(f(`http://127.0.0.1:${port}/x`)).rejects.toMatchObject({ code: 'BLOCKED_ADDRESS' });
    await expect(f(`http://inside.example.com:${port}/x`)).rejects.toMatchObject({ code: 'BLOCKED_ADDRESS' });
  });
});
