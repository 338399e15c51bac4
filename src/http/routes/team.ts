import { z } from 'zod';
import { CreateRole, RoleId } from '../../../commands/team/roles';
import { RolesView, RoleView } from '../../../queries/team/roles';
import { createRoleOp, deleteRoleOp, listRolesOp } from '../../app/team';
import { route } from '../route';

const TAG = 'organization administration';
const Success = z.object({ success: z.boolean(), message: z.string() });

/** Organization administration: thin adapters over src/app/team.ts. */
export const teamRoutes = [
  route({
    method: 'GET',
    url: '/api/v1/roles',
    summary: 'The system roles and the organization\'s custom roles (global key)',
    tag: TAG,
    responses: { 200: RolesView },
    handler: (ctx) => listRolesOp(ctx),
  }),
  route({
    method: 'POST',
    url: '/api/v1/roles',
    summary: 'Create a custom role (Enterprise plan; global key): unique name, every category at least view, a matrix no other role has',
    tag: TAG,
    body: CreateRole,
    status: 201,
    responses: { 201: z.object({ success: z.boolean(), role: RoleView }) },
    handler: (ctx) => createRoleOp(ctx, ctx.body),
  }),
  route({
    method: 'DELETE',
    url: '/api/v1/roles/:role_id',
    summary: 'Delete a custom role: not a system role, not in use by members or pending invites (global key)',
    tag: TAG,
    params: z.object({ role_id: RoleId }),
    responses: { 200: Success },
    handler: (ctx) => deleteRoleOp(ctx, ctx.params.role_id),
  }),
];
