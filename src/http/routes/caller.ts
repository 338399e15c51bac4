import type { Principal } from '../auth';
import { commandContextFor, type HttpDeps } from '../route';

/** Who calls an area's operations (a REST route's context and an MCP tool's both fit). */
export interface Caller {
  deps: HttpDeps;
  principal: Principal;
}

export const dbOf = (c: Caller) => c.deps.rt.database.db;

/** Context for commands the caller issues on one website. */
export const commandContextOf = (c: Caller, websiteId: string) => commandContextFor(c.deps, c.principal, websiteId);
