import { afterAll, beforeAll, expect, it } from 'vitest';
import { post } from '../mcp/support';
import { authorizeUrl, csrfIn, follow, Jar, pkce, REDIRECT_URI, registerClient, startOAuthServer, userWithPassword } from '../support/oauth';
import { codeGrant, token } from '../support/oauth';
import type { TestServer } from '../support/server';
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
  const PASSWORD = 'correct horse battery';

  beforeAll(async () => {
    a = await startOAuthServer();
    // b serves under the same public URL (as behind one load balancer); the test calls it at its own port
    b = await startOAuthServer(a);
    w = await buildWorld(a);
    await userWithPassword(a, w.a.key, EMAIL, PASSWORD, 'admin');
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
  });

  it('given each step on another instance, then registration, sign-in, consent, exchange, refresh and the tool call all hold', async () => {
    const resource = `${a.url}/api/mcp`;
    const reg = await registerClient(a);
    expect(reg.status).toBe(201);
    const p = pkce();
    const jar = new Jar();
    // the authorization starts on a, the sign-in page is served by b, the consent by a
    const start = await jar.fetch(authorizeUrl(a, { client_id: reg.body.client_id, challenge: p.challenge, resource }));
    expect(start.status).toBe(303);
    const loginPage = await follow(jar, b, await jar.fetch(new URL(start.headers.get('location')!, b.url)));
    expect(loginPage.body).toContain('name="password"');
    const login = await jar.post(new URL(`${loginPage.url.pathname}/login`, b.url), {
      csrf: csrfIn(loginPage.body),
      email: EMAIL,
      password: PASSWORD,
    });
    expect(login.status).toBe(303);
    const consentPage = await follow(jar, a, await jar.fetch(new URL(login.headers.get('location')!, a.url)));
    expect(consentPage.body).toContain('name="decision"');
    const consent = await jar.post(new URL(`${consentPage.url.pathname}/consent`, a.url), { csrf: csrfIn(consentPage.body), decision: 'allow' });
    const end = await follow(jar, b, await jar.fetch(new URL(consent.headers.get('location')!, b.url)));
    expect(end.url.origin).toBe(new URL(REDIRECT_URI).origin);
    const code = end.url.searchParams.get('code')!;

    const t = await token(b, { ...codeGrant(code, reg.body.client_id, p.verifier), resource });
    expect(t.status, JSON.stringify(t.body)).toBe(200);
    for (const s of [a, b])
      expect((await post(s, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, { authorization: `Bearer ${t.body.access_token}` })).status).toBe(200);

    const refreshed = await token(a, { grant_type: 'refresh_token', refresh_token: t.body.refresh_token, client_id: reg.body.client_id, resource });
    expect(refreshed.status).toBe(200);
    const reused = await token(b, { grant_type: 'refresh_token', refresh_token: t.body.refresh_token, client_id: reg.body.client_id, resource });
    expect(reused).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    // the code was consumed on b: a cannot exchange it again
    const again = await token(a, { ...codeGrant(code, reg.body.client_id, p.verifier), resource });
    expect(again).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
  });

  it('given users:set-password with the password on stdin, then the user signs in with it; a short one is refused', async () => {
    const env: Record<string, string> = { ...(process.env as Record<string, string>), DATABASE_URL: a.databaseUrl!, LOG_LEVEL: 'warn' };
    delete env.NATS_URL;
    // not spawnSync: the CLI brings the team read model up to date by following the leader, which is in this process
    const cli = (input: string, ...args: string[]) => runProcess([...nodeArgs('src/cli.ts'), 'users:set-password', ...args], env, input);
    const short = await cli('short\n', '--email', EMAIL);
    expect(short.status).toBe(1);
    expect(short.stderr).toContain('password: must be at least 8 characters');
    const unknown = await cli('long enough password\n', '--email', 'nobody@a.example.com');
    expect(unknown.status).toBe(1);
    expect(unknown.stderr).toContain('no user has the email nobody@a.example.com');

    const set = await cli('a brand new passphrase\n', '--email', EMAIL.toUpperCase());
    expect(set.status, set.stderr).toBe(0);
    expect(JSON.parse(set.stdout)).toMatchObject({ password_set: true, organization_id: w.a.organization_id });
    expect(set.stdout + set.stderr).not.toContain('a brand new passphrase');
    // the servers' team read models catch up with the CLI's event
    await a.rt.waitForReadModels(await a.rt.store.lastPosition(), ['team'], 10_000);

    const reg = await registerClient(b);
    const jar = new Jar();
    const page = await follow(
      jar,
      b,
      await jar.fetch(authorizeUrl(b, { client_id: reg.body.client_id, challenge: pkce().challenge, resource: `${a.url}/api/mcp` })),
    );
    const attempt = (password: string) => jar.post(new URL(`${page.url.pathname}/login`, b.url), { csrf: csrfIn(page.body), email: EMAIL, password });
    expect((await attempt(PASSWORD)).status).toBe(401);
    expect((await attempt('a brand new passphrase')).status).toBe(303);
  }, 120_000);
});
