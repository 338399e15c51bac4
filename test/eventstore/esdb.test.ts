import { existsSync } from 'node:fs';
import { homedir, userInfo } from 'node:os';
import { join } from 'node:path';
import type { StartedTestContainer } from 'testcontainers';
import { afterAll, describe, it } from 'vitest';
import { openEsdbEventStore } from '../../src/eventstore/esdb';
import type { EventStore } from '../../src/eventstore/port';
import { sleep } from '../support/events';
import { eventStoreContract } from './contract';

const IMAGE = 'eventstore/eventstore:24.10';
const ENGINE_CHECK_MS = 3_000;

/** Cheap, synchronous: is there any sign of a container engine testcontainers could use? */
function containerEngineHint(): boolean {
  if (process.env.DOCKER_HOST) return true;
  const home = homedir();
  const candidates = [
    '/var/run/docker.sock',
    join(home, '.testcontainers.properties'),
    join(home, '.docker', 'run', 'docker.sock'),
    join(home, '.docker', 'desktop', 'docker.sock'),
    join('/run', 'user', String(userInfo().uid), 'docker.sock'),
  ];
  if (process.env.XDG_RUNTIME_DIR) candidates.push(join(process.env.XDG_RUNTIME_DIR, 'docker.sock'));
  return candidates.some((p) => existsSync(p));
}

/** Asks testcontainers for a runtime only when there is a hint of one, and never for longer than a few seconds. */
async function containerEngineAvailable(): Promise<boolean> {
  if (!containerEngineHint()) return false;
  let timer: NodeJS.Timeout | undefined;
  try {
    const { getContainerRuntimeClient } = await import('testcontainers');
    const timeout = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), ENGINE_CHECK_MS);
      timer.unref();
    });
    return await Promise.race([getContainerRuntimeClient().then(() => true), timeout]);
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}

/** A freshly started node may accept connections before it has become leader: wait until it answers. */
async function whenReady(store: EventStore): Promise<EventStore> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      await store.ping();
      return store;
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await sleep(500);
    }
  }
}

const url = process.env.EVENTSTORE_URL;
let container: StartedTestContainer | undefined;

async function openFromContainer(): Promise<EventStore> {
  const { GenericContainer, Wait } = await import('testcontainers');
  container = await new GenericContainer(IMAGE)
    .withCommand(['--insecure', '--run-projections=None'])
    .withEnvironment({ EVENTSTORE_MEM_DB: 'true' })
    .withExposedPorts(2113)
    .withWaitStrategy(Wait.forHttp('/health/live', 2113).forStatusCodeMatching((s) => s >= 200 && s < 300))
    .withStartupTimeout(150_000)
    .start();
  return whenReady(await openEsdbEventStore(`esdb://${container.getHost()}:${container.getMappedPort(2113)}?tls=false`));
}

if (url) {
  eventStoreContract('EventStoreDB', async () => whenReady(await openEsdbEventStore(url)));
} else if (await containerEngineAvailable()) {
  afterAll(async () => {
    await container?.stop();
  }, 60_000);
  eventStoreContract(`EventStoreDB (${IMAGE} via testcontainers)`, openFromContainer);
} else {
  console.log('EventStoreDB contract skipped: EVENTSTORE_URL unset and no container engine');
  describe.skip('EventStoreDB', () => {
    it.skip('event store contract (needs EVENTSTORE_URL or a container engine)', () => {});
  });
}
