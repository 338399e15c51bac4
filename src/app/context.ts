import type { Knex } from 'knex';
import type { CommandContext } from '../../commands/handle';
import { requireWebsite, type WebsiteRow } from '../../queries/access';
import { authorize, type Need, type Principal } from '../domain/principal';
import type { Actor } from '../domain/events';
import type { RateLimiter } from '../limits/rate';
import type { Outbound } from '../net/safe-fetch';
import type { Runtime } from '../runtime';

/**
 * What an area's operations run with (src/app/<area>.ts): the runtime and the shared services, never a request or a
 * reply. REST routes and MCP tools both pass a Caller; neither holds business logic of its own.
 */
export interface AppDeps {
  rt: Runtime;
  limiter: RateLimiter;
  outbound: Outbound;
}

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
