import { z } from 'zod';
import { ALL_FEATURES, Feature, SYSTEM_ACTOR } from '../../src/domain/events';
import { conflict, type DomainError } from '../../src/domain/errors';
import { newId } from '../../src/domain/ids';
import { generateApiKey, hashApiKey } from '../../src/domain/keys';
import { asLabel, text } from '../../src/domain/schemas';
import type { EventStore } from '../../src/eventstore/port';
import { type Decision, handle } from '../handle';
import { Organization, type OrganizationState, organizationStream } from './organization';

export const CreateOrganization = z.object({
  name: asLabel(text().trim().min(1, 'name is required').max(200, 'name must be at most 200 characters')),
  plan: z.enum(['free', 'pro', 'enterprise']).default('enterprise'),
  features: z.array(Feature).default([...ALL_FEATURES]),
  pitch_allowance: z.number().int().min(0).default(10),
  owner_email: text().email('Invalid email address').optional(),
});
export type CreateOrganization = z.infer<typeof CreateOrganization>;

export interface OrganizationCreatedResult {
  organization_id: string;
  owner_user_id: string;
  api_key: string;
}

/** Ids and the key's hash come in with the input, so decide stays pure. */
export function decide(
  s: OrganizationState,
  cmd: CreateOrganization & { organization_id: string; owner_user_id: string; api_key_id: string; key_hash: string; key_prefix: string },
): Decision<{ organization_id: string; owner_user_id: string }> | DomainError {
  if (s.id) return conflict('Organization already exists');
  return {
    events: [
      {
        type: 'OrganizationCreated',
        data: { organization_id: cmd.organization_id, name: cmd.name, plan: cmd.plan, features: cmd.features, pitch_allowance: cmd.pitch_allowance },
      },
      {
        type: 'UserAdded',
        data: { user_id: cmd.owner_user_id, email: cmd.owner_email ?? `owner+${cmd.organization_id.slice(0, 8)}@aivis.local`, role: 'owner' },
      },
      {
        type: 'ApiKeyCreated',
        data: {
          api_key_id: cmd.api_key_id,
          name: 'Owner key',
          key_hash: cmd.key_hash,
          key_prefix: cmd.key_prefix,
          user_id: cmd.owner_user_id,
          website_ids: null,
          partner: true,
        },
      },
    ],
    result: { organization_id: cmd.organization_id, owner_user_id: cmd.owner_user_id },
  };
}

export async function createOrganization(store: EventStore, input: CreateOrganization) {
  const api_key = generateApiKey();
  const cmd = {
    ...input,
    organization_id: newId(),
    owner_user_id: newId(),
    api_key_id: newId(),
    key_hash: hashApiKey(api_key),
    key_prefix: api_key.slice(0, 10),
  };
  const r = await handle(
    { store, organizationId: cmd.organization_id, actor: SYSTEM_ACTOR },
    organizationStream(cmd.organization_id),
    Organization,
    (s) => decide(s, cmd),
  );
  if ('kind' in r) return r;
  return { ...r, result: { ...r.result, api_key } satisfies OrganizationCreatedResult };
}
