import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config';
import { ANON_REQUESTS_PER_MIN } from '../../src/mcp/server';
import { awayFromMinuteEdge, post, publicCall } from '../mcp/support';
import { startServer, type TestServer, useServer } from '../support/server';

// Per-client limits (MCP without a key: requests and public scans per client address) behind a reverse proxy. The test
// process is the proxy: every request comes from 127.0.0.1, each client named by X-Forwarded-For.
const CLIENT_A = '203.0.113.7';
const CLIENT_B = '198.51.100.23';
const via = (client: string) => ({ 'x-forwarded-for': client });

describe('TRUST_PROXY', () => {
  it('given its values, then unset and false trust nobody, and true, a hop count or a list of addresses are taken as fastify takes them', () => {
    const trust = (v?: string) => loadConfig({ TRUST_PROXY: v }).trustProxy;
    expect(trust(undefined)).toBe(false);
    expect(trust('false')).toBe(false);
    expect(trust('0')).toBe(false);
    expect(trust('true')).toBe(true);
    expect(trust('2')).toBe(2);
    expect(trust('10.0.0.1, 10.1.0.0/16,loopback')).toEqual(['10.0.0.1', '10.1.0.0/16', 'loopback']);
    expect(trust('fd00::/8,::1,10.0.0.0/255.0.0.0,uniquelocal,linklocal')).toEqual([
      'fd00::/8',
      '::1',
      '10.0.0.0/255.0.0.0',
      'uniquelocal',
      'linklocal',
    ]);
    for (const bad of ['yes', 'TRUE', '101', '-1', '10.0.0.1/33', '::1/129', '300.1.1.1', '10.0.0.1,', 'proxy.example.com', '10.0.0.0/8/8']) {
      expect(() => trust(bad), bad).toThrow(ConfigError);
      expect(() => trust(bad), bad).toThrow(/^invalid configuration: TRUST_PROXY must be false, true, a hop count/);
    }
  });

  /** Spends client A's whole anonymous budget through the proxy, then asks once more as A and once as B. */
  const afterABudget = async (s: TestServer) => {
    await awayFromMinuteEdge(10_000);
    for (let i = 0; i < ANON_REQUESTS_PER_MIN; i += 10) {
      const batch = await Promise.all(Array.from({ length: 10 }, (_, j) => post(s, publicCall(i + j), via(CLIENT_A))));
      expect(batch.map((r) => r.status)).toEqual(Array(10).fill(200));
    }
    return { a: (await post(s, publicCall('a'), via(CLIENT_A))).status, b: (await post(s, publicCall('b'), via(CLIENT_B))).status };
  };

  describe('off (the default)', () => {
    let s: TestServer;
    useServer((server) => (s = server));

    it('given two clients behind one proxy, then they share one anonymous limit, keyed by the proxy address', async () => {
      expect(await afterABudget(s)).toEqual({ a: 429, b: 429 });
    });
  });

  for (const setting of ['loopback', '1']) {
    describe(`TRUST_PROXY=${setting} (the proxy at 127.0.0.1)`, () => {
      let s: TestServer;
      useServer(
        (server) => (s = server),
        () => startServer({ TRUST_PROXY: setting }),
      );

      it('given two clients behind the proxy, then each has its own anonymous limit, keyed by its forwarded address', async () => {
        expect(await afterABudget(s)).toEqual({ a: 429, b: 200 });
      });

      it('given a client that names a chain of addresses, then only the hop the proxy added counts (a forged left end is ignored)', async () => {
        // the proxy appends the address it saw (B) to what the client sent; B is not spent, so the forged A is not used
        const r = await post(s, publicCall('forged'), { 'x-forwarded-for': `${CLIENT_A}, ${CLIENT_B}` });
        expect(r.status).toBe(200);
      });
    });
  }
});
