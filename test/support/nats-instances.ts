import { afterAll, beforeAll } from 'vitest';
import type { AppOptions } from '../../src/http/app';
import { type NatsServerProcess, startNatsServer } from '../bus/nats-server';
import { type ServerRuntimeOptions, startServer, type TestServer } from './server';

/** How the instances start: startServer's env, app options and runtime options (natsUrl is the private server's). */
export interface InstanceArgs {
  env?: Record<string, string>;
  app?: AppOptions;
  runtime?: Omit<ServerRuntimeOptions, 'natsUrl'>;
}

/**
 * `count` instances over a private nats-server with JetStream, the later ones joining the first one's database: the
 * server, then the instances in order, started before the tests (`args` is read then, so it may use what an earlier
 * beforeAll started); after them the instances in reverse order, then the server.
 */
function useInstancesOverNats(count: number, args: () => InstanceArgs, ready: (nats: NatsServerProcess, instances: TestServer[]) => unknown): void {
  let nats: NatsServerProcess | undefined;
  const instances: TestServer[] = [];
  beforeAll(async () => {
    nats = await startNatsServer();
    const { env = {}, app = {}, runtime = {} } = args();
    for (let i = 0; i < count; i++) instances.push(await startServer(env, app, instances[0], { ...runtime, natsUrl: nats.url }));
    await ready(nats, instances);
  }, 60_000);
  afterAll(async () => {
    for (const s of instances.reverse()) await s.close();
    await nats?.dispose();
  });
}

/** One instance over a private nats-server with JetStream (the job workers' durable consumers are its own). */
export function useInstanceOverNats(args: () => InstanceArgs, ready: (ctx: { nats: NatsServerProcess; s: TestServer }) => unknown): void {
  useInstancesOverNats(1, args, (nats, [s]) => ready({ nats, s }));
}

/** Two instances over one database and a private nats-server (needs a real Postgres server): `b` joins `a`'s database. */
export function useTwoInstancesOverNats(
  args: () => InstanceArgs,
  ready: (ctx: { nats: NatsServerProcess; a: TestServer; b: TestServer }) => unknown,
): void {
  useInstancesOverNats(2, args, (nats, [a, b]) => ready({ nats, a, b }));
}

/**
 * For a describe block whose test starts NATS itself (its instances run in child processes): the returned function
 * starts a private nats-server, which the block disposes of after its tests.
 */
export function natsServerForBlock(): () => Promise<NatsServerProcess> {
  let nats: NatsServerProcess | undefined;
  afterAll(async () => {
    await nats?.dispose();
  });
  return async () => {
    nats = await startNatsServer();
    return nats;
  };
}
