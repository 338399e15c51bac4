import { afterAll, beforeAll, expect, it } from 'vitest';
import { post } from '../mcp/support';
import * as oauth from '../support/oauth';
import { call, type TestServer } from '../support/server';
import { until } from '../support/until';
import { buildWorld, type World } from '../support/tenancy';
import { onPostgresServer } from '../support/suites';
import { nodeArgs } from '../support/bundles';
import { runProcess } from '../support/cli';

// Two instances over one database share the provider's clients, interactions, sessions, grants, codes and refresh
// tokens (its adapter is on Postgres) and its keys; the CLI sets a password a server then accepts. Needs a real server.
const suite = onPostgresServer('OAuth multi-instance test', 'two instances need a shared server');

suite('MCP sign-in across two instances and the CLI', () => {
  let a: TestServer;
  let b: TestServer;
  let w: World;
  const EMAIL = 'shared@a.example.com';

  beforeAll(async () => {
    a = await oauth.startOAuthServer();
    // b serves under the same public URL (as behind one load balancer); the test calls it at its own port
    b = await oauth.startOAuthServer(a);
    w = await buildWorld(a);
    await oauth.userWithPassword(a, w.a.key, EMAIL, oauth.PASSWORD, 'admin');
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
  });

  /** `users:set-password` in a CLI process on a's database, the password on stdin. */
  const setPassword = (input: string, ...args: string[]) => {
    const env: Record<string, string> = { ...(process.env as Record<string, string>), DATABASE_URL: a.databaseUrl!, LOG_LEVEL: 'warn' };
    delete env.NATS_URL;
    // not spawnSync: the CLI brings the team read model up to date by following the leader, which is in this process
    return runProcess([...nodeArgs('src/cli.ts'), 'users:set-password', ...args], env, input);
  };

  it('given each step on another instance, then registration, sign-in, consent, exchange, refresh and the tool call all hold', async () => {
    const resource = `${a.url}/api/mcp`;
    const reg = await oauth.registerClient(a);
    expect(reg.status).toBe(201);
    const p = oauth.pkce();
    const jar = new oauth.Jar();
    // the authorization starts on a, the sign-in page is served by b, the consent by a
    const start = await jar.fetch(oauth.authorizeUrl(a, { client_id: reg.body.client_id, challenge: p.challenge, resource }));
    expect(start.status).toBe(303);
    const loginPage = await oauth.follow(jar, b, await jar.fetch(new URL(start.headers.get('location')!, b.url)));
    expect(loginPage.body).toContain('name="password"');
    const login = await jar.post(new URL(`${loginPage.url.pathname}/login`, b.url), {
      csrf: oauth.csrfIn(loginPage.body),
      email: EMAIL,
      password: oauth.PASSWORD,
    });
    expect(login.status).toBe(303);
    const consentPage = await oauth.follow(jar, a, await jar.fetch(new URL(login.headers.get('location')!, a.url)));
    expect(consentPage.body).toContain('name="decision"');
    const consent = await jar.post(new URL(`${consentPage.url.pathname}/consent`, a.url), {
      csrf: oauth.csrfIn(consentPage.body),
      decision: 'allow',
    });
    const end = await oauth.follow(jar, b, await jar.fetch(new URL(consent.headers.get('location')!, b.url)));
    expect(end.url.origin).toBe(new URL(oauth.REDIRECT_URI).origin);
    const code = end.url.searchParams.get('code')!;

    const t = await oauth.token(b, { ...oauth.codeGrant(code, reg.body.client_id, p.verifier), resource });
    expect(t.status, JSON.stringify(t.body)).toBe(200);
    for (const s of [a, b])
      expect((await post(s, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, { authorization: `Bearer ${t.body.access_token}` })).status).toBe(200);

    const refreshed = await oauth.token(a, oauth.refreshGrant(t.body.refresh_token, reg.body.client_id, resource));
    expect(refreshed.status).toBe(200);
    const reused = await oauth.token(b, oauth.refreshGrant(t.body.refresh_token, reg.body.client_id, resource));
    expect(reused).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    // the code was consumed on b: a cannot exchange it again
    const again = await oauth.token(a, { ...oauth.codeGrant(code, reg.body.client_id, p.verifier), resource });
    expect(again).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
  });

  it('given users:set-password with the password on stdin, then the user signs in with it; a short one is refused', async () => {
    const short = await setPassword('short\n', '--email', EMAIL);
    expect(short.status).toBe(1);
    expect(short.stderr).toContain('password: must be at least 8 characters');
    const unknown = await setPassword('long enough password\n', '--email', 'nobody@a.example.com');
    expect(unknown.status).toBe(1);
    expect(unknown.stderr).toContain('no user has the email nobody@a.example.com');

    const set = await setPassword('a brand new passphrase\n', '--email', EMAIL.toUpperCase());
    expect(set.status, set.stderr).toBe(0);
    expect(JSON.parse(set.stdout)).toMatchObject({ password_set: true, organization_id: w.a.organization_id });
    expect(set.stdout + set.stderr).not.toContain('a brand new passphrase');
    // the servers' team read models catch up with the CLI's event
    await a.rt.waitForReadModels(await a.rt.store.lastPosition(), ['team'], 10_000);

    const { page, jar } = await oauth.signInPage(b, `${a.url}/api/mcp`);
    const attempt = (password: string) =>
      jar.post(new URL(`${page.url.pathname}/login`, b.url), { csrf: oauth.csrfIn(page.body), email: EMAIL, password });
    expect((await attempt(oauth.PASSWORD)).status).toBe(401);
    expect((await attempt('a brand new passphrase')).status).toBe(303);
  }, 120_000);

  // CONTRACT "MCP sign-in": revoking a grant refuses its access tokens within 5 s on every instance
  const REVOKED_WITHIN_MS = 5_000;
  const toolsList = (s: TestServer, access: string) =>
    post(s, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, { authorization: `Bearer ${access}` });
  const statusOn = async (access: string) => Promise.all([a, b].map(async (s) => (await toolsList(s, access)).status));
  const refresh = (s: TestServer, t: { refresh_token: string; client_id: string }) =>
    oauth.token(s, oauth.refreshGrant(t.refresh_token, t.client_id, `${a.url}/api/mcp`));
  /** The token, accepted on both instances a moment before, is refused (401 invalid_token) by both within the contract's time. */
  async function refusedOnBoth(access: string) {
    await until('both instances refuse the token', async () => (await statusOn(access)).every((st) => st === 401), REVOKED_WITHIN_MS);
    for (const s of [a, b]) expect((await toolsList(s, access)).headers.get('www-authenticate')).toContain('error="invalid_token"');
  }

  it('given a token used on both instances, when its code is replayed on the other instance, then both refuse the token within 5 s and its refresh token is refused', async () => {
    const email = 'replayed@a.example.com';
    await oauth.userWithPassword(a, w.a.key, email, oauth.PASSWORD, 'viewer');
    const resource = `${a.url}/api/mcp`;
    const { code, client_id, verifier } = await oauth.authorizedCode(a, email, oauth.PASSWORD, { resource });
    const t = await oauth.token(a, { ...oauth.codeGrant(code, client_id, verifier), resource });
    expect(t.status, JSON.stringify(t.body)).toBe(200);
    expect(await statusOn(t.body.access_token)).toEqual([200, 200]);

    const replayed = await oauth.token(b, { ...oauth.codeGrant(code, client_id, verifier), resource });
    expect(replayed).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    await refusedOnBoth(t.body.access_token);
    expect(await refresh(b, { ...t.body, client_id })).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
  });

  it("given a member signed in and used on both instances, when removed from the organization, then both refuse the member's token within 5 s and its refresh token; other users' tokens, in this organization and another, keep working", async () => {
    const email = 'leaving@a.example.com';
    const userId = await oauth.userWithPassword(a, w.a.key, email, oauth.PASSWORD, 'admin');
    await oauth.userWithPassword(a, w.a.key, 'colleague@a.example.com', oauth.PASSWORD, 'viewer');
    await oauth.userWithPassword(a, w.b.key, 'staying@b.example.com', oauth.PASSWORD, 'admin');
    const leaving = await oauth.signIn(a, email, oauth.PASSWORD);
    const colleague = await oauth.signIn(a, 'colleague@a.example.com', oauth.PASSWORD);
    const otherTenant = await oauth.signIn(a, 'staying@b.example.com', oauth.PASSWORD);
    for (const t of [leaving, colleague, otherTenant]) expect(await statusOn(t.access_token)).toEqual([200, 200]);

    const removed = await call(b, 'DELETE', `/api/v1/organizations/members/${userId}`, { key: w.a.key });
    expect(removed.status, JSON.stringify(removed.body)).toBe(200);
    await refusedOnBoth(leaving.access_token);
    expect(await refresh(a, leaving)).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    for (const t of [colleague, otherTenant]) expect(await statusOn(t.access_token)).toEqual([200, 200]);
    expect((await refresh(b, otherTenant)).status).toBe(200);
  });

  it('given a user signed in on both instances, when users:set-password changes the password, then both refuse the old tokens within 5 s, the refresh token is refused, the browser must sign in again, and the new password works', async () => {
    const email = 'rotating@a.example.com';
    await oauth.userWithPassword(a, w.a.key, email, oauth.PASSWORD, 'viewer');
    await oauth.userWithPassword(a, w.a.key, 'unchanged@a.example.com', oauth.PASSWORD, 'viewer');
    const resource = `${a.url}/api/mcp`;
    const jar = new oauth.Jar();
    const { code, client_id, verifier } = await oauth.authorizedCode(a, email, oauth.PASSWORD, { resource, jar });
    const before = await oauth.token(b, { ...oauth.codeGrant(code, client_id, verifier), resource });
    expect(before.status).toBe(200);
    const colleague = await oauth.signIn(a, 'unchanged@a.example.com', oauth.PASSWORD);
    expect(await statusOn(before.body.access_token)).toEqual([200, 200]);

    const set = await setPassword('another long passphrase\n', '--email', email);
    expect(set.status, set.stderr).toBe(0);
    await refusedOnBoth(before.body.access_token);
    expect(await refresh(a, { ...before.body, client_id })).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    expect(await statusOn(colleague.access_token)).toEqual([200, 200]);

    // the browser that signed in with the old password is asked for the new one
    const again = await oauth.follow(jar, b, await jar.fetch(oauth.authorizeUrl(b, { client_id, challenge: oauth.pkce().challenge, resource })));
    expect(again.body).toContain('name="password"');
    const after = await oauth.signIn(b, email, 'another long passphrase', { resource });
    expect(await statusOn(after.access_token)).toEqual([200, 200]);
  }, 120_000);
});
