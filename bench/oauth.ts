import { createPrivateKey, createSign, randomUUID } from 'node:crypto';
import { SignedInUsers } from '../src/auth/accounts';
import { oauthSecrets } from '../src/auth/store';
import { AccessTokenVerifier } from '../src/auth/tokens';
import { type Bench, info, median, report, sampleUs } from './lib';
import { withBenchServer } from './with-server';

/**
 * What checking a signed-in user's access token costs an MCP request: the RS256 signature with the public key held in
 * memory, the claims (issuer, audience, expiry), and the user's principal from the in-memory cache (refreshed every
 * PRINCIPAL_TTL_MS): no database round trip for a valid token.
 */
export const oauth: Bench = {
  name: 'oauth',
  about: 'MCP sign-in: access-token check per request',
  async run({ quick }) {
    const n = quick ? 5000 : 50_000;
    await withBenchServer(1, async (s) => {
      const db = s.rt.database.db;
      const secrets = await oauthSecrets(db);
      const issuer = s.rt.config.publicBaseUrl;
      const resource = `${issuer}/api/mcp`;
      const { d: _d, p: _p, q: _q, dp: _dp, dq: _dq, qi: _qi, ...publicJwk } = secrets.signingKey;
      const verifier = new AccessTokenVerifier({ ...publicJwk, kid: secrets.signingKey.kid }, issuer, resource);
      const users = new SignedInUsers(db);
      const owner = (await db('rm_team_users').where('organization_id', s.organizationId).first('id')) as { id: string };
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
      await check();
      const full = await sampleUs(n, check);
      const signatureOnly = await sampleUs(n, () => verifier.check(token));
      info(`oauth: ${n} checks of one access token in process (RS256 2048-bit, the principal cached)`);
      report('oauth_token_verify_us', median(full), 'us', {
        goal: { op: '<=', value: 100 },
        note: 'median: signature + claims + the cached principal; no database round trip for a valid token',
      });
      report('oauth_token_signature_us', median(signatureOnly), 'us', {
        note: 'median: the JWT check alone (RS256 verify with the KeyObject kept in memory)',
      });
    });
  },
};
