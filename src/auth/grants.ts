import type { Knex } from 'knex';

/** NOTIFY channel: a grant's id when it is revoked (deleted), so every instance refuses its access tokens at once. */
export const GRANTS_CHANNEL = 'aivis_grants';

/**
 * How long a grant found alive is trusted without asking again: a revocation's notice drops it at once; this bounds a
 * notice lost with the listening connection to the 5 s of CONTRACT "MCP sign-in" (with the lookup's own time).
 */
export const GRANT_TTL_MS = 4_000;
/** grants remembered at most (the cache is cleared past it): a stream of tokens cannot grow it */
const GRANT_CACHE_MAX = 10_000;

/**
 * Whether the grant behind an access token still stands (oidc-provider's Grant in aivis_oauth, unexpired), kept
 * GRANT_TTL_MS per grant so a valid token costs a map lookup. A revoked grant (a replayed code, a refresh token used
 * twice, a member removed, a password changed) is deleted with a NOTIFY on GRANTS_CHANNEL that every instance hears.
 */
export class LiveGrants {
  private cache = new Map<string, { alive: boolean; until: number }>();
  /** counts notices: a lookup that saw one while it ran does not cache what it read */
  private notices = 0;

  constructor(
    private readonly db: Knex,
    private readonly now: () => number = Date.now,
  ) {}

  async alive(grantId: string): Promise<boolean> {
    const hit = this.cache.get(grantId);
    if (hit && hit.until > this.now()) return hit.alive;
    const seen = this.notices;
    const row = await this.db('aivis_oauth')
      .where({ model: 'Grant', id: grantId })
      .where((q) => q.whereNull('expires_at').orWhere('expires_at', '>', this.db.fn.now()))
      .first(this.db.raw('1 as one'));
    const alive = row !== undefined;
    if (seen === this.notices || !alive) {
      if (this.cache.size >= GRANT_CACHE_MAX) this.cache.clear();
      this.cache.set(grantId, { alive, until: this.now() + GRANT_TTL_MS });
    }
    return alive;
  }

  /** A grant was revoked (NOTIFY GRANTS_CHANNEL): refused from now on (a revocation is final). */
  revoked(grantId: string): void {
    this.notices++;
    this.cache.set(grantId, { alive: false, until: Number.POSITIVE_INFINITY });
    if (this.cache.size > GRANT_CACHE_MAX) this.cache.clear();
  }
}

/**
 * Signs a user out everywhere (a password set, a removal from the organization), in the caller's transaction: the
 * user's grants issued before `at` with their codes and refresh tokens, and their browser sessions signed in before
 * it, are deleted, and each grant's id is NOTIFYd on GRANTS_CHANNEL. Only what predates `at`, so replaying the event
 * (a rebuild) never signs out a later sign-in. Nothing when the sign-in's table does not exist (no server ran here).
 */
export async function signOutUser(trx: Knex.Transaction, userId: string, at: string): Promise<void> {
  const exists = (await trx.raw(`select to_regclass('aivis_oauth') is not null as e`)).rows[0].e as boolean;
  if (!exists) return;
  const before = `extract(epoch from cast(? as timestamptz))`;
  await trx.raw(
    `with grants as (
       delete from aivis_oauth
        where model = 'Grant' and payload->>'accountId' = ? and coalesce(cast(payload->>'iat' as bigint), 0) < ${before}
       returning id),
     tokens as (delete from aivis_oauth where grant_id in (select id from grants)),
     sessions as (
       delete from aivis_oauth
        where model = 'Session' and payload->>'accountId' = ? and coalesce(cast(payload->>'loginTs' as bigint), 0) < ${before})
     select pg_notify(?, id) from grants`,
    [userId, at, userId, at, GRANTS_CHANNEL],
  );
}
