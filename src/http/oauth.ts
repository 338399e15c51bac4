import { createHash, createHmac, type JsonWebKey, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type Provider from 'oidc-provider';
import { SIGN_IN_FAILED, SignedInUsers, signIn } from '../auth/accounts';
import { GRANTS_CHANNEL, LiveGrants } from '../auth/grants';
import { createOAuthProvider, INTERACTION_PATH, OAUTH_ROUTES } from '../auth/provider';
import { migrateOAuth, oauthSecrets } from '../auth/store';
import type { OAuthResource } from '../auth/resource';
import { AccessTokenVerifier } from '../auth/tokens';
import { systemRole } from '../domain/principal';
import { MCP_PATH } from '../mcp/server';
import { sendPage } from '../pages/layout';
import { consentBody, signInBody, signInProblemBody } from '../pages/signin';
import type { HttpDeps } from './route';

export const PROTECTED_RESOURCE_PATH = '/.well-known/oauth-protected-resource';
export const AUTHORIZATION_SERVER_PATH = '/.well-known/oauth-authorization-server';

export interface MountedOAuth extends OAuthResource {
  provider: Provider;
  issuer: string;
  resource: string;
  /** stops listening for team changes and revoked grants */
  close(): Promise<void>;
}

/** The authorization server's metadata (RFC 8414): no scopes_supported (spec, Authentication 2). */
export function authorizationServerMetadata(issuer: string) {
  const at = (path: string) => `${issuer}${path}`;
  return {
    issuer,
    authorization_endpoint: at(OAUTH_ROUTES.authorization),
    token_endpoint: at(OAUTH_ROUTES.token),
    registration_endpoint: at(OAUTH_ROUTES.registration),
    revocation_endpoint: at(OAUTH_ROUTES.revocation),
    jwks_uri: at(OAUTH_ROUTES.jwks),
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: ['none', 'client_secret_basic', 'client_secret_post'],
    revocation_endpoint_auth_methods_supported: ['none', 'client_secret_basic', 'client_secret_post'],
    authorization_response_iss_parameter_supported: true,
  };
}

/** Client registrations per client address and hour (counted in Postgres, so across instances). */
export const REGISTRATIONS_PER_HOUR = 100;
export const registrationLimitKey = (ip: string) => `oauth-register:${createHash('sha256').update(ip).digest('base64url').slice(0, 32)}`;

/** A form's body (application/x-www-form-urlencoded), at most 16 KiB. */
const FORM_LIMIT = 16 * 1024;

/**
 * MCP sign-in on the Fastify server: the discovery documents, oidc-provider's endpoints under /oauth/ (handed the raw
 * request: the provider parses its own bodies), and the sign-in and consent pages of an interaction.
 */
export async function registerOAuth(app: FastifyInstance, deps: HttpDeps): Promise<MountedOAuth> {
  const { rt } = deps;
  const db = rt.database.db;
  await migrateOAuth(db);
  const secrets = await oauthSecrets(db);
  const issuer = rt.config.publicBaseUrl;
  const resource = `${issuer}${MCP_PATH}`;
  const users = new SignedInUsers(db);
  const stopTeam = await rt.database.listen('aivis_team', (org) => users.evictOrganization(org));
  const grants = new LiveGrants(db);
  const stopGrants = await rt.database.listen(GRANTS_CHANNEL, (grantId) => grants.revoked(grantId));
  const stopListening = async () => {
    await Promise.all([stopTeam(), stopGrants()]);
  };
  const provider = createOAuthProvider({
    db,
    issuer,
    resource,
    secrets,
    users,
    logger: rt.logger,
    proxy: rt.config.trustProxy !== false,
  });
  const { d: _d, p: _p, q: _q, dp: _dp, dq: _dq, qi: _qi, ...publicJwk } = secrets.signingKey as JsonWebKey & { kid: string };
  const verifier = new AccessTokenVerifier({ ...publicJwk, kid: secrets.signingKey.kid }, issuer, resource);
  const resourceMetadataUrl = `${issuer}${PROTECTED_RESOURCE_PATH}${MCP_PATH}`;

  // ---- discovery ----
  const cors = (reply: FastifyReply) => reply.header('access-control-allow-origin', '*').header('cache-control', 'public, max-age=300');
  const protectedResource = {
    resource,
    authorization_servers: [issuer],
    bearer_methods_supported: ['header'],
    resource_name: 'aivis',
  };
  for (const url of [PROTECTED_RESOURCE_PATH, `${PROTECTED_RESOURCE_PATH}${MCP_PATH}`]) {
    app.get(url, async (_req, reply) => cors(reply).send(protectedResource));
  }
  const asMetadata = authorizationServerMetadata(issuer);
  for (const url of [AUTHORIZATION_SERVER_PATH, '/.well-known/openid-configuration']) {
    app.get(url, async (_req, reply) => cors(reply).send(asMetadata));
  }

  // ---- the provider's endpoints: the raw request, its body unread ----
  const callback = provider.callback();
  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', (_req, _payload, done) => done(null, undefined));
    const forward = async (req: FastifyRequest, reply: FastifyReply) => {
      // registration is open (RFC 7591): an address registers at most REGISTRATIONS_PER_HOUR clients
      if (req.method === 'POST' && req.url.split('?')[0] === OAUTH_ROUTES.registration) {
        const rate = await deps.limiter.hit(registrationLimitKey(req.ip), REGISTRATIONS_PER_HOUR, 3600);
        if (!rate.allowed) return reply.code(429).header('retry-after', String(rate.retryAfterSeconds)).send({ error: 'Too many requests' });
      }
      reply.hijack();
      callback(req.raw, reply.raw);
    };
    scope.route({ method: ['GET', 'POST', 'OPTIONS', 'DELETE'], url: '/oauth/*', handler: forward });
  });

  // ---- the sign-in pages ----
  const csrfOf = (uid: string) => createHmac('sha256', secrets.formKey).update(`interaction:${uid}`).digest('base64url');
  const csrfValid = (req: FastifyRequest, uid: string, sent: unknown) => {
    // a browser posting from another site says so; the token then binds the form to this interaction
    const site = req.headers['sec-fetch-site'];
    if (site !== undefined && site !== 'same-origin' && site !== 'none') return false;
    const origin = req.headers.origin;
    if (origin !== undefined && origin !== 'null' && origin !== new URL(issuer).origin) return false;
    const want = Buffer.from(csrfOf(uid));
    const got = Buffer.from(typeof sent === 'string' ? sent : '');
    return got.length === want.length && timingSafeEqual(got, want);
  };
  const problem = (reply: FastifyReply, status: number, title: string, message: string) =>
    sendPage(reply, { status, title, noindex: true, body: signInProblemBody(title, message) });
  const expired = (reply: FastifyReply) => problem(reply, 400, 'Sign-in expired', 'This sign-in has expired or was opened in another browser.');

  type Details = Awaited<ReturnType<Provider['interactionDetails']>>;
  const detailsOf = async (req: FastifyRequest, reply: FastifyReply): Promise<Details | null> => {
    try {
      return await provider.interactionDetails(req.raw, reply.raw);
    } catch {
      return null;
    }
  };
  const clientOf = async (d: Details) => {
    const client = await provider.Client.find(String(d.params.client_id));
    const redirect = String(d.params.redirect_uri ?? client?.redirectUris?.[0] ?? '');
    let origin = '';
    let host = '';
    try {
      const u = new URL(redirect);
      origin = u.origin;
      host = u.host;
    } catch {}
    return { name: client?.clientName ?? String(d.params.client_id), origin, host };
  };
  const formActions = (origin: string) => (origin && origin !== 'null' ? [origin] : []);

  async function signInPage(reply: FastifyReply, d: Details, extra: { email?: string; error?: string; status?: number } = {}) {
    const c = await clientOf(d);
    return sendPage(reply, {
      status: extra.status ?? 200,
      title: 'Sign in to aivis',
      noindex: true,
      formActions: formActions(c.origin),
      body: signInBody({ action: `${INTERACTION_PATH}/${d.uid}/login`, csrf: csrfOf(d.uid), client: c.name, email: extra.email, error: extra.error }),
    });
  }

  async function consentPage(reply: FastifyReply, d: Details) {
    const c = await clientOf(d);
    const accountId = d.session?.accountId;
    const account = accountId ? await users.account(accountId) : null;
    const principal = accountId ? await users.principal(accountId) : null;
    if (!account || !principal) return expired(reply);
    const roleRow = (await db('rm_team_members as m')
      .leftJoin('rm_team_roles as r', 'r.id', 'm.role_id')
      .where({ 'm.user_id': account.id })
      .first('m.role_id', 'r.name')) as { role_id: string; name: string | null } | undefined;
    const role = roleRow ? (systemRole(roleRow.role_id)?.name ?? roleRow.name ?? 'member') : 'website member';
    return sendPage(reply, {
      title: 'Allow access?',
      noindex: true,
      formActions: formActions(c.origin),
      body: consentBody({
        action: `${INTERACTION_PATH}/${d.uid}/consent`,
        csrf: csrfOf(d.uid),
        client: c.name,
        returnsTo: c.host || 'your assistant',
        email: account.email,
        organization: account.organization,
        role,
      }),
    });
  }

  await app.register(async (scope) => {
    scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: FORM_LIMIT }, (_req, body, done) =>
      done(null, Object.fromEntries(new URLSearchParams(body as string))),
    );

    scope.get<{ Params: { uid: string } }>(`${INTERACTION_PATH}/:uid`, async (req, reply) => {
      const d = await detailsOf(req, reply);
      if (!d || d.uid !== req.params.uid) return expired(reply);
      return d.prompt.name === 'login' ? signInPage(reply, d) : consentPage(reply, d);
    });

    scope.post<{ Params: { uid: string }; Body: Record<string, string> | undefined }>(`${INTERACTION_PATH}/:uid/login`, async (req, reply) => {
      const d = await detailsOf(req, reply);
      if (!d || d.uid !== req.params.uid) return expired(reply);
      const form = req.body ?? {};
      if (!csrfValid(req, d.uid, form.csrf)) return problem(reply, 403, 'Sign-in refused', 'This form was not sent from the aivis sign-in page.');
      if (d.prompt.name !== 'login') return consentPage(reply, d);
      const email = typeof form.email === 'string' ? form.email.trim() : '';
      const password = typeof form.password === 'string' ? form.password : '';
      if (!email || !password) return signInPage(reply, d, { email, error: 'Enter your email and your password.', status: 400 });
      const r = await signIn({ db, limiter: deps.limiter }, { email, password, clientKey: req.ip });
      if (!r.ok) {
        if (r.reason === 'throttled') {
          const minutes = Math.max(1, Math.ceil((r.retryAfterSeconds ?? 60) / 60));
          reply.header('retry-after', String(r.retryAfterSeconds ?? 60));
          return signInPage(reply, d, {
            email,
            status: 429,
            error: `Too many sign-in attempts. Try again in ${minutes} minute${minutes === 1 ? '' : 's'}.`,
          });
        }
        return signInPage(reply, d, { email, error: SIGN_IN_FAILED, status: 401 });
      }
      const to = await provider.interactionResult(req.raw, reply.raw, { login: { accountId: r.userId } }, { mergeWithLastSubmission: false });
      return reply.code(303).header('cache-control', 'no-store').redirect(to, 303);
    });

    scope.post<{ Params: { uid: string }; Body: Record<string, string> | undefined }>(`${INTERACTION_PATH}/:uid/consent`, async (req, reply) => {
      const d = await detailsOf(req, reply);
      if (!d || d.uid !== req.params.uid) return expired(reply);
      const form = req.body ?? {};
      if (!csrfValid(req, d.uid, form.csrf)) return problem(reply, 403, 'Sign-in refused', 'This form was not sent from the aivis sign-in page.');
      if (d.prompt.name !== 'consent' || !d.session?.accountId) return expired(reply);
      let result: Parameters<Provider['interactionResult']>[2];
      if (form.decision === 'allow') {
        const accountId = d.session.accountId;
        const clientId = String(d.params.client_id);
        const grant = (d.grantId ? await provider.Grant.find(d.grantId) : undefined) ?? new provider.Grant({ accountId, clientId });
        const details = d.prompt.details as {
          missingOIDCScope?: string[];
          missingOIDCClaims?: string[];
          missingResourceScopes?: Record<string, string[]>;
        };
        if (details.missingOIDCScope) grant.addOIDCScope(details.missingOIDCScope.join(' '));
        if (details.missingOIDCClaims) grant.addOIDCClaims(details.missingOIDCClaims);
        for (const [indicator, scopes] of Object.entries(details.missingResourceScopes ?? {})) grant.addResourceScope(indicator, scopes.join(' '));
        result = { consent: { grantId: await grant.save() } };
      } else {
        result = { error: 'access_denied', error_description: 'The user did not allow access' };
      }
      const to = await provider.interactionResult(req.raw, reply.raw, result, { mergeWithLastSubmission: true });
      return reply.code(303).header('cache-control', 'no-store').redirect(to, 303);
    });
  });

  return { provider, issuer, resource, verifier, grants, users, resourceMetadataUrl, close: stopListening };
}
