import type { SignedInUsers } from './accounts';
import type { AccessTokenVerifier } from './tokens';

/** What the MCP endpoint needs of the sign-in: the token check, the users' principals, the challenge's address. */
export interface OAuthResource {
  verifier: AccessTokenVerifier;
  users: SignedInUsers;
  /** the protected-resource metadata's URL (RFC 9728), named in WWW-Authenticate */
  resourceMetadataUrl: string;
}
