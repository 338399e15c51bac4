import { afterAll, beforeAll, expect, it } from 'vitest';
import { createOrganization } from '../../commands/organizations/create-organization';
import { ORG_CHECKS_PER_MIN } from '../../src/app/ai-access';
import { loadConfig } from '../../src/config';
import { openPostgres } from '../../src/db';
import { isDomainError } from '../../src/domain/errors';
import { type App, buildApp } from '../../src/http/app';
import { silentLogger } from '../../src/logger';
import { openRuntime, type Runtime } from '../../src/runtime';
import { freshDatabase, type TestDatabase } from '../support/db';
import { guardConnections } from '../support/net';
import { call } from '../support/server';
import { inOneMinute } from '../support/until';
import { D, startFixture, type Fixture } from './ai-access-fixture';
import { onPostgresServer } from '../support/suites';

/**
 * The per-organization limit holds across instances: two app instances (each its own runtime, pool and
 * RateLimiter) over the same Postgres database share one organization's 30 checks per minute.
 */
const suite = onPostgresServer('AI access multi-instance limit test', 'two instances need one database server to share');

interface Instance {
  url: string;
  rt: Runtime;
  app: App;
}

async function startInstance(database: TestDatabase | Awaited<ReturnType<typeof openPostgres>>, databaseUrl: string, fx: Fixture): Promise<Instance> {
  const config = loadConfig({ DATA_DIR: '/tmp/aivis-unused', LOG_LEVEL: 'silent', DATABASE_URL: databaseUrl });
  const rt = await openRuntime({ ...config, embedded: false }, silentLogger(), { database, withoutBus: true });
  await rt.startProjections();
  const app = await buildApp(rt, { outbound: fx.outbound });
  await app.app.listen({ host: '127.0.0.1', port: 0 });
  const addr = app.app.server.address();
  return { url: `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`, rt, app };
}

suite('AI access check limit across instances', () => {
  guardConnections();
  let fx: Fixture;
  let one: Instance;
  let two: Instance;
  beforeAll(async () => {
    fx = await startFixture();
    const db = await freshDatabase();
    one = await startInstance(db, db.url!, fx);
    two = await startInstance(await openPostgres(db.url!), db.url!, fx);
  });
  afterAll(async () => {
    // the second instance first: closing the first drops the database
    for (const i of [two, one]) {
      if (!i) continue;
      await i.app.close();
      await i.rt.close();
    }
    await fx?.close();
  });

  it(`given one organization served by two instances, then ${ORG_CHECKS_PER_MIN} checks spread over both succeed and the next, on either, gets 429 with Retry-After`, async () => {
    await inOneMinute(async () => {
      const r = await createOrganization(one.rt.store, { name: 'Shared', plan: 'enterprise', features: [], pitch_allowance: 0 });
      if (isDomainError(r)) throw new Error(r.message);
      expect(await one.rt.waitForReadModels(r.position, 'all', 60_000)).toBe(true);
      const key = r.result.api_key;
      const check = (i: Instance) => call(i, 'POST', '/api/v1/ai-access/check', { key, body: { domain: D.norobots } });

      // half on each instance, all at once: the shared counter is atomic, not per process
      const answers = await Promise.all(Array.from({ length: ORG_CHECKS_PER_MIN }, (_, n) => check(n % 2 === 0 ? one : two)));
      expect(answers.map((a) => a.status)).toEqual(Array(ORG_CHECKS_PER_MIN).fill(200));
      for (const a of answers) expect(a.body.result).toMatchObject({ domain: D.norobots, status: 'accessible' });

      for (const i of [one, two]) {
        const over = await check(i);
        expect(over.status).toBe(429);
        expect(over.body).toEqual({ error: 'Rate limit exceeded' });
        const retryAfter = Number(over.headers.get('retry-after'));
        expect(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60).toBe(true);
      }
    });
  });
});
