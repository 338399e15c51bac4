import type { Knex } from 'knex';
import Provider, { type Configuration, errors } from 'oidc-provider';
import type { Logger } from 'pino';
import { html } from '../pages/html';
import { pageHeaders, renderPage } from '../pages/layout';
import type { SignedInUsers } from './accounts';
import { PostgresOAuthAdapter, type OAuthSecrets } from './store';

/** Where the provider's endpoints live on the server (everything under /oauth/ but the sign-in pages). */
export const OAUTH_ROUTES = {
  authorization: '/oauth/authorize',
  token: '/oauth/token',
  registration: '/oauth/register',
  revocation: '/oauth/revoke',
  jwks: '/oauth/jwks',
  end_session: '/oauth/session/end',
  userinfo: '/oauth/userinfo',
  introspection: '/oauth/introspect',
  pushed_authorization_request: '/oauth/par',
  code_verification: '/oauth/device',
  device_authorization: '/oauth/device/auth',
  backchannel_authentication: '/oauth/backchannel',
} as const;
export const INTERACTION_PATH = '/oauth/interaction';
/**
 * The one scope of the MCP resource, never advertised (spec: no scopes): the library grants nothing without a scope, so
 * an authorization request gets it added when it lacks it, and the consent grants it.
 */
export const MCP_SCOPE = 'mcp';

/** Lifetimes (seconds). An access token's grant is checked through a short cache (LiveGrants); refresh tokens rotate. */
export const ACCESS_TOKEN_TTL = 15 * 60;
export const REFRESH_TOKEN_TTL = 30 * 24 * 3600;
export const GRANT_TTL = 30 * 24 * 3600;
export const SESSION_TTL = 14 * 24 * 3600;

/** Redirect URIs a client may register: HTTPS anywhere, or plain HTTP on this machine (a desktop assistant). */
const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);
export function allowedRedirectUri(uri: string): boolean {
  try {
    const u = new URL(uri);
    return u.protocol === 'https:' || (u.protocol === 'http:' && LOOPBACK_HOSTS.has(u.hostname));
  } catch {
    return false;
  }
}

export interface OAuthProviderOptions {
  db: Knex;
  issuer: string;
  /** the one protected resource: the MCP endpoint's URL */
  resource: string;
  secrets: OAuthSecrets;
  users: SignedInUsers;
  logger: Logger;
  /** behind a trusted proxy: X-Forwarded-Proto says whether the request came over HTTPS (cookies' Secure) */
  proxy: boolean;
}

/**
 * oidc-provider (a certified implementation) configured for MCP sign-in: dynamic client registration, authorization
 * code with PKCE S256 only, the `resource` bound into a JWT access token's audience, rotating refresh tokens, storage
 * in Postgres. aivis writes the sign-in pages and the account lookup, not the protocol. docs/api/oauth.md explains
 * every setting that differs from the library's default.
 */
export function createOAuthProvider(o: OAuthProviderOptions): Provider {
  const configuration: Configuration = {
    adapter: (name: string) => new PostgresOAuthAdapter(o.db, name),
    jwks: { keys: [o.secrets.signingKey as never] },
    cookies: {
      keys: o.secrets.cookieKeys,
      // lax (the library's long cookie is SameSite=None): the session cookie still rides the top-level redirect from
      // a client, is not sent on a cross-site form post, and is kept by browsers over plain HTTP on localhost
      long: { httpOnly: true, sameSite: 'lax', signed: true },
      short: { httpOnly: true, sameSite: 'lax', signed: true },
    },
    routes: OAUTH_ROUTES,
    interactions: { url: (_ctx, interaction) => `${INTERACTION_PATH}/${interaction.uid}` },
    async findAccount(_ctx, sub) {
      const account = await o.users.account(sub);
      if (!account) return undefined;
      return { accountId: account.id, claims: async () => ({ sub: account.id, email: account.email }) };
    },
    clientDefaults: {
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    },
    clientAuthMethods: ['none', 'client_secret_basic', 'client_secret_post'],
    responseTypes: ['code'],
    pkce: { methods: ['S256'], required: () => true },
    // RFC 7591 fields the registration keeps; their validator also enforces the redirect URI rule on every client
    extraClientMetadata: {
      properties: ['software_id', 'software_version'],
      validator(_ctx, key, value, metadata) {
        if (key === 'software_id') {
          const uris = (metadata.redirect_uris as string[] | undefined) ?? [];
          const bad = uris.find((u) => !allowedRedirectUri(u));
          if (bad !== undefined) throw new errors.InvalidRedirectUri('redirect_uris must use https, or http on localhost');
        }
        if (value !== undefined && (typeof value !== 'string' || value.length > 255)) {
          throw new errors.InvalidClientMetadata(`${key} must be a string of at most 255 characters`);
        }
      },
    },
    features: {
      devInteractions: { enabled: false },
      registration: { enabled: true, initialAccessToken: false },
      revocation: { enabled: true },
      userinfo: { enabled: false },
      rpInitiatedLogout: { enabled: false },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => o.resource,
        useGrantedResource: () => true,
        getResourceServerInfo(_ctx, resourceIndicator) {
          // the MCP endpoint is the only resource: a token for anything else is never issued
          if (resourceIndicator !== o.resource) throw new errors.InvalidTarget();
          return {
            scope: MCP_SCOPE,
            audience: o.resource,
            accessTokenTTL: ACCESS_TOKEN_TTL,
            accessTokenFormat: 'jwt',
            jwt: { sign: { alg: 'RS256' } },
          };
        },
      },
    },
    // no scopes are advertised (spec, Authentication 2): a client with the refresh_token grant gets a refresh token
    // without asking for offline_access, and it does not end with the browser session
    issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    // the access token names its grant, so the MCP endpoint refuses it once the grant is revoked (src/auth/grants.ts)
    extraTokenClaims: async (_ctx, token) => ('grantId' in token && token.grantId ? { grant_id: token.grantId } : undefined),
    expiresWithSession: async () => false,
    rotateRefreshToken: true,
    ttl: {
      AccessToken: ACCESS_TOKEN_TTL,
      AuthorizationCode: 60,
      Grant: GRANT_TTL,
      Interaction: 3600,
      RefreshToken: REFRESH_TOKEN_TTL,
      Session: SESSION_TTL,
      IdToken: 3600,
    },
    // browser-based clients may call the token endpoint from the origins of their own redirect URIs
    clientBasedCORS(_ctx, origin, client) {
      return (client.redirectUris ?? []).some((u) => {
        try {
          return new URL(u).origin === origin;
        } catch {
          return false;
        }
      });
    },
    async renderError(ctx, out) {
      ctx.status = Math.max(ctx.status, 400);
      for (const [k, v] of Object.entries(pageHeaders({ noindex: true }))) ctx.set(k, v);
      ctx.type = 'text/html; charset=utf-8';
      ctx.body = renderPage({
        title: 'Sign-in failed',
        noindex: true,
        body: html`<header class="masthead"><h1>Sign-in failed</h1></header>
<section class="card"><p class="notice error">${String(out.error_description ?? out.error)}</p>
<p class="muted small">Start the sign-in again from your assistant.</p></section>`,
      });
    },
  };

  const provider = new Provider(o.issuer, configuration);
  provider.proxy = o.proxy;
  provider.use(async (ctx, next) => {
    if (ctx.method === 'GET' && ctx.path === OAUTH_ROUTES.authorization) {
      const scopes = String(ctx.query.scope ?? '')
        .split(' ')
        .filter(Boolean);
      if (!scopes.includes(MCP_SCOPE)) ctx.query = { ...ctx.query, scope: [...scopes, MCP_SCOPE].join(' ') };
    }
    await next();
  });
  provider.on('server_error', (_ctx, err) => o.logger.error({ err }, 'oauth server error'));
  return provider;
}
