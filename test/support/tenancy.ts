import { afterAll, expect, it } from 'vitest';
import { call, startServer, type TestServer, useServer } from './server';
import { startSmtp, type TestSmtp } from './smtp';

/** An id no resource has: a well-formed UUID that answers 404 wherever an id is looked up. */
export const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000';

/**
 * Two organizations and the keys every endpoint is checked with:
 * A owns websites a1 and a2; `scoped` reaches a2 only; `revoked` was revoked; B owns b1.
 */
export interface World {
  s: TestServer;
  a: { key: string; organization_id: string; owner_user_id: string; a1: string; a2: string; scoped: string; plainGlobal: string; revoked: string };
  b: { key: string; organization_id: string; b1: string };
}

export async function buildWorld(s: TestServer): Promise<World> {
  const a = await s.org('Org A');
  const b = await s.org('Org B');
  const site = async (key: string, name: string, url: string) => {
    const r = await call(s, 'POST', '/api/v1/websites', { key, body: { name, url } });
    if (r.status !== 201) throw new Error(`website: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body.website.id as string;
  };
  const a1 = await site(a.key, 'Acme', 'https://acme.example.com');
  const a2 = await site(a.key, 'Acme Two', 'https://two.acme.example.com');
  const b1 = await site(b.key, 'Bravo', 'https://bravo.example.com');
  const key = async (body: unknown) => {
    const r = await call(s, 'POST', '/api/v1/api-keys', { key: a.key, body });
    if (r.status !== 201) throw new Error(`key: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body as { id: string; key: string };
  };
  const scoped = await key({ name: 'scoped to a2', website_ids: [a2] });
  const plainGlobal = await key({ name: 'global, not partner' });
  const revoked = await key({ name: 'revoked' });
  const rv = await call(s, 'DELETE', `/api/v1/api-keys/${revoked.id}`, { key: a.key });
  if (rv.status !== 200) throw new Error(`revoke: ${rv.status}`);
  return {
    s,
    a: {
      key: a.key,
      organization_id: a.organization_id,
      owner_user_id: a.owner_user_id,
      a1,
      a2,
      scoped: scoped.key,
      plainGlobal: plainGlobal.key,
      revoked: revoked.key,
    },
    b: { key: b.key, organization_id: b.organization_id, b1 },
  };
}

/**
 * This file's server and World: registers the hooks that start a server and build the World before all tests
 * and close the server after them. `ready` receives both (`({ s, w } = ctx)` assigns them) and may prepare more
 * (clients, fixtures); `start` replaces the plain `startServer()` (e.g. to pass an outbound fetch). Vitest runs
 * `afterAll` hooks in reverse order, so one registered after this call (closing clients) runs before the server closes.
 */
export function useWorld(ready: (ctx: { s: TestServer; w: World }) => unknown, start: () => Promise<TestServer> = () => startServer()): void {
  useServer(async (s) => ready({ s, w: await buildWorld(s) }), start);
}

/**
 * useWorld whose server sends email through a test SMTP server (started before it, closed after it); `ready` receives
 * the SMTP server with the server and World. `env` adds to the mail settings.
 */
export function useWorldWithSmtp(ready: (ctx: { s: TestServer; w: World; smtp: TestSmtp }) => unknown, env: Record<string, string> = {}): void {
  let smtp: TestSmtp | undefined;
  // registered before useWorld's: vitest runs afterAll hooks in reverse order, so this one runs after the server closed
  afterAll(async () => smtp?.close());
  useWorld(
    (ctx) => ready({ ...ctx, smtp: smtp! }),
    async () => {
      smtp = await startSmtp();
      return startServer({ SMTP_URL: smtp.url, MAIL_FROM: 'aivis <no-reply@aivis.test>', ...env });
    },
  );
}

export interface EndpointUnderTest {
  method: string;
  /** the request for a website: path, query and body */
  request(websiteId: string): { path: string; query?: Record<string, string>; body?: unknown };
  /** true when the endpoint addresses one website (website_id in query, path or body) */
  websiteScoped?: boolean;
  /** keys that may not call it at all and the status they get (e.g. scoped keys on global-only endpoints) */
  globalOnly?: boolean;
}

/**
 * The tenancy checks every endpoint gets: no key, a revoked key, the other organization's key, a scoped key
 * outside the website, each a 4xx with {error} and nothing written to the event log.
 */
export function tenancyChecks(name: string, getWorld: () => World, ep: EndpointUnderTest) {
  const refused = async (key: string | null, websiteId: string, status: number, error?: string) => {
    const w = getWorld();
    const before = await w.s.head();
    const r = ep.request(websiteId);
    const res = await call(w.s, ep.method, r.path, { key, query: r.query, body: r.body });
    expect(res.status, JSON.stringify(res.body)).toBe(status);
    expect(typeof res.body?.error).toBe('string');
    if (error) expect(res.body.error).toBe(error);
    expect(await w.s.head()).toBe(before);
  };
  it(`${name}: without a key, then 401 Unauthorized and nothing written`, () => refused(null, getWorld().a.a1, 401, 'Unauthorized'));
  it(`${name}: with a malformed key, then 401`, () => refused('aivis_not-a-key', getWorld().a.a1, 401, 'Unauthorized'));
  it(`${name}: with a revoked key, then 401`, () => refused(getWorld().a.revoked, getWorld().a.a1, 401, 'Unauthorized'));
  if (ep.websiteScoped) {
    it(`${name}: with another organization's key, then 403 and nothing written`, () =>
      refused(getWorld().b.key, getWorld().a.a1, 403, 'Unauthorized access to this website'));
    it(`${name}: with a key scoped to another website, then 403 and nothing written`, () =>
      refused(
        getWorld().a.scoped,
        getWorld().a.a1,
        403,
        ep.globalOnly ? 'Forbidden: global API key required' : 'Unauthorized access to this website',
      ));
  }
  if (ep.globalOnly) {
    it(`${name}: with a scoped key, then 403 global key required`, () =>
      refused(getWorld().a.scoped, getWorld().a.a2, 403, 'Forbidden: global API key required'));
  }
}

/**
 * tenancyChecks for an endpoint that addresses one website by its website_id: in the query of a GET or DELETE, in
 * the body otherwise, with the `fields` given beside it; named `<method> <path>`.
 */
export function websiteTenancyChecks(getWorld: () => World, method: string, path: string, fields: Record<string, unknown> = {}) {
  const inQuery = method === 'GET' || method === 'DELETE';
  tenancyChecks(`${method} ${path}`, getWorld, {
    method,
    websiteScoped: true,
    request: (id) =>
      inQuery ? { path, query: { website_id: id, ...fields } as Record<string, string> } : { path, body: { website_id: id, ...fields } },
  });
}

/**
 * tenancyChecks for a website's collection as src/http/routes/catalog.ts builds it (websiteCollection, websiteItem):
 * `GET <path>` and `POST <path>` (`create`, with the website in the body), and for an unknown item `PATCH <path>/{id}`
 * (`patch`, with the website in the body) and `DELETE <path>/{id}` (the website in the query) where given.
 */
export function collectionTenancyChecks(
  path: string,
  getWorld: () => World,
  c: { create: Record<string, unknown>; patch?: Record<string, unknown>; remove?: boolean },
) {
  const item = `${path}/${UNKNOWN_ID}`;
  websiteTenancyChecks(getWorld, 'GET', path);
  websiteTenancyChecks(getWorld, 'POST', path, c.create);
  const { patch } = c;
  if (patch)
    tenancyChecks(`PATCH ${path}/{id}`, getWorld, {
      method: 'PATCH',
      websiteScoped: true,
      request: (id) => ({ path: item, body: { website_id: id, ...patch } }),
    });
  if (c.remove)
    tenancyChecks(`DELETE ${path}/{id}`, getWorld, {
      method: 'DELETE',
      websiteScoped: true,
      request: (id) => ({ path: item, query: { website_id: id } }),
    });
}
