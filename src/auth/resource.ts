import type { Principal } from '../domain/principal';
import type { SignedInUsers } from './accounts';
import type { LiveGrants } from './grants';
import type { AccessTokenVerifier } from './tokens';

/** What the MCP endpoint needs of the sign-in: the token check, the grants, the users' principals, the challenge's address. */
export interface OAuthResource {
  verifier: AccessTokenVerifier;
  grants: LiveGrants;
  users: SignedInUsers;
  /** the protected-resource metadata's URL (RFC 9728), named in WWW-Authenticate */
  resourceMetadataUrl: string;
}

/** A signed-in user's principal for an access token: valid (signature, claims), its grant not revoked, the user still there; else null. */
export async function acceptAccessToken(oauth: Pick<OAuthResource, 'verifier' | 'grants' | 'users'>, token: string): Promise<Principal | null> {
  const checked = oauth.verifier.check(token);
  if (!checked.ok || !(await oauth.grants.alive(checked.claims.grant_id))) return null;
  return oauth.users.principal(checked.claims.sub);
}
