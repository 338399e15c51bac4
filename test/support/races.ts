import { onRealPostgres } from './db';
import { call, startServer, type TestServer } from './server';

/** Two instances on one database (one on PGlite, where a second needs a shared Postgres server), an organization and a website. */
export interface RaceSetup {
  a: TestServer;
  b: TestServer | null;
  key: string;
  site: string;
}

/** Starts instance `a` (and `b` joining it on real Postgres), then organization `org` with a website `name` at `url`. */
export async function startRaceSetup(org: string, website: { name: string; url: string }): Promise<RaceSetup> {
  const a = await startServer();
  let b: TestServer | null = null;
  try {
    if (onRealPostgres) b = await startServer({}, {}, a);
    const key = (await a.org(org)).key;
    const site = (await call(a, 'POST', '/api/v1/websites', { key, body: website })).body.website.id as string;
    return { a, b, key, site };
  } catch (e) {
    await closeRaceSetup({ a, b });
    throw e;
  }
}

/** Closes `b` before `a` (the instance it joined). */
export async function closeRaceSetup({ a, b }: { a?: TestServer; b?: TestServer | null }): Promise<void> {
  await b?.close();
  await a?.close();
}
