import { afterAll, beforeAll } from 'vitest';
import { onRealPostgres } from './db';
import { call, sharedServer, startServer, type TestServer } from './server';

/** Two instances on one database (one on PGlite, where a second needs a shared Postgres server), an organization and a website. */
export interface RaceSetup {
  a: TestServer;
  b: TestServer | null;
  key: string;
  organization_id: string;
  site: string;
}

/** How an instance starts: alone, or joining another's database. */
export type StartInstance = (join?: TestServer) => Promise<TestServer>;

/** `a` the worker's shared server (sharedServer), `b` a plain instance joining its database: for files that read only their organization's writes. */
export const sharedFirst: StartInstance = (join) => (join ? startServer({}, {}, join) : sharedServer());

/**
 * Starts instance `a` (and `b` joining it on real Postgres) with `start`, then organization `org` with a website
 * `name` at `url`.
 */
export async function startRaceSetup(
  org: string,
  website: { name: string; url: string },
  start: StartInstance = (join) => startServer({}, {}, join),
): Promise<RaceSetup> {
  const a = await start();
  let b: TestServer | null = null;
  try {
    if (onRealPostgres) b = await start(a);
    const { key, organization_id } = await a.org(org);
    const site = (await call(a, 'POST', '/api/v1/websites', { key, body: website })).body.website.id as string;
    return { a, b, key, organization_id, site };
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

/** A race setup with the instance each of N requests at once goes to. */
export interface RaceContext extends RaceSetup {
  /** the instance of request `i`: alternating between `a` and `b` when there is `b`, else `a` */
  on(i: number): TestServer;
}

/** This describe's race setup: filled in before its tests, closed after them. */
export function useRaceSetup(org: string, website: { name: string; url: string }, start?: StartInstance): RaceContext {
  const ctx = { b: null, on: (i: number) => (ctx.b && i % 2 ? ctx.b : ctx.a) } as RaceContext;
  beforeAll(async () => {
    Object.assign(ctx, await startRaceSetup(org, website, start));
  });
  afterAll(() => closeRaceSetup(ctx));
  return ctx;
}
