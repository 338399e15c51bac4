// MCP sign-in over plain HTTP: a server whose public URL is known before it starts (the issuer), a client registered
// dynamically, PKCE, and a cookie jar that walks the sign-in and consent pages as a browser would.
import { createHash, randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import { expect } from 'vitest';
import { setPassword } from '../../src/auth/accounts';
import { type ServerRuntimeOptions, startServer, type TestServer } from './server';
import { useWorld, type World } from './tenancy';

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

/** A server at a port chosen first, so PUBLIC_BASE_URL (the issuer, the resource) is its own URL. `join`: a second instance under the same public URL. */
export async function startOAuthServer(join?: TestServer, env: Record<string, string> = {}, runtime: ServerRuntimeOptions = {}): Promise<TestServer> {
  const port = await freePort();
  const base = join ? new URL(join.url).origin : `http://127.0.0.1:${port}`;
  return startServer({ PORT: String(port), PUBLIC_BASE_URL: base, ...env }, {}, join, runtime);
}

/** The password the sign-in tests give their users. */
export const PASSWORD = 'correct horse battery';

/** The viewer useSignInWorld gives org A: of website a1 only (an explicit website membership, not an organization member). */
export const VIEWER_EMAIL = 'viewer@a.example.com';
/** The organization admin useSignInWorld gives org A. */
export const ADMIN_EMAIL = 'admin@a.example.com';

/**
 * useWorld on an OAuth server (`start`; startOAuthServer's by default) whose org A has two users with PASSWORD: the
 * viewer VIEWER_EMAIL and the admin ADMIN_EMAIL.
 */
export function useSignInWorld(
  ready: (ctx: { s: TestServer; w: World; viewerId: string; adminId: string }) => unknown,
  start: () => Promise<TestServer> = () => startOAuthServer(),
): void {
  useWorld(async ({ s, w }) => {
    const viewerId = await userWithPassword(s, w.a.key, VIEWER_EMAIL, PASSWORD, 'viewer', w.a.a1);
    const adminId = await userWithPassword(s, w.a.key, ADMIN_EMAIL, PASSWORD, 'admin');
    await ready({ s, w, viewerId, adminId });
  }, start);
}

export const REDIRECT_URI = 'http://127.0.0.1:53682/callback';

export async function registerClient(s: { url: string }, metadata: Record<string, unknown> = {}) {
  const res = await fetch(new URL('/oauth/register', s.url), {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      client_name: 'Test Assistant',
      redirect_uris: [REDIRECT_URI],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      ...metadata,
    }),
  });
  return { status: res.status, body: (await res.json()) as any };
}

export function pkce() {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

/** A browser's cookies, enough for one origin. */
export class Jar {
  private cookies = new Map<string, string>();
  header(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }
  take(res: Response) {
    for (const c of res.headers.getSetCookie()) {
      const [pair, ...attrs] = c.split(';');
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      const expired = attrs.some((a) => /^\s*expires=Thu, 01 Jan 1970/i.test(a)) || value === '';
      if (expired) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }
  async fetch(url: string | URL, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    if (this.cookies.size) headers.set('cookie', this.header());
    const res = await fetch(url, { ...init, headers, redirect: 'manual' });
    this.take(res);
    return res;
  }
  /** Submits a form (as the sign-in and consent pages do), with these cookies. */
  post(url: string | URL, form: Record<string, string>, headers: Record<string, string> = {}): Promise<Response> {
    return this.fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      body: new URLSearchParams(form).toString(),
    });
  }
}

export const csrfIn = (page: string) => /name="csrf" value="([^"]+)"/.exec(page)?.[1] ?? '';

export interface Authorization {
  client_id: string;
  verifier: string;
  resource?: string;
  state?: string;
}

/** The authorization request's URL (what an assistant opens in the browser). */
export function authorizeUrl(
  s: { url: string },
  a: { client_id: string; challenge: string; resource?: string; state?: string },
  extra: Record<string, string> = {},
) {
  const u = new URL('/oauth/authorize', s.url);
  u.searchParams.set('response_type', 'code');
  u.searchParams.set('client_id', a.client_id);
  u.searchParams.set('redirect_uri', REDIRECT_URI);
  u.searchParams.set('code_challenge', a.challenge);
  u.searchParams.set('code_challenge_method', 'S256');
  u.searchParams.set('state', a.state ?? 'st-1');
  if (a.resource) u.searchParams.set('resource', a.resource);
  for (const [k, v] of Object.entries(extra)) u.searchParams.set(k, v);
  return u;
}

/** Follows same-origin redirects until a page (200) or a redirect elsewhere (the client's redirect URI). */
export async function follow(jar: Jar, s: { url: string }, res: Response): Promise<{ res: Response; url: URL; body: string }> {
  let url = new URL(res.url || s.url);
  for (let i = 0; i < 10 && res.status >= 300 && res.status < 400; i++) {
    url = new URL(res.headers.get('location')!, url);
    if (url.origin !== new URL(s.url).origin) return { res, url, body: '' };
    res = await jar.fetch(url);
  }
  return { res, url, body: await res.text() };
}

/** Signs in and allows through the pages; returns the code the client's redirect URI receives. */
export async function authorizeWithPassword(
  s: { url: string },
  a: { client_id: string; challenge: string; resource?: string },
  email: string,
  password: string,
  jar = new Jar(),
): Promise<{ code: string; redirect: URL; jar: Jar }> {
  let page = await follow(jar, s, await jar.fetch(authorizeUrl(s, a)));
  if (page.body.includes('name="password"')) {
    expect(page.res.status).toBe(200);
    const login = await jar.post(new URL(`${page.url.pathname}/login`, s.url), { csrf: csrfIn(page.body), email, password });
    expect(login.status, await login.clone().text()).toBe(303);
    page = await follow(jar, s, login);
  }
  if (page.body.includes('name="decision"')) {
    const consent = await jar.post(new URL(`${page.url.pathname}/consent`, s.url), { csrf: csrfIn(page.body), decision: 'allow' });
    expect(consent.status).toBe(303);
    page = await follow(jar, s, consent);
  }
  expect(page.url.origin, page.body).toBe(new URL(REDIRECT_URI).origin);
  const code = page.url.searchParams.get('code');
  expect(code, page.url.toString()).toBeTruthy();
  return { code: code!, redirect: page.url, jar };
}

/** The token request's parameters that exchange an authorization code (the resource, when named, added by the caller). */
export function codeGrant(code: string, client_id: string, code_verifier: string) {
  return { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, client_id, code_verifier };
}

/** The token request's parameters that use a refresh token of the client for the resource. */
export function refreshGrant(refresh_token: string, client_id: string, resource: string) {
  return { grant_type: 'refresh_token', refresh_token, client_id, resource };
}

export async function token(s: { url: string }, params: Record<string, string>) {
  const res = await fetch(new URL('/oauth/token', s.url), {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(params).toString(),
  });
  return { status: res.status, body: (await res.json()) as any };
}

/** Registers a client and opens an authorization for `resource` in a new browser: the sign-in page, and the browser's jar. */
export async function signInPage(s: { url: string }, resource: string) {
  const reg = await registerClient(s);
  const jar = new Jar();
  const page = await follow(jar, s, await jar.fetch(authorizeUrl(s, { client_id: reg.body.client_id, challenge: pkce().challenge, resource })));
  return { page, jar };
}

/**
 * Registers a client, signs the user in through the pages and allows (in `jar` when given): the code, with the
 * client and the PKCE verifier that exchange it. The authorization names `resource`, or none when it is not given.
 */
export async function authorizedCode(s: { url: string }, email: string, password: string, o: { resource?: string; jar?: Jar } = {}) {
  const reg = await registerClient(s);
  expect(reg.status, JSON.stringify(reg.body)).toBe(201);
  const client_id = reg.body.client_id as string;
  const p = pkce();
  const named = o.resource === undefined ? {} : { resource: o.resource };
  const { code } = await authorizeWithPassword(s, { client_id, challenge: p.challenge, ...named }, email, password, o.jar);
  return { code, client_id, verifier: p.verifier };
}

/**
 * Registers a client, signs the user in through the pages and exchanges the code: the token response. The client
 * names `/api/mcp` as its resource, or none with `resource: null`.
 */
export async function signIn(s: { url: string }, email: string, password: string, o: { resource?: string | null } = {}) {
  const resource = o.resource === undefined ? `${s.url}/api/mcp` : o.resource;
  const named: { resource?: string } = resource === null ? {} : { resource };
  const { code, client_id, verifier } = await authorizedCode(s, email, password, named);
  const t = await token(s, { ...codeGrant(code, client_id, verifier), ...named });
  expect(t.status, JSON.stringify(t.body)).toBe(200);
  return { ...t.body, client_id };
}

/**
 * A user with a password: invited directly with the role (a system role's name or `{role_id}`; to the organization,
 * or to one website when `websiteId` is given), then the password set as the CLI does.
 */
export async function userWithPassword(
  s: TestServer,
  key: string,
  email: string,
  password: string,
  role: 'admin' | 'viewer' | { role_id: string } = 'viewer',
  websiteId?: string,
) {
  const given = typeof role === 'string' ? { role } : role;
  const res = await fetch(new URL('/api/v1/invites', s.url), {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key },
    body: JSON.stringify(
      websiteId
        ? { type: 'website', website_id: websiteId, invite_method: 'direct', email, ...given }
        : { type: 'organization', invite_method: 'direct', email, ...given },
    ),
  });
  const body = (await res.json()) as any;
  if (res.status !== 200) throw new Error(`invite: ${res.status} ${JSON.stringify(body)}`);
  // setPassword finds the user in the team read model: it must hold the invitation's user (under load it may lag)
  await s.rt.waitForReadModels(await s.rt.store.lastPosition(), ['team'], 30_000);
  const r = await setPassword(s.rt, { email, password });
  await s.rt.waitForReadModels(await s.rt.store.lastPosition(), ['team'], 30_000);
  return r.user_id;
}
