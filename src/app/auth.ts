import type { Knex } from 'knex';
import { apiKeyByHash } from '../../queries/websites/api-keys';
import { API_KEY_RE, hashApiKey } from '../domain/keys';
import type { Principal } from '../domain/principal';
import type { RateLimiter } from '../limits/rate';
import { ProblemError } from './problem';

/** Extracts the key from `x-api-key` (REST) or also `Authorization: Bearer` (MCP). */
export function keyFromHeaders(headers: Record<string, string | string[] | undefined>, allowBearer: boolean): string | null {
  const x = headers['x-api-key'];
  if (typeof x === 'string' && x.length) return x.trim();
  if (allowBearer) {
    const a = headers.authorization;
    if (typeof a === 'string') {
      const m = /^Bearer\s+(.+)$/i.exec(a.trim());
      if (m) return m[1].trim();
    }
  }
  return null;
}

const TTL_MS = 60_000;
/** how long an unknown (or revoked) key is refused without asking the database again */
export const UNKNOWN_KEY_TTL_MS = 5_000;
/** unknown keys remembered at most (the oldest go first): a stream of random keys can't grow the cache */
export const UNKNOWN_KEY_MAX = 10_000;

/**
 * Key lookup with a positive cache keyed by the key's hash. Revocation evicts at once: the organizations
 * projection NOTIFYs `aivis_keys` in the transaction that records it, and every instance listens.
 * Unknown and revoked keys are cached too (negatively, UNKNOWN_KEY_TTL_MS, at most UNKNOWN_KEY_MAX): a client retrying
 * with a bad key costs a map lookup, not a query. A key's creation NOTIFYs its hash the same way, so a key refused a
 * moment before it was created (on any instance) works as soon as its creation commits; a lookup that was running
 * when that notice came caches nothing. The TTL only bounds a notice lost with the listening connection.
 */
export class KeyAuthenticator {
  private cache = new Map<string, { p: Principal; until: number }>();
  /** refused keys: until when, and whether the key is revoked (final: no notice un-refuses it) */
  private unknown = new Map<string, { until: number; revoked: boolean }>();
  /**
   * lookups under way, by key hash, and the notices of that hash they saw: a lookup that saw one (the key's creation or
   * revocation) caches nothing; another key's notice leaves it be (a busy instance hears them all the time)
   */
  private lookups = new Map<string, { running: number; notices: number }>();

  private readonly now: () => number;
  private readonly unknownTtlMs: number;
  private readonly unknownMax: number;

  constructor(
    private readonly db: Knex,
    options: { now?: () => number; unknownTtlMs?: number; unknownMax?: number } = {},
  ) {
    this.now = options.now ?? Date.now;
    this.unknownTtlMs = options.unknownTtlMs ?? UNKNOWN_KEY_TTL_MS;
    this.unknownMax = options.unknownMax ?? UNKNOWN_KEY_MAX;
  }

  async authenticate(key: string | null): Promise<Principal | null> {
    if (!key || !API_KEY_RE.test(key)) return null;
    const hash = hashApiKey(key);
    const now = this.now();
    const hit = this.cache.get(hash);
    if (hit && hit.until > now) return hit.p;
    const miss = this.unknown.get(hash);
    if (miss !== undefined) {
      if (miss.until > now) return null;
      this.unknown.delete(hash);
    }
    const lookup = this.lookups.get(hash) ?? { running: 0, notices: 0 };
    this.lookups.set(hash, lookup);
    lookup.running++;
    const seen = lookup.notices;
    let row: Awaited<ReturnType<typeof apiKeyByHash>>;
    try {
      row = await apiKeyByHash(this.db, hash);
    } finally {
      if (--lookup.running === 0) this.lookups.delete(hash);
    }
    if (!row || row.revoked_at) {
      this.cache.delete(hash);
      // a revocation is final, so its refusal is cached whatever came meanwhile; an unknown key's only when no notice
      // of it came while the lookup ran (it may have been created just then)
      const revoked = Boolean(row?.revoked_at);
      if (revoked || seen === lookup.notices) {
        if (this.unknown.size >= this.unknownMax) this.unknown.delete(this.unknown.keys().next().value!);
        this.unknown.set(hash, { until: this.now() + this.unknownTtlMs, revoked });
      }
      return null;
    }
    const p: Principal = {
      organizationId: row.organization_id,
      apiKeyId: row.id,
      userId: row.user_id,
      websiteIds: row.website_ids,
      partner: row.partner,
      plan: row.plan,
      features: row.features,
    };
    // its revocation's notice came while it ran: answered as read, not remembered (or accepted for TTL_MS after it)
    if (seen === lookup.notices) this.cache.set(hash, { p, until: Date.now() + TTL_MS });
    return p;
  }

  /** Drops a key by id at once (the instance that revoked it; the others hear the NOTIFY). */
  evictKeyId(apiKeyId: string): void {
    for (const [h, v] of this.cache) if (v.p.apiKeyId === apiKeyId) this.cache.delete(h);
  }

  /** payload: a key hash (revoked or created), or `org:<id>` to drop every key of an organization */
  evict(payload: string): void {
    const lookup = this.lookups.get(payload);
    if (lookup) lookup.notices++;
    // a creation's notice un-refuses an unknown key; a revoked key's own (late) notice leaves its refusal cached
    if (!this.unknown.get(payload)?.revoked) this.unknown.delete(payload);
    if (payload.startsWith('org:')) {
      const org = payload.slice(4);
      for (const [h, v] of this.cache) if (v.p.organizationId === org) this.cache.delete(h);
    } else {
      this.cache.delete(payload);
    }
  }
}

/**
 * Spends one request of the organization's general budget (REST and MCP share it). Sets the x-rate-limit-* headers
 * through `setHeader` (also on a 429) and throws 429 with Retry-After when the budget is gone.
 */
export async function spendOrganizationBudget(
  deps: { limiter: RateLimiter; rt: { config: { rateLimitPerMin: number } } },
  principal: Principal,
  setHeader: (name: string, value: string) => void,
) {
  const rate = await deps.limiter.hit(`org:${principal.organizationId}`, deps.rt.config.rateLimitPerMin, 60);
  setHeader('x-rate-limit-limit', String(rate.limit));
  setHeader('x-rate-limit-remaining', String(rate.remaining));
  setHeader('x-rate-limit-reset', String(rate.resetAt));
  if (!rate.allowed) throw new ProblemError(429, 'Too many requests', undefined, { 'retry-after': String(rate.retryAfterSeconds) });
}
