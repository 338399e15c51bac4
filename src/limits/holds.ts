import type { Knex } from 'knex';
import { type DomainError, DomainErrorException, isDomainError, rateLimited } from '../domain/errors';

/**
 * A cap on things in progress at once per scope: "3 processing pitches per organization", "1,000 outstanding jobs
 * per website". A request takes a place when admitted and its job gives it back when it ends.
 */
export interface ConcurrencyLimit {
  name: string;
  limit: number;
  /** the Retry-After a refused request is told (nothing frees at a known time: a fair guess at when one will) */
  retryAfterSeconds: number;
  /** what a refused request is told (default `Rate limit exceeded`) */
  message?: string;
}

export interface HoldDecision {
  allowed: boolean;
  /** places of the scope taken, this one included when allowed */
  held: number;
  limit: number;
  retryAfterSeconds: number;
}

export async function migrateHolds(db: Knex): Promise<void> {
  await db.raw(`
    create table if not exists aivis_limit_holds (
      name text not null,
      scope text not null,
      holder_id text not null,
      -- the stream of what holds the place (a job): a sweep gives back places whose holder ended or never came to be
      subject text,
      acquired_at timestamptz not null default now(),
      primary key (name, holder_id)
    );
    create index if not exists aivis_limit_holds_scope on aivis_limit_holds (name, scope);
    create index if not exists aivis_limit_holds_holder on aivis_limit_holds (holder_id);`);
}

/**
 * Takes a place of `scope` under `limit` for `holderId`, counted in Postgres so that every instance shares the count.
 * Idempotent per holder: a holder that has its place is allowed again and takes nothing more. Counting and taking run
 * under a transaction-scoped advisory lock of (limit, scope), so two instances never both take the last place.
 */
export async function acquireHold(
  db: Knex,
  limit: ConcurrencyLimit,
  scope: string,
  holderId: string,
  subject: string | null = null,
): Promise<HoldDecision> {
  return db.transaction(async (trx) => {
    await trx.raw('select pg_advisory_xact_lock(hashtextextended(?, 0))', [`aivis-hold:${limit.name}:${scope}`]);
    const counted = await trx.raw(
      `select count(*)::int as held, bool_or(holder_id = ?) as mine from aivis_limit_holds where name = ? and scope = ?`,
      [holderId, limit.name, scope],
    );
    const held = Number(counted.rows[0].held);
    const out = (allowed: boolean, n: number): HoldDecision => ({ allowed, held: n, limit: limit.limit, retryAfterSeconds: limit.retryAfterSeconds });
    if (counted.rows[0].mine) return out(true, held);
    if (held >= limit.limit) return out(false, held);
    // a holder keeps one place per limit: taken under another scope, it is not taken twice
    const r = await trx.raw(
      `insert into aivis_limit_holds (name, scope, holder_id, subject) values (?, ?, ?, ?) on conflict (name, holder_id) do nothing returning 1`,
      [limit.name, scope, holderId, subject],
    );
    return out(true, r.rows.length ? held + 1 : held);
  });
}

/** acquireHold, or a `rate_limited` domain error (429 with the limit's Retry-After and message) when the scope is full. */
export async function holdOrRefuse(...args: Parameters<typeof acquireHold>): Promise<HoldDecision> {
  const d = await acquireHold(...args);
  if (!d.allowed) throw new DomainErrorException(rateLimited(d.retryAfterSeconds, args[1].message));
  return d;
}

/**
 * A job's admission under a cap: takes `holderId`'s place (acquireHold), then runs `step`, the part of the admission
 * that may refuse (an allowance, a page to read). A full scope is a `rate_limited` domain error and `step` does not run;
 * a refusal of `step` (a domain error) or its failure (a throw) gives the place back before it is answered. What
 * `step` answers otherwise.
 */
export async function admitUnderHold<T>(
  db: Knex,
  limit: ConcurrencyLimit,
  scope: string,
  holderId: string,
  subject: string,
  step: () => Promise<T | DomainError>,
): Promise<T | DomainError> {
  const held = await acquireHold(db, limit, scope, holderId, subject);
  if (!held.allowed) return rateLimited(held.retryAfterSeconds, limit.message);
  const done = await step().catch(async (err) => {
    await releaseHolds(db, holderId);
    throw err;
  });
  if (isDomainError(done)) await releaseHolds(db, holderId);
  return done;
}

/** Gives back every place `holderId` holds (a job that ended); the number given back. */
export async function releaseHolds(db: Knex, holderId: string): Promise<number> {
  return db('aivis_limit_holds').where('holder_id', holderId).delete();
}

/** Places of a scope taken now. */
export async function heldCount(db: Knex, limitName: string, scope: string): Promise<number> {
  const r = await db('aivis_limit_holds').where({ name: limitName, scope }).count<{ n: string }[]>('* as n');
  return Number(r[0].n);
}
