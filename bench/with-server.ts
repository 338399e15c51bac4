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
export async function withTwoWorkerInstances(
  websites: number,
  env: Record<string, string> | undefined,
  use: (a: BenchServer, b: BenchServer, natsUrl: string) => Promise<void>,
): Promise<void> {
  const nats = await startNatsServer();
  const options = { natsUrl: nats.url, workers: true, ...(env && { env }) };
  const a = await startBenchServer(websites, undefined, options);
  let b: BenchServer | null = null;
  try {
    b = await startBenchServer(0, undefined, { ...options, join: a });
    await use(a, b, nats.url);
  } finally {
    await b?.close();
    await a.close();
    await nats.dispose();
  }
}
