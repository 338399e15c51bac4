import { createHash } from 'node:crypto';
import { hash as hashPassword, verify as verifyPassword } from '@node-rs/argon2';
import type { Knex } from 'knex';
import { handle } from '../../commands/handle';
import { Organization, organizationStream } from '../../commands/organizations/organization';
import { userAccess } from '../../queries/team/members';
import { isDomainError } from '../domain/errors';
import { SYSTEM_ACTOR } from '../domain/events';
import { type Principal, userPrincipal } from '../domain/principal';
import type { EventStore } from '../eventstore/port';
import type { RateLimiter } from '../limits/rate';
import { cutText } from '../domain/text';

/** spec-free choices, CONTRACT.md "MCP sign-in": sign-in attempts counted in Postgres, so every instance holds them */
export const SIGN_IN_WINDOW_SECONDS = 15 * 60;
/** attempts per account (email) in a window */
export const SIGN_IN_PER_ACCOUNT = 10;
/** attempts per client address in a window (a household or office shares one) */
export const SIGN_IN_PER_ADDRESS = 30;
/** a password shorter than this is refused where one is set (invite acceptance says the same) */
export const MIN_PASSWORD_LENGTH = 8;
export const MAX_PASSWORD_LENGTH = 200;

/** Why a password cannot be set, in the words invite acceptance uses; null when it can. */
export function passwordProblem(password: string): string | null {
  if (password.length < MIN_PASSWORD_LENGTH) return `password: must be at least ${MIN_PASSWORD_LENGTH} characters`;
  if (password.length > MAX_PASSWORD_LENGTH) return `password: must be at most ${MAX_PASSWORD_LENGTH} characters`;
  if (password.includes('\u0000')) return 'password: must not contain NUL (U+0000)';
  return null;
}

/**
 * Sets the password (argon2id) of the account with this email (`users:set-password`): UserPasswordSet on its
 * organization's stream, which the team read model applies. The same email in two organizations needs the organization.
 */
export async function setPassword(
  rt: { store: EventStore; database: { db: Knex } },
  input: { email: string; password: string; organizationId?: string },
): Promise<{ user_id: string; organization_id: string }> {
  const problem = passwordProblem(input.password);
  if (problem) throw new Error(problem);
  const q = rt.database.db('rm_team_users').whereRaw('lower(email) = ?', [input.email.trim().toLowerCase()]);
  if (input.organizationId) q.where('organization_id', input.organizationId);
  const rows = (await q.select('id', 'organization_id')) as { id: string; organization_id: string }[];
  if (!rows.length) throw new Error(`no user has the email ${input.email}`);
  if (rows.length > 1) throw new Error(`${rows.length} organizations have a user with the email ${input.email}: name one with --org`);
  const [user] = rows;
  const password_hash = await hashPassword(input.password);
  const ctx = { store: rt.store, organizationId: user.organization_id, actor: SYSTEM_ACTOR };
  const h = await handle(ctx, organizationStream(user.organization_id), Organization, () => ({
    events: [{ type: 'UserPasswordSet' as const, data: { user_id: user.id, password_hash } }],
    result: { user_id: user.id, organization_id: user.organization_id },
  }));
  if (isDomainError(h)) throw new Error(h.message);
  return h.result;
}

export const SIGN_IN_FAILED = 'The email or password is incorrect.';

export type SignInResult =
  | { ok: true; userId: string; organizationId: string; email: string }
  | { ok: false; reason: 'invalid' | 'throttled'; retryAfterSeconds?: number };

// verified when no account matches, so an unknown email costs as long as a wrong password
let decoy: Promise<string> | undefined;

/**
 * Email and password against the users' argon2id hashes. Brute force is slowed per account and per address: each
 * attempt spends one of SIGN_IN_PER_ACCOUNT for the email and one of SIGN_IN_PER_ADDRESS for the client, and past
 * either the answer is "throttled" without checking the password. The same email in two organizations is two
 * accounts: the first (oldest) whose password matches signs in.
 */
export async function signIn(
  deps: { db: Knex; limiter: RateLimiter },
  input: { email: string; password: string; clientKey: string },
): Promise<SignInResult> {
  const email = input.email.trim().toLowerCase();
  // the counters' keys are hashes: neither the email nor the address is stored with them
  const digest = (v: string) => createHash('sha256').update(v).digest('base64url').slice(0, 32);
  const [account, address] = await Promise.all([
    deps.limiter.hit(`signin-account:${digest(email)}`, SIGN_IN_PER_ACCOUNT, SIGN_IN_WINDOW_SECONDS),
    deps.limiter.hit(`signin-address:${digest(input.clientKey)}`, SIGN_IN_PER_ADDRESS, SIGN_IN_WINDOW_SECONDS),
  ]);
  if (!account.allowed || !address.allowed) {
    return {
      ok: false,
      reason: 'throttled',
      retryAfterSeconds: Math.max(account.allowed ? 0 : account.retryAfterSeconds, address.allowed ? 0 : address.retryAfterSeconds),
    };
  }
  const rows = (await deps
    .db('rm_team_users')
    .whereRaw('lower(email) = ?', [email])
    .whereNotNull('password_hash')
    .orderBy([{ column: 'created_at' }, { column: 'id' }])
    .select('id', 'organization_id', 'email', 'password_hash')) as { id: string; organization_id: string; email: string; password_hash: string }[];
  if (!rows.length || input.password.length > MAX_PASSWORD_LENGTH) {
    decoy ??= hashPassword('decoy password, never matches');
    await verifyPassword(await decoy, cutText(input.password, MAX_PASSWORD_LENGTH)).catch(() => false);
    return { ok: false, reason: 'invalid' };
  }
  for (const r of rows) {
    if (await verifyPassword(r.password_hash, input.password).catch(() => false)) {
      return { ok: true, userId: r.id, organizationId: r.organization_id, email: r.email };
    }
  }
  return { ok: false, reason: 'invalid' };
}

/** How long a signed-in user's principal (role, websites) is reused before it is read again. */
export const PRINCIPAL_TTL_MS = 10_000;

/**
 * A signed-in user's principal by their id (the access token's subject): the organization, reachable websites and
 * role matrix from the team read model, kept PRINCIPAL_TTL_MS so a valid token costs no database round trip. A change
 * of the organization's team (roles, memberships, groups) drops it at once on every instance (the team projection
 * NOTIFYs `aivis_team`); the TTL bounds what a lost notice or a paused website costs. null: no such user any more.
 */
export class SignedInUsers {
  private cache = new Map<string, { p: Principal | null; org: string | null; until: number }>();
  constructor(
    private readonly db: Knex,
    private readonly now: () => number = Date.now,
  ) {}

  async principal(userId: string): Promise<Principal | null> {
    const hit = this.cache.get(userId);
    if (hit && hit.until > this.now()) return hit.p;
    const row = (await this.db('rm_team_users').where('id', userId).first('organization_id')) as { organization_id: string } | undefined;
    const access = row ? await userAccess(this.db, row.organization_id, userId) : null;
    const p = access ? userPrincipal(access) : null;
    if (this.cache.size > 10_000) this.cache.clear();
    this.cache.set(userId, { p, org: row?.organization_id ?? null, until: this.now() + PRINCIPAL_TTL_MS });
    return p;
  }

  /** The team read model changed in this organization (NOTIFY aivis_team): its users' principals are read again. */
  evictOrganization(organizationId: string): void {
    for (const [id, v] of this.cache) if (v.org === organizationId || v.org === null) this.cache.delete(id);
  }

  /** The account behind a subject, for the provider's findAccount and the consent page. */
  async account(userId: string): Promise<{ id: string; email: string; organization: string } | null> {
    const row = (await this.db('rm_team_users as u')
      .join('rm_organizations as o', 'o.id', 'u.organization_id')
      .where('u.id', userId)
      .first('u.id', 'u.email', 'o.name')) as { id: string; email: string; name: string } | undefined;
    return row ? { id: row.id, email: row.email, organization: row.name } : null;
  }
}
