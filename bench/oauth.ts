import { createPrivateKey, createSign, randomUUID } from 'node:crypto';
import { SignedInUsers } from '../src/auth/accounts';
import { GRANT_TTL_MS, LiveGrants } from '../src/auth/grants';
import { GRANT_TTL } from '../src/auth/provider';
import { acceptAccessToken } from '../src/auth/resource';
import { oauthSecrets, PostgresOAuthAdapter } from '../src/auth/store';
import { AccessTokenVerifier } from '../src/auth/tokens';
import { info, median, nowNs, quantile, report, sampleUs } from './lib';
import { serverBench } from './with-server';

/**
 * What checking a signed-in user's access token costs an MCP request: the RS256 signature with the public key held in
 * memory, the claims (issuer, audience, expiry), the grant still standing (LiveGrants: cached GRANT_TTL_MS, dropped by
 * NOTIFY) and the user's principal from the in-memory cache (refreshed every PRINCIPAL_TTL_MS): no database round trip
 * for a valid token but one grant lookup per grant every GRANT_TTL_MS.
 */
export const oauth = serverBench(1, {
  name: 'oauth',
  about: 'MCP sign-in: access-token check per request',
  async run({ s, db, quick }) {
    const n = quick ? 5000 : 50_000;
    const secrets = await oauthSecrets(db);
    const issuer = s.rt.config.publicBaseUrl;
    const resource = `${issuer}/api/mcp`;
    const { d: _d, p: _p, q: _q, dp: _dp, dq: _dq, qi: _qi, ...publicJwk } = secrets.signingKey;
    const verifier = new AccessTokenVerifier({ ...publicJwk, kid: secrets.signingKey.kid }, issuer, resource);
    const users = new SignedInUsers(db);
    const owner = (await db('rm_team_users').where('organization_id', s.organizationId).first('id')) as { id: string };
    const grantId = randomUUID();
    const iat = Math.floor(Date.now() / 1000);
    await new PostgresOAuthAdapter(db, 'Grant').upsert(
      grantId,
      { kind: 'Grant', jti: grantId, accountId: owner.id, clientId: 'bench-client', iat, exp: iat + GRANT_TTL },
      GRANT_TTL,
    );
    const grants = new LiveGrants(db);
    // a token as the provider issues it (RFC 9068 claims, RS256 with the shared key)
    const enc = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
    const now = Math.floor(Date.now() / 1000);
    const head = `${enc({ alg: 'RS256', typ: 'at+jwt', kid: secrets.signingKey.kid })}.${enc({
      jti: randomUUID(),
      sub: owner.id,
      iat: now,
      exp: now + 900,
      scope: 'mcp',
      client_id: 'bench-client',
      grant_id: grantId,
      iss: issuer,
      aud: resource,
    })}`;
    const token = `${head}.${createSign('sha256')
      .update(head)
      .sign(createPrivateKey({ key: secrets.signingKey, format: 'jwk' }))
      .toString('base64url')}`;
    const check = async () => {
      const c = verifier.check(token);
      if (!c.ok) throw new Error(c.reason);
      if (!(await users.principal(c.claims.sub))) throw new Error('no principal');
    };
    const accept = async () => {
      if (!(await acceptAccessToken({ verifier, grants, users }, token))) throw new Error('refused');
    };
    await check();
    await accept();
    // interleaved, so both see the same moments of the machine's load
    const without: number[] = [];
    const withGrant: number[] = [];
    for (let i = 0; i < n; i++) {
      let t0 = nowNs();
      await check();
      without.push(Number(nowNs() - t0) / 1e3);
      t0 = nowNs();
      await accept();
      withGrant.push(Number(nowNs() - t0) / 1e3);
    }
    const signatureOnly = await sampleUs(n, () => verifier.check(token));
    // a grant not in the cache (the first request of a grant, then once per GRANT_TTL_MS): the lookup in Postgres
    let clock = 0;
    const cold = new LiveGrants(db, () => (clock += GRANT_TTL_MS + 1));
    const lookups = await sampleUs(quick ? 200 : 1000, () => cold.alive(grantId));
    const p95 = (xs: number[]) =>
      quantile(
        [...xs].sort((a, b) => a - b),
        0.95,
      );
    info(`oauth: ${n} checks of one access token in process (RS256 2048-bit, the principal and the grant cached)`);
    report('oauth_token_verify_us', median(withGrant), 'us', {
      goal: { op: '<=', value: 100 },
      note: 'median: signature + claims + the cached grant + the cached principal; no database round trip for a valid token',
    });
    report('oauth_token_signature_us', median(signatureOnly), 'us', {
      note: 'median: the JWT check alone (RS256 verify with the KeyObject kept in memory)',
    });
    report('oauth_check_overhead_ms', (p95(withGrant) - p95(without)) / 1e3, 'ms', {
      goal: { op: '<=', value: 0.2 },
      note: `p95 of the acceptance with the grant check (${(p95(withGrant) / 1e3).toFixed(4)} ms) minus without it (${(p95(without) / 1e3).toFixed(4)} ms), ${n} of each interleaved`,
    });
    report('oauth_grant_lookup_ms', median(lookups) / 1e3, 'ms', {
      note: `median of ${lookups.length} grant lookups in Postgres (p95 ${(p95(lookups) / 1e3).toFixed(3)} ms): what a grant's first request pays, then once per ${GRANT_TTL_MS / 1000} s`,
    });
  },
});
