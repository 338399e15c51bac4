import { afterAll, beforeAll } from 'vitest';
import type { AppOptions } from '../../src/http/app';
import { type NatsServerProcess, startNatsServer } from '../bus/nats-server';
import { type ServerRuntimeOptions, startServer, type TestServer } from './server';

/** How both instances start: startServer's env, app options and runtime options (natsUrl is the private server's). */
export interface InstanceArgs {
  env?: Record<string, string>;
  app?: AppOptions;
  runtime?: Omit<ServerRuntimeOptions, 'natsUrl'>;
}

/**
 * Two instances over one database and a private nats-server with JetStream (needs a real Postgres server): the
 * server, then `a`, then `b` joining `a`'s database, started before the tests (`args` is read then, so it may use what
 * an earlier beforeAll started); after them `b`, `a` and the server are closed in that order.
 */
export function useTwoInstancesOverNats(
  args: () => InstanceArgs,
  ready: (ctx: { nats: NatsServerProcess; a: TestServer; b: TestServer }) => unknown,
): void {
  let nats: NatsServerProcess | undefined;
  let a: TestServer | undefined;
  let b: TestServer | undefined;
  beforeAll(async () => {
    nats = await startNatsServer();
    const { env = {}, app = {}, runtime = {} } = args();
    a = await startServer(env, app, undefined, { ...runtime, natsUrl: nats.url });
    b = await startServer(env, app, a, { ...runtime, natsUrl: nats.url });
    await ready({ nats, a, b });
  }, 60_000);
  afterAll(async () => {
    await b?.close();
    await a?.close();
    await nats?.dispose();
  });
}
