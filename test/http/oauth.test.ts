import { createPrivateKey, createSign } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import {
  PRINCIPAL_TTL_MS,
  setPassword,
  SIGN_IN_FAILED,
  SIGN_IN_PER_ACCOUNT,
  SIGN_IN_PER_ADDRESS,
  SIGN_IN_WINDOW_SECONDS,
} from '../../src/auth/accounts';
import { inOneWindow, until } from '../support/until';
import { call, type TestServer } from '../support/server';
import { REGISTRATIONS_PER_HOUR, registrationLimitKey } from '../../src/http/oauth';
import type { World } from '../support/tenancy';
import { caughtUp } from '../support/server';
import {
  ADMIN_EMAIL,
  authorizedCode,
  authorizeUrl,
  codeGrant,
  csrfIn,
  follow,
  PASSWORD,
  pkce,
  REDIRECT_URI,
  refreshGrant,
  registerClient,
  signIn,
  signInPage,
  startOAuthServer,
  token,
  userWithPassword,
  useSignInWorld,
  VIEWER_EMAIL,
} from '../support/oauth';
import { post } from '../mcp/support';
import { startSmtp, type TestSmtp } from '../support/smtp';

// MCP sign-in over plain HTTP (the browser test drives the same pages in Chromium): discovery, registration, the
// authorization code with PKCE, the resource in the token's audience, rotating refresh tokens, the sign-in page's
// rules, and the signed-in user's permissions on the tool server.

let s: TestServer;
let w: World;
let smtp: TestSmtp;
let viewerId: string;
let adminId: string;

// registered before the server's: vitest runs afterAll hooks in reverse order, so the outbox closes after the server
afterAll(async () => smtp?.close());
useSignInWorld(
  (ctx) => ({ s, w, viewerId, adminId } = ctx),
  async () => {
    smtp = await startSmtp();
    return startOAuthServer(undefined, { SMTP_URL: smtp.url, MAIL_FROM: 'aivis <no-reply@aivis.test>' });
  },
);

const resource = () => `${s.url}/api/mcp`;
const metadataUrl = () => `${s.url}/.well-known/oauth-protected-resource/api/mcp`;
const rpc = (method: string, params?: unknown, id = 1) => ({ jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }) });
const initialize = rpc('initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } });
const bearer = (t: string) => ({ authorization: `Bearer ${t}` });

/** Registers a client, signs the user in through the pages, exchanges the code: the token response. */
const signedIn = (email: string, password = PASSWORD) => signIn(s, email, password);

async function tool(headers: Record<string, string>, name: string, args: Record<string, unknown>) {
  const r = await post(s, rpc('tools/call', { name, arguments: args }), headers);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.result as { isError?: boolean; structuredContent: any };
}

describe('MCP sign-in: discovery', () => {
  it('given no credentials, when anything but the public tool is asked (the handshake included), then 401 with the challenge naming the resource metadata', async () => {
    for (const body of [
      initialize,
      rpc('ping'),
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      rpc('tools/list'),
      rpc('tools/call', { name: 'list_websites', arguments: {} }),
      rpc('resources/list'),
    ]) {
      const r = await post(s, body);
      expect(r.status, JSON.stringify(body)).toBe(401);
      expect(r.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="${metadataUrl()}"`);
      expect(r.body).toEqual({ error: 'Unauthorized' });
    }
  });

  it('given no credentials, when the public tool is called (no handshake: the server is stateless), then it works as before', async () => {
    const r = await post(s, rpc('tools/call', { name: 'check_public_ai_access', arguments: { domain: 'nonexistent.invalid' } }));
    expect(r.status).toBe(200);
    // the tool itself answers (a reserved domain: its own 400, no scan spent)
    expect(r.body.result).toMatchObject({ isError: true, structuredContent: { status: 400 } });
    expect(r.body.result.structuredContent.error).toContain('.invalid is reserved');
  });

  it('given the protected-resource metadata at both well-known paths, then it names the MCP endpoint and this server as its authorization server, without scopes', async () => {
    for (const path of ['/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/api/mcp']) {
      const r = await call(s, 'GET', path);
      expect(r.status).toBe(200);
      expect(r.body).toEqual({ resource: resource(), authorization_servers: [s.url], bearer_methods_supported: ['header'], resource_name: 'aivis' });
    }
  });

  it('given the authorization-server metadata, then registration, authorization and token endpoints, S256 only and no scopes_supported', async () => {
    const r = await call(s, 'GET', '/.well-known/oauth-authorization-server');
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      issuer: s.url,
      authorization_endpoint: `${s.url}/oauth/authorize`,
      token_endpoint: `${s.url}/oauth/token`,
      registration_endpoint: `${s.url}/oauth/register`,
      code_challenge_methods_supported: ['S256'],
      response_types_supported: ['code'],
      grant_types_supported: ['authorization_code', 'refresh_token'],
    });
    expect(r.body).not.toHaveProperty('scopes_supported');
    // every endpoint it names answers (the JWKS, and the others refuse an empty request rather than 404)
    expect((await fetch(r.body.jwks_uri)).status).toBe(200);
    expect((await fetch(r.body.token_endpoint, { method: 'POST' })).status).toBe(400);
  });
});

describe('MCP sign-in: registration', () => {
  it('given redirect URIs on localhost or HTTPS, then the client is registered; plain HTTP elsewhere or a custom scheme is refused', async () => {
    for (const uris of [['http://localhost:33418/cb'], ['http://127.0.0.1/cb'], ['https://app.example.com/cb']]) {
      const r = await registerClient(s, { redirect_uris: uris });
      expect(r.status, JSON.stringify(r.body)).toBe(201);
      expect(r.body.redirect_uris).toEqual(uris);
    }
    for (const uris of [['http://app.example.com/cb'], ['https://app.example.com/cb', 'http://10.0.0.5/cb'], ['com.example.app:/cb']]) {
      const r = await registerClient(s, { redirect_uris: uris, ...(uris[0].startsWith('com.') ? { application_type: 'native' } : {}) });
      expect(r.status, JSON.stringify(uris)).toBe(400);
      expect(r.body.error).toBe('invalid_redirect_uri');
    }
  });
});

describe('MCP sign-in: registration limit', () => {
  it('given an address that registered its hourly number of clients, then the next registration is 429 with Retry-After', async () => {
    const key = registrationLimitKey('127.0.0.1');
    const window = Math.floor(Date.now() / 1000 / 3600) * 3600;
    const db = s.rt.database.db;
    await db('aivis_rate_limits')
      .insert({ key, window_start: window, count: REGISTRATIONS_PER_HOUR, window_end: window + 3600 })
      .onConflict(['key', 'window_start'])
      .merge(['count']);
    try {
      const r = await registerClient(s);
      expect(r).toMatchObject({ status: 429, body: { error: 'Too many requests' } });
    } finally {
      await db('aivis_rate_limits').where('key', key).delete();
    }
    expect((await registerClient(s)).status).toBe(201);
  });
});

describe('MCP sign-in: the authorization code', () => {
  it('given a viewer who signs in and allows, then the token calls tools as the viewer: lists prompts, cannot create one (the REST 403 message)', async () => {
    const t = await signedIn(VIEWER_EMAIL);
    expect(t).toMatchObject({ token_type: 'Bearer', expires_in: expect.any(Number) });
    expect(t.refresh_token).toBeTruthy();
    const listed = await tool(bearer(t.access_token), 'list_prompts', { website_id: w.a.a1 });
    expect(listed.isError, JSON.stringify(listed)).toBeFalsy();
    const created = await tool(bearer(t.access_token), 'create_prompt', { website_id: w.a.a1, text: 'best running shoes' });
    expect(created).toMatchObject({ isError: true, structuredContent: { error: 'Forbidden: insufficient permissions', status: 403 } });
    // another organization's website stays out of reach, and so does a website of the same organization the viewer
    // is not a member of
    for (const website_id of [w.b.b1, w.a.a2]) {
      const other = await tool(bearer(t.access_token), 'list_prompts', { website_id });
      expect(other, website_id).toMatchObject({ isError: true, structuredContent: { error: 'Unauthorized access to this website', status: 403 } });
    }
  });

  it("given an admin who signs in, then a write works and the activity feed names the admin's id and email", async () => {
    const t = await signedIn(ADMIN_EMAIL);
    const created = await tool(bearer(t.access_token), 'create_prompt', { website_id: w.a.a1, text: 'trail shoes for wide feet' });
    expect(created.isError, JSON.stringify(created)).toBeFalsy();
    await caughtUp(s, ['activity']);
    const feed = await call(s, 'GET', '/api/v1/activity', { key: w.a.key, query: { entity_type: 'prompt' } });
    expect(feed.status).toBe(200);
    expect(feed.body.data[0]).toMatchObject({ change_type: 'created', via_api_key: false, actor: { user: { id: adminId, email: ADMIN_EMAIL } } });
  });

  it("given a signed-in admin demoted to viewer, then the same token follows the new role at once (not after the principal's cache time)", async () => {
    const email = 'demoted@a.example.com';
    const id = await userWithPassword(s, w.a.key, email, PASSWORD, 'admin');
    const t = await signedIn(email);
    const write = () => tool(bearer(t.access_token), 'create_prompt', { website_id: w.a.a1, text: `while admin ${Date.now()}` });
    expect((await write()).isError).toBeFalsy();
    const demoted = await call(s, 'PATCH', `/api/v1/organizations/members/${id}`, { key: w.a.key, body: { role: 'viewer' } });
    expect(demoted.status, JSON.stringify(demoted.body)).toBe(200);
    const started = Date.now();
    await until('the demotion applies', async () => (await write()).isError === true, PRINCIPAL_TTL_MS / 2);
    expect(Date.now() - started).toBeLessThan(PRINCIPAL_TTL_MS);
    expect(await write()).toMatchObject({ isError: true, structuredContent: { status: 403 } });
  });

  it('given a client that names no resource, then its token is still bound to the MCP endpoint and works there', async () => {
    const t = await signIn(s, VIEWER_EMAIL, PASSWORD, { resource: null });
    const claims = JSON.parse(Buffer.from(t.access_token.split('.')[1], 'base64url').toString());
    expect(claims).toMatchObject({ aud: resource(), iss: s.url, sub: viewerId, client_id: t.client_id });
    expect((await post(s, rpc('tools/list'), bearer(t.access_token))).status).toBe(200);
  });

  it('given an authorization request without PKCE or with the plain method, then it is refused', async () => {
    const reg = await registerClient(s);
    const u = authorizeUrl(s, { client_id: reg.body.client_id, challenge: 'x', resource: resource() });
    u.searchParams.delete('code_challenge');
    u.searchParams.delete('code_challenge_method');
    const none = await fetch(u, { redirect: 'manual' });
    expect(new URL(none.headers.get('location')!).searchParams.get('error')).toBe('invalid_request');
    const plain = authorizeUrl(
      s,
      { client_id: reg.body.client_id, challenge: 'a'.repeat(43), resource: resource() },
      { code_challenge_method: 'plain' },
    );
    const r = await fetch(plain, { redirect: 'manual' });
    expect(new URL(r.headers.get('location')!).searchParams.get('error')).toBe('invalid_request');
  });

  it('given a code, when exchanged with a wrong verifier or twice, then refused', async () => {
    const { code, client_id, verifier } = await authorizedCode(s, VIEWER_EMAIL, PASSWORD, { resource: resource() });
    const exchange = (v: string) => token(s, { ...codeGrant(code, client_id, v), resource: resource() });
    expect(await exchange(pkce().verifier)).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    const first = await exchange(verifier);
    expect(first.status).toBe(200);
    expect(await exchange(verifier)).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    // a code replayed revokes what it gave: the refresh token no longer works
    const refresh = await token(s, refreshGrant(first.body.refresh_token, client_id, resource()));
    expect(refresh).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
  });

  it('given another resource, then no token is issued for it, and a token whose audience is another resource is refused by /api/mcp', async () => {
    const reg = await registerClient(s);
    const other = authorizeUrl(s, { client_id: reg.body.client_id, challenge: pkce().challenge, resource: 'https://elsewhere.example.com/api/mcp' });
    const r = await fetch(other, { redirect: 'manual' });
    expect(new URL(r.headers.get('location')!).searchParams.get('error')).toBe('invalid_target');

    const { code, client_id, verifier } = await authorizedCode(s, VIEWER_EMAIL, PASSWORD, { resource: resource() });
    const t = await token(s, { ...codeGrant(code, client_id, verifier), resource: 'https://elsewhere.example.com/api/mcp' });
    expect(t).toMatchObject({ status: 400, body: { error: 'invalid_target' } });

    // a token signed with the server's own key but for another audience (under a live grant of the viewer's)
    const { grant_id } = JSON.parse(Buffer.from((await signedIn(VIEWER_EMAIL)).access_token.split('.')[1], 'base64url').toString());
    const { value } = await s.rt.database.db('aivis_secrets').where('name', 'oauth_signing_jwk').first('value');
    const jwk = JSON.parse(value);
    const enc = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
    const forge = (aud: string) => {
      const head = `${enc({ alg: 'RS256', kid: jwk.kid, typ: 'at+jwt' })}.${enc({ iss: s.url, aud, sub: viewerId, client_id, grant_id, exp: Math.floor(Date.now() / 1000) + 300 })}`;
      const sig = createSign('sha256')
        .update(head)
        .sign(createPrivateKey({ key: jwk, format: 'jwk' }))
        .toString('base64url');
      return `${head}.${sig}`;
    };
    expect((await post(s, rpc('tools/list'), bearer(forge(resource())))).status).toBe(200);
    const refused = await post(s, rpc('tools/list'), bearer(forge('https://elsewhere.example.com/api/mcp')));
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toBe(`Bearer error="invalid_token", resource_metadata="${metadataUrl()}"`);
  });

  it('given a refresh token, when used, then new tokens come back and the used one is refused ever after', async () => {
    const t = await signedIn(VIEWER_EMAIL);
    const refresh = (rt: string) => token(s, refreshGrant(rt, t.client_id, resource()));
    const first = await refresh(t.refresh_token);
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body.refresh_token).toBeTruthy();
    expect(first.body.refresh_token).not.toBe(t.refresh_token);
    expect((await post(s, rpc('tools/list'), bearer(first.body.access_token))).status).toBe(200);
    expect(await refresh(t.refresh_token)).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
  });

  it('given a refresh token revoked by the client (RFC 7009), then it no longer refreshes', async () => {
    const t = await signedIn(VIEWER_EMAIL);
    const res = await fetch(new URL('/oauth/revoke', s.url), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: t.refresh_token, token_type_hint: 'refresh_token', client_id: t.client_id }).toString(),
    });
    expect(res.status).toBe(200);
    const again = await token(s, refreshGrant(t.refresh_token, t.client_id, resource()));
    expect(again).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
  });

  it('given the user denies, then the client receives access_denied and no code', async () => {
    const { page: form, jar } = await signInPage(s, resource());
    const login = await jar.post(new URL(`${form.url.pathname}/login`, s.url), { csrf: csrfIn(form.body), email: VIEWER_EMAIL, password: PASSWORD });
    const page = await follow(jar, s, login);
    expect(page.body).toContain('Test Assistant');
    const deny = await jar.post(new URL(`${page.url.pathname}/consent`, s.url), { csrf: csrfIn(page.body), decision: 'deny' });
    const end = await follow(jar, s, deny);
    expect(end.url.origin).toBe(new URL(REDIRECT_URI).origin);
    expect(end.url.searchParams.get('error')).toBe('access_denied');
    expect(end.url.searchParams.get('code')).toBeNull();
  });
});

describe('MCP sign-in: the sign-in page', () => {
  async function loginPage() {
    const { page, jar } = await signInPage(s, resource());
    const submit = (form: Record<string, string>, headers: Record<string, string> = {}) =>
      jar.post(new URL(`${page.url.pathname}/login`, s.url), form, headers);
    return { page, submit, csrf: csrfIn(page.body) };
  }

  it('given a wrong password or an unknown email, then the same clear error, the email kept, no key or token in the page', async () => {
    const { page, submit, csrf } = await loginPage();
    expect(page.res.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(page.body).toContain('Test Assistant');
    for (const email of [VIEWER_EMAIL, 'nobody@a.example.com']) {
      const r = await submit({ csrf, email, password: 'wrong password' });
      expect(r.status).toBe(401);
      const html = await r.text();
      expect(html).toContain(SIGN_IN_FAILED);
      expect(html).toContain(`value="${email}"`);
      expect(html).not.toMatch(/aivis_[A-Za-z0-9]|eyJ[A-Za-z0-9_-]{10,}/);
    }
  });

  it('given a form without the page token or posted from another site, then 403 and nobody is signed in', async () => {
    const { submit, csrf } = await loginPage();
    expect((await submit({ email: VIEWER_EMAIL, password: PASSWORD })).status).toBe(403);
    expect((await submit({ csrf: `${csrf}x`, email: VIEWER_EMAIL, password: PASSWORD })).status).toBe(403);
    expect((await submit({ csrf, email: VIEWER_EMAIL, password: PASSWORD }, { 'sec-fetch-site': 'cross-site' })).status).toBe(403);
    expect((await submit({ csrf, email: VIEWER_EMAIL, password: PASSWORD }, { origin: 'https://evil.example.com' })).status).toBe(403);
    // the same form with its token from this site goes on
    expect((await submit({ csrf, email: VIEWER_EMAIL, password: PASSWORD }, { 'sec-fetch-site': 'same-origin' })).status).toBe(303);
  });

  // the counters are per window and shared by the whole file (every request comes from 127.0.0.1): these tests start
  // from and leave fresh counters
  const freshCounters = () => s.rt.database.db('aivis_rate_limits').where('key', 'like', 'signin-%').delete();

  it('given repeated failures for one account, then past the limit even the right password is refused with 429 and Retry-After', async () => {
    const email = 'target@a.example.com';
    await userWithPassword(s, w.a.key, email, PASSWORD, 'viewer');
    // the counters' windows start on whole quarters of an hour: a burst across one starts again in the next
    await inOneWindow(SIGN_IN_WINDOW_SECONDS, async () => {
      await freshCounters();
      const { submit, csrf } = await loginPage();
      for (let i = 0; i < SIGN_IN_PER_ACCOUNT; i++) expect((await submit({ csrf, email, password: `guess ${i}` })).status).toBe(401);
      const r = await submit({ csrf, email, password: PASSWORD });
      expect(r.status).toBe(429);
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(await r.text()).toContain('Too many sign-in attempts');
      // another account from the same address is not locked out by it
      const other = await submit({ csrf, email: ADMIN_EMAIL, password: PASSWORD });
      expect(other.status).toBe(303);
    });
    await freshCounters();
  });

  it('given many attempts from one address on many accounts, then past the limit that address is refused for any account', async () => {
    await inOneWindow(SIGN_IN_WINDOW_SECONDS, async () => {
      await freshCounters();
      const { submit, csrf } = await loginPage();
      for (let i = 0; i < SIGN_IN_PER_ADDRESS; i++)
        expect((await submit({ csrf, email: `guess${i}@a.example.com`, password: 'guess' })).status).toBe(401);
      const r = await submit({ csrf, email: VIEWER_EMAIL, password: PASSWORD });
      expect(r.status).toBe(429);
      expect(await r.text()).toContain('Too many sign-in attempts');
    });
    await freshCounters();
  });

  it('given an authorization request the server cannot send back to a client (unknown client), then an aivis error page says so', async () => {
    const r = await fetch(new URL('/oauth/authorize?response_type=code&client_id=nope', s.url));
    expect(r.status).toBe(400);
    expect(r.headers.get('content-security-policy')).toContain("default-src 'none'");
    const html = await r.text();
    expect(html).toContain('<h1>Sign-in failed</h1>');
    expect(html).toContain('client is invalid');
  });

  it('given a sign-in link no browser started (no interaction cookie), then a clear "expired" page', async () => {
    const r = await fetch(new URL('/oauth/interaction/nope', s.url));
    expect(r.status).toBe(400);
    expect(await r.text()).toContain('This sign-in has expired');
  });
});

describe('MCP sign-in: passwords', () => {
  it('given an email invitation accepted with a password, then the new user signs in with it', async () => {
    const email = 'invited@a.example.com';
    const r = await call(s, 'POST', '/api/v1/invites', {
      key: w.a.key,
      body: { type: 'website', website_id: w.a.a2, invite_method: 'email', email },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const [m] = await smtp.waitFor(email, 1, 15_000);
    const token = /\/invites\/accept\?token=([A-Za-z0-9_-]+)/.exec(m.mail.text ?? '')![1];
    const accepted = await call(s, 'POST', '/api/v1/invites/accept', { body: { token, password: 'my own passphrase' } });
    expect(accepted.status, JSON.stringify(accepted.body)).toBe(200);
    const t = await signedIn(email, 'my own passphrase');
    const listed = await tool(bearer(t.access_token), 'list_prompts', { website_id: w.a.a2 });
    expect(listed.isError, JSON.stringify(listed)).toBeFalsy();
    // the invitation reached a2 only
    expect(await tool(bearer(t.access_token), 'list_prompts', { website_id: w.a.a1 })).toMatchObject({
      isError: true,
      structuredContent: { status: 403 },
    });
  });
});

describe('MCP sign-in: what a signed-in user reaches', () => {
  it("given an organization viewer who signs in, then they read every website's metrics of their organization and every write is refused; another organization's website and, for a group-only user, the websites outside the group stay out of reach", async () => {
    const email = 'org-viewer@a.example.com';
    const id = await userWithPassword(s, w.a.key, email, PASSWORD, 'viewer');
    const t = await signedIn(email);
    for (const website_id of [w.a.a1, w.a.a2]) {
      for (const [name, args] of [
        ['get_website', { website_id }],
        ['get_mention_rate', { website_id }],
        ['list_prompts', { website_id }],
      ] as const) {
        const read = await tool(bearer(t.access_token), name, args);
        expect(read.isError, `${name} ${website_id} ${JSON.stringify(read)}`).toBeFalsy();
      }
      expect(await tool(bearer(t.access_token), 'create_prompt', { website_id, text: `viewer writes ${website_id}` })).toMatchObject({
        isError: true,
        structuredContent: { error: 'Forbidden: insufficient permissions', status: 403 },
      });
    }
    expect(await tool(bearer(t.access_token), 'get_website', { website_id: w.b.b1 })).toMatchObject({
      isError: true,
      structuredContent: { error: 'Unauthorized access to this website', status: 403 },
    });
    const sites = await call(s, 'GET', `/api/v1/users/${id}/websites`, { key: w.a.key });
    expect(sites.body.websites).toEqual(
      expect.arrayContaining(
        [w.a.a1, w.a.a2].map((website_id) => expect.objectContaining({ website_id, access_type: 'organization', role: 'viewer' })),
      ),
    );

    // a user who belongs to a group only reaches the group's websites and no other
    const g = await call(s, 'POST', '/api/v1/groups', { key: w.a.key, body: { name: 'Reach a1', website_ids: [w.a.a1] } });
    expect(g.status, JSON.stringify(g.body)).toBe(201);
    const grouped = 'group-only@a.example.com';
    const joined = await call(s, 'POST', '/api/v1/invites', {
      key: w.a.key,
      body: { type: 'group', group_id: g.body.group.id, invite_method: 'direct', email: grouped },
    });
    expect(joined.status, JSON.stringify(joined.body)).toBe(200);
    await s.rt.waitForReadModels(await s.rt.store.lastPosition(), ['team'], 30_000);
    await setPassword(s.rt, { email: grouped, password: PASSWORD });
    const gt = await signedIn(grouped);
    expect((await tool(bearer(gt.access_token), 'get_website', { website_id: w.a.a1 })).isError).toBeFalsy();
    expect(await tool(bearer(gt.access_token), 'get_website', { website_id: w.a.a2 })).toMatchObject({
      isError: true,
      structuredContent: { error: 'Unauthorized access to this website', status: 403 },
    });
    const reached = await call(s, 'GET', `/api/v1/users/${joined.body.user_id}/websites`, { key: w.a.key });
    expect(reached.body.websites).toMatchObject([{ website_id: w.a.a1, access_type: 'group', role: 'viewer' }]);
  });

  it('given a custom organization role with content edit, then its member tracks content on every website, writes nothing else, and a key scoped to the website sees them as the actor', async () => {
    const role = await call(s, 'POST', '/api/v1/roles', { key: w.a.key, body: { name: 'Content editor', permissions: { content: 'edit' } } });
    expect(role.status, JSON.stringify(role.body)).toBe(201);
    const email = 'content-editor@a.example.com';
    const id = await userWithPassword(s, w.a.key, email, PASSWORD, { role_id: role.body.role.role_id });
    const t = await signedIn(email);
    for (const [website_id, url] of [
      [w.a.a1, 'https://acme.example.com/reach-guide'],
      [w.a.a2, 'https://two.acme.example.com/reach-guide'],
    ]) {
      const tracked = await tool(bearer(t.access_token), 'track_content_urls', { website_id, urls: [{ url }] });
      expect(tracked.isError, JSON.stringify(tracked)).toBeFalsy();
      expect(await tool(bearer(t.access_token), 'create_prompt', { website_id, text: `editor writes ${website_id}` })).toMatchObject({
        isError: true,
        structuredContent: { error: 'Forbidden: insufficient permissions', status: 403 },
      });
    }
    const scopedPartner = (
      await call(s, 'POST', '/api/v1/api-keys', { key: w.a.key, body: { name: 'a2 partner', website_ids: [w.a.a2], partner: true } })
    ).body.key;
    const entry = await until('the editor’s entry on a2', async () => {
      const f = await call(s, 'GET', '/api/v1/activity', { key: scopedPartner, query: { entity_type: 'content', website_id: w.a.a2 } });
      return f.body.data.find((e: { via_api_key: boolean }) => !e.via_api_key);
    });
    expect(entry).toMatchObject({ change_type: 'created', actor: { user: { id, email } } });
  });
});
