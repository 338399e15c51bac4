import type { Knex } from 'knex';
import { startNatsServer } from '../test/bus/nats-server';
import type { Bench, BenchWith } from './lib';
import { type BenchServer, startBenchServer } from './server';

/** Runs `use` with a bench server of `websites` websites (startBenchServer), closed after whatever `use` did. */
export async function withBenchServer(websites: number, use: (s: BenchServer) => Promise<void>): Promise<void> {
  const s = await startBenchServer(websites);
  try {
    await use(s);
  } finally {
    await s.close();
  }
}

/** A benchmark run on a bench server of `websites` websites (withBenchServer), handed the server and its database. */
export const serverBench = (websites: number, b: BenchWith<{ s: BenchServer; db: Knex }>): Bench => ({
  name: b.name,
  about: b.about,
  run: ({ quick }) => withBenchServer(websites, (s) => b.run({ s, db: s.rt.database.db, quick })),
});

/**
 * Runs `use` with two instances running the job workers over a private nats-server: `a` with `websites` websites,
 * `b` joining a's database; `env` goes to both; `use` is also given the bus's URL. Closed after: b, a, then the bus.
 */
export function withTwoWorkerInstances(
  websites: number,
  env: Record<string, string> | undefined,
  use: (a: BenchServer, b: BenchServer, natsUrl: string) => Promise<void>,
): Promise<void> {
  return withWorkerInstances({ instances: 2, bus: 'nats' }, websites, env, ([a, b], natsUrl) => use(a, b, natsUrl!));
}

/**
 * Runs `use` with `instances` instances running the job workers, the first with `websites` websites and the others
 * joining its database, over a private nats-server (`use` is given its URL), or one instance on the in-process bus
 * (`memory`: the embedded default's bus, here over Postgres; no URL). Closed in reverse order, then the bus.
 */
export async function withWorkerInstances(
  setup: { instances: number; bus: 'nats' | 'memory' },
  websites: number,
  env: Record<string, string> | undefined,
  use: (instances: BenchServer[], natsUrl: string | null) => Promise<void>,
): Promise<void> {
  if (setup.bus === 'memory' && setup.instances !== 1) throw new Error('the in-process bus serves one instance');
  const nats = setup.bus === 'nats' ? await startNatsServer() : null;
  const options = { natsUrl: nats?.url, workers: true, ...(env && { env }) };
  const started: BenchServer[] = [];
  try {
    started.push(await startBenchServer(websites, undefined, options));
    while (started.length < setup.instances) started.push(await startBenchServer(0, undefined, { ...options, join: started[0] }));
    await use(started, nats?.url ?? null);
  } finally {
    for (const s of started.reverse()) await s.close();
    await nats?.dispose();
  }
}
