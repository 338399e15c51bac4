import { createOrganization } from '../commands/organizations/create-organization';
import { isDomainError } from '../src/domain/errors';
import { createSafeFetcher } from '../src/net/safe-fetch';
import { startNatsServer } from '../test/bus/nats-server';
import { startFixtureServer } from '../test/support/net';
import { type Bench, info, median, nowNs, report, secondsSince, sleep } from './lib';
import { type BenchServer, startBenchServer } from './server';

const HOME = (name: string) =>
  `<!doctype html><html><head><title>${name} | Projects</title><meta name="description" content="${name} is project management software for growing teams."></head><body></body></html>`;

/** Admits a report over HTTP and polls its GET (every 100 ms) until it ends; seconds from the POST to completed. */
async function pitchSeconds(s: BenchServer, key: string, site: string, idempotencyKey: string): Promise<number> {
  const t0 = nowNs();
  const r = await fetch(`${s.url}/api/v1/pitches`, {
    method: 'POST',
    headers: { 'x-api-key': key, 'content-type': 'application/json', 'idempotency-key': idempotencyKey },
    body: JSON.stringify({ website_url: site }),
  });
  if (r.status !== 202) throw new Error(`POST /api/v1/pitches answered ${r.status}: ${await r.text()}`);
  const { pitch_id } = (await r.json()) as { pitch_id: string };
  for (;;) {
    const g = await fetch(`${s.url}/api/v1/pitches/${pitch_id}`, { headers: { 'x-api-key': key } });
    const body = (await g.json()) as { pitch: { status: string } };
    if (body.pitch.status === 'completed') return secondsSince(t0);
    if (body.pitch.status === 'failed') throw new Error(`pitch ${pitch_id} failed`);
    await sleep(100);
  }
}

/** Pitch reports end to end (HTTP admission, NATS, the pitch worker with simulated engines, the report read model). */
export const pitches: Bench = {
  name: 'pitches',
  about: 'pitch reports end to end over HTTP and a private NATS JetStream with simulated engines: one alone, then 10 organizations at once',
  async run({ quick }) {
    const site = await startFixtureServer((req, res) => {
      const host = (req.headers.host ?? '').replace(/:\d+$/, '');
      res.writeHead(200, { 'content-type': 'text/html' }).end(HOME(host.split('.')[0]));
    });
    const nats = await startNatsServer();
    const outbound = {
      fetch: createSafeFetcher({ allowAddress: (ip) => ip === '127.0.0.1', resolver: async () => ['127.0.0.1'] }),
      baseUrl: (d: string) => `http://${d}:${site.port}`,
    };
    const s = await startBenchServer(0, undefined, { natsUrl: nats.url, workers: true, env: { ENGINE_MODE: 'simulated' }, outbound });
    try {
      const alone: number[] = [];
      for (let i = 0; i < (quick ? 2 : 5); i++) alone.push(await pitchSeconds(s, s.key, `prospect${i}.example`, `alone-${i}`));
      report('pitch_end_to_end_s', median(alone), 's', {
        goal: { op: '<=', value: 15 },
        note: `p50 of ${alone.length}, one report at a time: POST admission to GET answering completed (4 models x 20 prompts, simulated engines; polled every 100 ms)`,
      });

      const keys: string[] = [];
      for (let i = 0; i < 10; i++) {
        const org = await createOrganization(s.rt.store, { name: `Pitch org ${i}`, plan: 'enterprise', features: ['pitch'], pitch_allowance: 10 });
        if (isDomainError(org)) throw new Error(org.message);
        await s.rt.waitForReadModels(org.position, 'all', 30_000);
        keys.push(org.result.api_key);
      }
      const t0 = nowNs();
      const each = await Promise.all(keys.map((k, i) => pitchSeconds(s, k, `rush${i}.example`, `rush-${i}`)));
      report('pitch_end_to_end_10_orgs_s', secondsSince(t0), 's', {
        goal: { op: '<=', value: 60 },
        note: `10 reports of 10 organizations admitted at once, until the last is completed (slowest ${Math.max(...each).toFixed(1)} s, p50 ${median(each).toFixed(1)} s)`,
      });
      info('pitches: one instance; the job workers handle 8 reports at once per instance');
    } finally {
      await s.close();
      await nats.dispose();
      await site.close();
    }
  },
};
