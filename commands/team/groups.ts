import { z } from 'zod';
import { conflict, type DomainError, forbidden, invalid, notFound } from '../../src/domain/errors';
import type { DomainEvent } from '../../src/domain/events';
import { PARTNER_KEY_REQUIRED } from '../../src/domain/principal';
import { boundedString, label, Uuid } from '../../src/domain/schemas';
import type { Decision } from '../handle';
import type { OrganizationState } from '../organizations/organization';
import { membershipKey } from './team';

const WebsiteIds = z
  .array(Uuid)
  .max(1000, 'must list at most 1000 websites')
  .refine((ids) => new Set(ids).size === ids.length, 'must not list an id twice');
const GroupExternalId = boundedString(255);

export const CreateGroup = z.strictObject({
  name: label(200),
  website_ids: WebsiteIds.optional(),
  external_id: GroupExternalId.nullable().optional(),
  billing_enabled: z.boolean({ error: 'must be a boolean' }).optional(),
});
export type CreateGroup = z.infer<typeof CreateGroup>;

export const UpdateGroup = z.strictObject({
  name: label(200).optional(),
  add_website_ids: WebsiteIds.optional(),
  remove_website_ids: WebsiteIds.optional(),
  external_id: GroupExternalId.nullable().optional(),
  billing_enabled: z.boolean({ error: 'must be a boolean' }).optional(),
});
export type UpdateGroup = z.infer<typeof UpdateGroup>;

export const GROUP_NOT_FOUND = 'Group not found';
export const GROUP_MEMBER_MESSAGES = {
  organizationMember: 'Cannot remove an organization member from a group',
  self: "The key's own user cannot be removed",
};

/** 409 with the group that already holds an external id. */
function externalIdTaken(s: OrganizationState, externalId: string, exceptGroupId?: string): DomainError | null {
  for (const g of s.team.groups.values()) {
    if (g.external_id === externalId && g.id !== exceptGroupId) {
      return conflict('external_id is already mapped to another group', { existing: { id: g.id, name: g.name, externalId: g.external_id } });
    }
  }
  return null;
}

function unknownWebsite(s: OrganizationState, field: string, ids: readonly string[]): DomainError | null {
  for (const id of ids) {
    const w = s.websites.get(id);
    if (!w || w.status === 'deleted') return invalid(`${field}: ${id} is not a website of this organization`);
  }
  return null;
}

export function decideCreateGroup(
  s: OrganizationState,
  cmd: CreateGroup & { group_id: string; partner: boolean },
): Decision<{ group_id: string }> | DomainError {
  if (cmd.external_id != null && !cmd.partner) return forbidden(PARTNER_KEY_REQUIRED);
  const website_ids = cmd.website_ids ?? [];
  const bad = unknownWebsite(s, 'website_ids', website_ids);
  if (bad) return bad;
  if (cmd.external_id != null) {
    const taken = externalIdTaken(s, cmd.external_id);
    if (taken) return taken;
  }
  return {
    events: [
      {
        type: 'GroupCreated',
        data: {
          group_id: cmd.group_id,
          name: cmd.name,
          website_ids,
          external_id: cmd.external_id ?? null,
          billing_enabled: cmd.billing_enabled ?? false,
        },
      },
    ],
    result: { group_id: cmd.group_id },
  };
}

export function decideUpdateGroup(
  s: OrganizationState,
  groupId: string,
  cmd: UpdateGroup & { partner: boolean },
): Decision<{ group_id: string }> | DomainError {
  const g = s.team.groups.get(groupId);
  if (!g) return notFound(GROUP_NOT_FOUND);
  if (cmd.external_id !== undefined && !cmd.partner) return forbidden(PARTNER_KEY_REQUIRED);
  const add = cmd.add_website_ids ?? [];
  const remove = cmd.remove_website_ids ?? [];
  const bad = unknownWebsite(s, 'add_website_ids', add);
  if (bad) return bad;
  const both = add.find((id) => remove.includes(id));
  if (both) return invalid(`remove_website_ids: ${both} is also in add_website_ids`);
  if (cmd.external_id != null) {
    const taken = externalIdTaken(s, cmd.external_id, g.id);
    if (taken) return taken;
  }
  const data: Extract<DomainEvent, { type: 'GroupUpdated' }>['data'] = {
    group_id: g.id,
    added_website_ids: add.filter((id) => !g.website_ids.includes(id)),
    removed_website_ids: remove.filter((id) => g.website_ids.includes(id)),
  };
  if (cmd.name !== undefined && cmd.name !== g.name) data.name = cmd.name;
  if (cmd.external_id !== undefined && cmd.external_id !== g.external_id) data.external_id = cmd.external_id;
  if (cmd.billing_enabled !== undefined && cmd.billing_enabled !== g.billing_enabled) data.billing_enabled = cmd.billing_enabled;
  const changed = data.added_website_ids.length || data.removed_website_ids.length || Object.keys(data).length > 3;
  return { events: changed ? [{ type: 'GroupUpdated', data }] : [], result: { group_id: g.id } };
}

export interface GroupMemberRemoval {
  success: true;
  group_membership_removed: boolean;
  website_memberships_removed: number;
}

/**
 * Removes a user's direct membership of a group and their explicit memberships of the websites now in the group,
 * in one event. Idempotent: nothing to remove answers false and 0. Organization members are refused (409), and so is
 * the calling key's own user.
 */
export function decideRemoveGroupMember(
  s: OrganizationState,
  groupId: string,
  userId: string,
  callerUserId: string | null,
): Decision<GroupMemberRemoval> | DomainError {
  const g = s.team.groups.get(groupId);
  if (!g) return notFound(GROUP_NOT_FOUND);
  if (callerUserId !== null && userId === callerUserId) return forbidden(GROUP_MEMBER_MESSAGES.self);
  if (s.team.members.has(userId)) return conflict(GROUP_MEMBER_MESSAGES.organizationMember);
  const direct = g.members.has(userId);
  const websites = g.website_ids.filter((w) => s.team.websiteMembers.has(membershipKey(w, userId)));
  const result: GroupMemberRemoval = { success: true, group_membership_removed: direct, website_memberships_removed: websites.length };
  if (!direct && !websites.length) return { events: [], result };
  return {
    events: [{ type: 'GroupMemberRemoved', data: { group_id: g.id, user_id: userId, group_membership_removed: direct, website_ids: websites } }],
    result,
  };
}
