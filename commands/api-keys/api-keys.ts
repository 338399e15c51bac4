import { z } from 'zod';
import { type DomainError, forbidden, invalid, notFound } from '../../src/domain/errors';
import { newId } from '../../src/domain/ids';
import { generateApiKey, hashApiKey } from '../../src/domain/keys';
import { label, Uuid } from '../../src/domain/schemas';
import { type CommandContext, type Decision, handle } from '../handle';
import { Organization, type OrganizationState, organizationStream } from '../organizations/organization';

export const CreateApiKey = z.strictObject({
  name: label(100),
  website_ids: z.array(Uuid).min(1, 'must list at least one website (omit it for a global key)').max(100).nullable().optional(),
  partner: z.boolean({ error: 'must be a boolean' }).optional(),
});
export type CreateApiKey = z.infer<typeof CreateApiKey>;

export function decideCreateApiKey(
  s: OrganizationState,
  cmd: CreateApiKey & { api_key_id: string; key_hash: string; key_prefix: string; user_id: string | null; caller_partner: boolean },
): Decision<{ id: string }> | DomainError {
  const scope = cmd.website_ids ? [...new Set(cmd.website_ids)] : null;
  for (const id of scope ?? []) {
    const w = s.websites.get(id);
    if (!w || w.status === 'deleted') return invalid(`website_ids: ${id} is not a website of this organization`);
  }
  const partner = cmd.partner ?? false;
  if (partner && !cmd.caller_partner) return forbidden('Forbidden: partner API key required');
  return {
    events: [
      {
        type: 'ApiKeyCreated',
        data: {
          api_key_id: cmd.api_key_id,
          name: cmd.name,
          key_hash: cmd.key_hash,
          key_prefix: cmd.key_prefix,
          user_id: cmd.user_id,
          website_ids: scope,
          partner,
        },
      },
    ],
    result: { id: cmd.api_key_id },
  };
}

/**
 * Creates a key; the secret is made at the edge (here, unless the caller hands one in) and never enters decide.
 * `caller_partner`: whether the key asking is a partner key (only a partner key may create one).
 */
export async function createApiKey(ctx: CommandContext, input: CreateApiKey & { caller_partner: boolean }, key = generateApiKey()) {
  const { caller_partner: callerPartner, ...request } = input;
  const cmd = {
    ...request,
    api_key_id: newId(),
    key_hash: hashApiKey(key),
    key_prefix: key.slice(0, 10),
    user_id: ctx.actor.user_id,
    caller_partner: callerPartner,
  };
  const r = await handle(ctx, organizationStream(ctx.organizationId), Organization, (s) => decideCreateApiKey(s, cmd));
  if ('kind' in r) return r;
  return { ...r, result: { ...r.result, key } };
}

export function decideRevokeApiKey(s: OrganizationState, apiKeyId: string): Decision<{ success: true }> | DomainError {
  const k = s.keys.get(apiKeyId);
  if (!k || k.revoked) return notFound('API key not found');
  return { events: [{ type: 'ApiKeyRevoked', data: { api_key_id: apiKeyId } }], result: { success: true } };
}

export function revokeApiKey(ctx: CommandContext, input: { api_key_id: string }) {
  return handle(ctx, organizationStream(ctx.organizationId), Organization, (s) => decideRevokeApiKey(s, input.api_key_id));
}
