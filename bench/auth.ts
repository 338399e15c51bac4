import { Pool, request } from 'undici';
import { KeyAuthenticator } from '../src/http/auth';
import { generateApiKey, hashApiKey } from '../src/domain/keys';
import { mount, route } from '../src/http/route';
import { type Bench, info, median, report, sampleUs } from './lib';
import { NO_RATE_LIMIT, startBenchServer } from './server';

export const auth: Bench = {
  name: 'auth',
  about: 'API-key authentication cost per request',
  async run({ quick }) {
    const n = quick ? 1500 : 6000;
    const s = await startBenchServer(3, ({ app, deps }) => {
      const noop = route({ method: 'GET', url: '/bench/auth-only', summary: 'bench', tag: 'bench', handler: async () => ({ ok: true }) });
      // the same mount() as every REST route (auth, validation, error mapping) with the rate limiter stubbed out
      mount(app, { ...deps, limiter: NO_RATE_LIMIT }, [noop]);
      mount(app, deps, [{ ...noop, url: '/bench/auth-and-limit' }]);
      app.get('/bench/bare', async () => ({ ok: true }));
    });
    try {
      const db = s.rt.database.db;
      // in process: the cached path (steady state: an active key is cached for 60 s) and a miss (one indexed join)
      const a = new KeyAuthenticator(db);
      await a.authenticate(s.key);
      const cached = await sampleUs(n * 5, () => a.authenticate(s.key));
      const hash = hashApiKey(s.key);
      const uncached = await sampleUs(n / 3, async () => {
        a.evict(hash);
        await a.authenticate(s.key);
      });
      const evictOnly = await sampleUs(n / 3, () => a.evict(hash));

      // over HTTP: one keep-alive connection, requests interleaved so drift hits all three routes alike
      const pool = new Pool(s.url, { connections: 1 });
      // a well-formed key nobody has: refused from the negative cache after its first lookup (5 s, renewed on expiry)
      const unknownKey = generateApiKey();
      const get = async (path: string, key: boolean | string) => {
        const r = await request(`${s.url}${path}`, { dispatcher: pool, headers: key ? { 'x-api-key': key === true ? s.key : key } : {} });
        await r.body.text();
        const want = typeof key === 'string' ? 401 : 200;
        if (r.statusCode !== want) throw new Error(`${path}: ${r.statusCode}`);
      };
      for (let i = 0; i < 300; i++)
        await Promise.all([
          get('/bench/bare', false),
          get('/bench/auth-only', true),
          get('/bench/auth-and-limit', true),
          get('/bench/auth-only', unknownKey),
        ]);
      // paired: each round times the three routes back to back (order rotated), and the figure is the median of the
      // per-round differences, which cancels most of the drift a busy machine adds to both sides
      const routes = [
        { path: '/bench/bare', key: false as boolean | string, us: [] as number[] },
        { path: '/bench/auth-only', key: true as boolean | string, us: [] as number[] },
        { path: '/bench/auth-and-limit', key: true as boolean | string, us: [] as number[] },
        { path: '/bench/auth-only', key: unknownKey as boolean | string, us: [] as number[] },
      ];
      for (let i = 0; i < n; i++) {
        for (let j = 0; j < routes.length; j++) {
          const r = routes[(i + j) % routes.length];
          r.us.push((await sampleUs(1, () => get(r.path, r.key)))[0]);
        }
      }
      const [bare, authOnly, authLimit, unknownOnly] = routes.map((r) => r.us);
      const diff = (a: number[], b: number[]) => median(a.map((x, i) => x - b[i]));
      await pool.close();

      const httpAuth = diff(authOnly, bare);
      info(
        `auth: in-process KeyAuthenticator.authenticate ${cached.length} cached calls and ${uncached.length} misses (cache evicted before each); over HTTP ${n} sequential requests per route on one keep-alive connection`,
      );
      report('http_auth_overhead_us', httpAuth, 'us', {
        goal: { op: '<=', value: 200 },
        note: `over HTTP: median per-round difference, GET through mount() with the key (rate limiter stubbed; median ${median(authOnly).toFixed(0)} us) vs a bare route on the same server (median ${median(bare).toFixed(0)} us)`,
      });
      report('http_unknown_key_us', diff(unknownOnly, bare), 'us', {
        note: `over HTTP: a well-formed unknown key, refused with 401 (median ${median(unknownOnly).toFixed(0)} us) vs the bare route; cached negatively for 5 s, so one lookup per 5 s`,
      });
      report('http_auth_cached_us', median(cached), 'us', {
        note: 'in process: regex + sha256 + cache lookup (the path of every request after the first per key per minute)',
      });
      report('http_auth_uncached_us', median(uncached) - median(evictOnly), 'us', {
        note: 'in process: cache miss, one indexed join rm_api_keys x rm_organizations',
      });
      report('http_rate_limit_overhead_us', diff(authLimit, authOnly), 'us', {
        note: 'not auth: the per-organization limiter, one upsert + commit in Postgres per request (median over HTTP, with vs without it)',
      });
    } finally {
      await s.close();
    }
  },
};
