import { type Decision, type Handled, handle } from '../../commands/handle';
import { Organization, type OrganizationState, organizationStream } from '../../commands/organizations/organization';
import { type CreateRole, decideCreateRole, decideDeleteRole } from '../../commands/team/roles';
import type { ReadModelName } from '../../projections';
import { getRole, listRoles, type RoleView } from '../../queries/team/roles';
import { type DomainError, DomainErrorException, isDomainError } from '../domain/errors';
import { newId } from '../domain/ids';
import { authorize, isUser, requireGlobal } from '../domain/principal';
import { type Caller, commandContextOf, dbOf } from './context';

/**
 * Organization administration (spec, "Organization administration"; CONTRACT.md): roles, members, invites, groups.
 * Every rule is decided on the organization's stream (commands/team); these operations check who calls, run the
 * decision, wait for the team read model and answer from it.
 */

/** The team read model answers every read of this area. */
const READS: readonly ReadModelName[] = ['team'];

async function settle<R>(c: Caller, run: Promise<Handled<R> | DomainError>, reads: readonly ReadModelName[] = READS): Promise<R> {
  const h = await run;
  if (isDomainError(h)) throw new DomainErrorException(h);
  await c.deps.rt.waitForReadModels(h.position, reads);
  return h.result;
}

function decideOnOrganization<R>(c: Caller, decide: (s: OrganizationState) => Decision<R> | DomainError) {
  return handle(commandContextOf(c), organizationStream(c.principal.organizationId), Organization, decide);
}

/**
 * Global-only operations (spec, Authentication 4): a scoped key gets 403 'Forbidden: global API key required'; a
 * signed-in user needs the `team` category at `level`.
 */
function globalOnly(c: Caller, level: 'view' | 'manage'): void {
  if (isUser(c.principal)) authorize(c.principal, { category: 'team', level });
  else requireGlobal(c.principal);
}

// ---- roles --------------------------------------------------------------------------------------------------------

export async function listRolesOp(c: Caller): Promise<{ roles: RoleView[] }> {
  globalOnly(c, 'view');
  return { roles: await listRoles(dbOf(c), c.principal.organizationId) };
}

export async function createRoleOp(c: Caller, input: CreateRole): Promise<{ success: true; role: RoleView }> {
  globalOnly(c, 'manage');
  const role_id = newId();
  await settle(c, decideOnOrganization(c, (s) => decideCreateRole(s, { ...input, role_id })));
  return { success: true, role: await getRole(dbOf(c), c.principal.organizationId, role_id) };
}

export async function deleteRoleOp(c: Caller, roleId: string): Promise<{ success: true; message: string }> {
  globalOnly(c, 'manage');
  return settle(c, decideOnOrganization(c, (s) => decideDeleteRole(s, roleId)));
}
