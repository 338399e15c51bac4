import type { Knex } from 'knex';
import type { CommandContext, Handled } from '../../commands/handle';
import type { ReadModelName } from '../areas';
import { requireWebsite, type WebsiteRow } from '../../queries/access';
import { isDeadLettered } from '../../queries/health/dead-letters';
import { type DomainError, isDomainError } from '../domain/errors';
import { authorize, type Need, type Principal } from '../domain/principal';
import type { Actor } from '../domain/events';
import type { Position } from '../eventstore/port';
import { KeyAuthenticator } from './auth';
import { ProblemError, problemError } from './problem';
import { RateLimiter } from '../limits/rate';
import type { Outbound } from '../net/safe-fetch';
import type { Runtime } from '../runtime';
import type { SeoOptions } from './seo';

/**
 * What an area's operations run with (src/app/<area>.ts): the runtime and the shared services, never a request or a
 * reply. REST routes and MCP tools both pass a Caller; neither holds business logic of its own.
 */
export interface AppDeps {
  rt: Runtime;
  limiter: RateLimiter;
  outbound: Outbound;
  /** the API keys' authenticator: revoking a key evicts it here at once */
  auth: KeyAuthenticator;
  /** the SEO area's entitlement cache and budgets (tests replace them) */
  seo?: SeoOptions;
}

/** The operations' services for work no request started (a worker's): no key is authenticated through them. */
export const appDepsOf = (rt: Runtime, outbound: Outbound): AppDeps => ({
  rt,
  outbound,
  limiter: new RateLimiter(rt.database.db),
  auth: new KeyAuthenticator(rt.database.db),
});

/** Who calls an operation, and with what. A route's context and a tool's context are both Callers. */
export interface Caller {
  deps: AppDeps;
  principal: Principal;
}

export const dbOf = (c: Caller): Knex => c.deps.rt.database.db;

export const actorOf = (p: Principal): Actor =>
  p.kind === 'user' ? { kind: 'user', user_id: p.userId, api_key_id: null } : { kind: 'api_key', user_id: p.userId, api_key_id: p.apiKeyId };

/** Context for commands the caller issues (on one website, when given). */
export function commandContextOf(c: Caller, websiteId?: string | null): CommandContext {
  return { store: c.deps.rt.store, organizationId: c.principal.organizationId, websiteId: websiteId ?? null, actor: actorOf(c.principal) };
}

/**
 * The website an operation addresses, if the caller may do `need` on it: 404 when no website has that id, 403 when
 * it is another organization's, outside the caller's websites, paused or deleted (unless `allow`ed), or below the
 * permission `need` names.
 */
export async function websiteFor(c: Caller, websiteId: string, need: Need, allow: { paused?: boolean; deleted?: boolean } = {}): Promise<WebsiteRow> {
  const w = await requireWebsite(dbOf(c), c.principal, websiteId, allow);
  authorize(c.principal, need, w.id);
  return w;
}

/** Unwraps a command result: a domain error becomes its HTTP error. */
export function orFail<T>(r: T | DomainError): T {
  if (isDomainError(r)) throw problemError(r);
  return r;
}

/** The read models a write's caller reads next: its answer, and what a client reads after it. */
export type Reads = readonly ReadModelName[];

/** Waits (bounded, `timeoutMs` past the usual) until the read models `reads` have what `position` wrote. */
export async function caughtUp(deps: AppDeps, position: Position | null, reads: Reads, timeoutMs?: number): Promise<boolean> {
  return deps.rt.waitForReadModels(position, reads, timeoutMs);
}

/**
 * Runs a write and waits (bounded) until the read models its caller reads next have it, so the caller reads its
 * write next; the others (the activity feed, a website's re-derived metrics) catch up on their own. A read model
 * lagging past the usual bound (a loaded host) is waited for once more (the runtime's `writeWaits`): a write with no
 * row to answer (a delete, say) then answers anyway, since it is recorded. Answers the write as its command answered it (its
 * position with the rest).
 */
export async function written<W extends { position: Position | null }>(deps: AppDeps, run: Promise<W | DomainError>, reads: Reads): Promise<W> {
  const w = orFail(await run);
  await settle(deps, w.position, reads);
  return w;
}

/** A write's wait for the read models `reads`: the usual bound, then once more for one that lags (`writeWaits`). */
export async function settle(deps: AppDeps, position: Position | null, reads: Reads): Promise<void> {
  if (!(await caughtUp(deps, position, reads))) await caughtUp(deps, position, reads, deps.rt.writeWaits.readBackMs);
}

/** A command run and waited for as `written` does: its result. */
export async function settled<R>(deps: AppDeps, run: Promise<Pick<Handled<R>, 'result' | 'position'> | DomainError>, reads: Reads): Promise<R> {
  return (await written(deps, run, reads)).result;
}

const NOT_READABLE = 'The change is recorded but cannot be read yet: read it again shortly';

/** A write's row as the read model has it, read once the write has settled: still missing, 503 (the write is recorded). */
export async function readWritten<T>(read: () => Promise<T | undefined>): Promise<T> {
  const row = await read();
  if (row !== undefined) return row;
  throw new ProblemError(503, NOT_READABLE);
}

/**
 * A write answered with its row as the read model has it (commands return ids, never views): `written` (which has
 * waited once more for a lagging read model already), then the row; still without it, 503 (`readWritten`).
 */
export async function writeThenRead<R, T>(
  c: Caller,
  run: Promise<Pick<Handled<R>, 'result' | 'position'> | DomainError>,
  reads: Reads,
  read: (result: R) => Promise<T | undefined>,
): Promise<T> {
  const h = await written(c.deps, run, reads);
  return readWritten(() => read(h.result));
}

/**
 * A read's answer, flagged `stale: true` when a read model it reads has set the website aside (an event it could not
 * apply: the website's later data waits behind it, see /readyz). REST adds the `x-aivis-stale: 1` header (mount). The
 * check runs beside the read.
 */
export async function flagStale<T extends object>(c: Caller, websiteId: string, reads: Reads, read: Promise<T>): Promise<T | (T & { stale: true })> {
  const [body, stale] = await Promise.all([read, isDeadLettered(dbOf(c), websiteId, reads)]);
  return stale ? { ...body, stale: true as const } : body;
}
