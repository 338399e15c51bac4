import { createPublicKey, type JsonWebKey, type KeyObject, verify } from 'node:crypto';

/** What a valid access token says: who signed in, through which client, under which grant. */
export interface AccessTokenClaims {
  sub: string;
  client_id: string;
  /** the grant it was issued from (provider.ts extraTokenClaims): revoking that grant refuses the token */
  grant_id: string;
  exp: number;
}

export type TokenCheck = { ok: true; claims: AccessTokenClaims } | { ok: false; reason: string };

const b64 = (s: string) => Buffer.from(s, 'base64url');

/**
 * Checks an access token the provider issued (a JWT, RFC 9068) without a database round trip: the signature with the
 * public key kept in memory, the issuer, the audience (the one resource it was issued for: a token for another
 * resource is refused), the expiry. Whether its grant still stands is LiveGrants' question (acceptAccessToken).
 */
export class AccessTokenVerifier {
  private readonly key: KeyObject;
  private readonly kid: string;

  constructor(
    publicJwk: JsonWebKey & { kid: string },
    private readonly issuer: string,
    private readonly audience: string,
    private readonly now: () => number = Date.now,
  ) {
    this.key = createPublicKey({ key: publicJwk, format: 'jwk' });
    this.kid = publicJwk.kid;
  }

  /** Whether the string has a JWT's shape (an API key never has). */
  static looksLikeJwt(token: string): boolean {
    return /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(token);
  }

  check(token: string): TokenCheck {
    const parts = token.split('.');
    if (parts.length !== 3) return { ok: false, reason: 'malformed' };
    let header: { alg?: string; kid?: string; typ?: string };
    let claims: Record<string, unknown>;
    try {
      header = JSON.parse(b64(parts[0]).toString('utf8'));
      claims = JSON.parse(b64(parts[1]).toString('utf8'));
    } catch {
      return { ok: false, reason: 'malformed' };
    }
    if (header.alg !== 'RS256' || header.kid !== this.kid || header.typ !== 'at+jwt') return { ok: false, reason: 'unknown key' };
    if (!verify('sha256', Buffer.from(`${parts[0]}.${parts[1]}`), this.key, b64(parts[2]))) return { ok: false, reason: 'signature' };
    if (claims.iss !== this.issuer) return { ok: false, reason: 'issuer' };
    const aud = claims.aud;
    if (!(aud === this.audience || (Array.isArray(aud) && aud.length === 1 && aud[0] === this.audience))) return { ok: false, reason: 'audience' };
    if (typeof claims.exp !== 'number' || claims.exp * 1000 <= this.now()) return { ok: false, reason: 'expired' };
    if (typeof claims.sub !== 'string' || typeof claims.client_id !== 'string' || typeof claims.grant_id !== 'string') {
      return { ok: false, reason: 'malformed' };
    }
    return { ok: true, claims: { sub: claims.sub, client_id: claims.client_id, grant_id: claims.grant_id, exp: claims.exp } };
  }
}
