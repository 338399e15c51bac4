import type { Knex } from 'knex';
import { signOutUser } from '../src/auth/grants';
import { TEAM_EVENT_TYPES } from '../src/domain/events';
import { SYSTEM_ROLE_IDS } from '../src/domain/principal';
import { type Projection, migrateSql } from '../src/eventstore/projection';
import { CREATED_UPDATED, orgRow } from './rows';

/**
 * The organization's people and their access (commands/team): custom roles, users, organization members, explicit
 * website memberships, groups with their websites and members, invites. What the team queries and a signed-in user's
 * principal read.
 */
/** Memberships with a role: a membership already there (same `key` columns) takes the new role_id, the rest is kept. */
const setRoles = (trx: Knex.Transaction, table: string, key: string[], rows: Record<string, unknown>[]) =>
  trx(table).insert(rows).onConflict(key).merge(['role_id']);

/** The user's role in the organization from `at` (a member already keeps their first time). */
const setOrganizationRole = (trx: Knex.Transaction, org: string, userId: string, roleId: string, at: string) =>
  setRoles(trx, 'rm_team_members', ['organization_id', 'user_id'], [{ organization_id: org, user_id: userId, role_id: roleId, created_at: at }]);

const userAdded = orgRow<'UserAdded'>({ table: 'rm_team_users', id: 'user_id', columns: ['email'], extra: () => ({ email_verified: true }) });
const userCreated = orgRow<'UserCreated'>({ table: 'rm_team_users', id: 'user_id', columns: ['email', 'first_name', 'last_name', 'email_verified'] });
const roleCreated = orgRow<'RoleCreated'>({ table: 'rm_team_roles', id: 'role_id', columns: ['name', 'slug'], json: ['permissions'] });
const groupCreated = orgRow<'GroupCreated'>({
  table: 'rm_team_groups',
  id: 'group_id',
  columns: ['name', 'external_id', 'billing_enabled'],
  stamps: CREATED_UPDATED,
});
const inviteCreated = orgRow<'InviteCreated'>({
  table: 'rm_team_invites',
  id: 'invite_id',
  columns: ['batch_id', 'type', 'target_id', 'role_id', 'email', 'token_hash', 'expires_at'],
  extra: (e) => ({ first_name: e.data.first_name ?? null, last_name: e.data.last_name ?? null, status: 'pending' }),
});

/** Websites added to a group at `at`; one already in it is kept with its first time. */
async function addGroupWebsites(trx: Knex.Transaction, groupId: string, websiteIds: string[], at: string): Promise<void> {
  if (!websiteIds.length) return;
  await trx('rm_team_group_websites')
    .insert(websiteIds.map((w) => ({ group_id: groupId, website_id: w, added_at: at })))
    .onConflict(['group_id', 'website_id'])
    .ignore();
}

export const teamProjection: Projection = {
  name: 'team',
  version: 1,
  tables: [
    'rm_team_roles',
    'rm_team_users',
    'rm_team_members',
    'rm_team_website_members',
    'rm_team_groups',
    'rm_team_group_websites',
    'rm_team_group_members',
    'rm_team_invites',
  ],
  // the decider's events, and the password a user sets (the read model keeps its hash; no decision reads it)
  handles: [...TEAM_EVENT_TYPES, 'UserPasswordSet'],
  migrate: migrateSql(`
      create table if not exists rm_team_roles (
        id uuid primary key,
        organization_id uuid not null,
        name text not null,
        slug text not null,
        permissions jsonb not null,
        created_at timestamptz not null
      );
      create index if not exists rm_team_roles_org on rm_team_roles (organization_id, created_at);
      create table if not exists rm_team_users (
        id uuid primary key,
        organization_id uuid not null,
        email text not null,
        first_name text,
        last_name text,
        email_verified boolean not null,
        password_hash text,
        created_at timestamptz not null
      );
      create index if not exists rm_team_users_org on rm_team_users (organization_id, lower(email));
      create table if not exists rm_team_members (
        organization_id uuid not null,
        user_id uuid not null,
        role_id uuid not null,
        created_at timestamptz not null,
        primary key (organization_id, user_id)
      );
      create table if not exists rm_team_website_members (
        organization_id uuid not null,
        website_id uuid not null,
        user_id uuid not null,
        role_id uuid not null,
        created_at timestamptz not null,
        primary key (website_id, user_id)
      );
      create index if not exists rm_team_website_members_user on rm_team_website_members (user_id);
      create table if not exists rm_team_groups (
        id uuid primary key,
        organization_id uuid not null,
        name text not null,
        external_id text,
        billing_enabled boolean not null,
        created_at timestamptz not null,
        updated_at timestamptz not null
      );
      create index if not exists rm_team_groups_org on rm_team_groups (organization_id, created_at);
      create table if not exists rm_team_group_websites (
        seq bigserial,
        group_id uuid not null,
        website_id uuid not null,
        added_at timestamptz not null,
        primary key (group_id, website_id)
      );
      create table if not exists rm_team_group_members (
        group_id uuid not null,
        user_id uuid not null,
        role_id uuid not null,
        created_at timestamptz not null,
        primary key (group_id, user_id)
      );
      create index if not exists rm_team_group_members_user on rm_team_group_members (user_id);
      create table if not exists rm_team_invites (
        id uuid primary key,
        organization_id uuid not null,
        batch_id uuid not null,
        type text not null,
        target_id uuid,
        role_id uuid not null,
        email text,
        first_name text,
        last_name text,
        token_hash text not null,
        expires_at timestamptz not null,
        status text not null,
        accepted_user_id uuid,
        created_at timestamptz not null,
        accepted_at timestamptz
      );
      create index if not exists rm_team_invites_token on rm_team_invites (token_hash);
      create index if not exists rm_team_invites_org on rm_team_invites (organization_id, created_at);`),
  async apply(trx, events) {
    // a bulk invite is 50 memberships in a row: written as one multi-row insert, not 50 round trips
    let members: Record<string, unknown>[] = [];
    const flush = async () => {
      if (!members.length) return;
      // one row per (website, user), the last one winning, as the events would one by one
      const rows = [...new Map(members.map((m) => [`${m.website_id} ${m.user_id}`, m])).values()];
      members = [];
      await setRoles(trx, 'rm_team_website_members', ['website_id', 'user_id'], rows);
    };
    for (const e of events) {
      const at = e.metadata.time;
      const org = e.metadata.organization_id;
      if (e.type === 'WebsiteMemberAdded') {
        members.push({ organization_id: org, website_id: e.data.website_id, user_id: e.data.user_id, role_id: e.data.role_id, created_at: at });
        continue;
      }
      await flush();
      switch (e.type) {
        case 'UserAdded':
          await userAdded(e, trx);
          await setOrganizationRole(trx, org, e.data.user_id, SYSTEM_ROLE_IDS[e.data.role], at);
          break;
        case 'UserCreated':
          await userCreated(e, trx);
          break;
        case 'UserPasswordSet':
          await trx('rm_team_users').where('id', e.data.user_id).update({ password_hash: e.data.password_hash });
          // a new password signs the user out of every MCP client and browser session that used the old one
          await signOutUser(trx, e.data.user_id, at);
          break;
        case 'RoleCreated':
          await roleCreated(e, trx);
          break;
        case 'RoleDeleted':
          await trx('rm_team_roles').where('id', e.data.role_id).delete();
          break;
        case 'OrganizationMemberAdded':
        case 'OrganizationMemberRoleChanged':
          await setOrganizationRole(trx, org, e.data.user_id, e.data.role_id, at);
          break;
        case 'OrganizationMemberRemoved':
          await trx('rm_team_members').where({ organization_id: org, user_id: e.data.user_id }).delete();
          await trx('rm_team_website_members').where({ organization_id: org, user_id: e.data.user_id }).delete();
          await trx('rm_team_group_members')
            .where('user_id', e.data.user_id)
            .whereIn('group_id', trx('rm_team_groups').select('id').where('organization_id', org))
            .delete();
          await signOutUser(trx, e.data.user_id, at);
          break;
        case 'WebsiteMemberRoleChanged':
          await setRoles(
            trx,
            'rm_team_website_members',
            ['website_id', 'user_id'],
            [{ organization_id: org, website_id: e.data.website_id, user_id: e.data.user_id, role_id: e.data.role_id, created_at: at }],
          );
          break;
        case 'WebsiteMemberRemoved':
          await trx('rm_team_website_members').where({ website_id: e.data.website_id, user_id: e.data.user_id }).delete();
          break;
        case 'GroupCreated':
          await groupCreated(e, trx);
          await addGroupWebsites(trx, e.data.group_id, e.data.website_ids, at);
          break;
        case 'GroupUpdated': {
          const d = e.data;
          const patch: Record<string, unknown> = { updated_at: at };
          if (d.name !== undefined) patch.name = d.name;
          if (d.external_id !== undefined) patch.external_id = d.external_id;
          if (d.billing_enabled !== undefined) patch.billing_enabled = d.billing_enabled;
          await trx('rm_team_groups').where('id', d.group_id).update(patch);
          if (d.removed_website_ids.length)
            await trx('rm_team_group_websites').where('group_id', d.group_id).whereIn('website_id', d.removed_website_ids).delete();
          await addGroupWebsites(trx, d.group_id, d.added_website_ids, at);
          break;
        }
        case 'GroupMemberAdded':
          await setRoles(
            trx,
            'rm_team_group_members',
            ['group_id', 'user_id'],
            [{ group_id: e.data.group_id, user_id: e.data.user_id, role_id: e.data.role_id, created_at: at }],
          );
          break;
        case 'GroupMemberRemoved':
          await trx('rm_team_group_members').where({ group_id: e.data.group_id, user_id: e.data.user_id }).delete();
          if (e.data.website_ids.length)
            await trx('rm_team_website_members').where('user_id', e.data.user_id).whereIn('website_id', e.data.website_ids).delete();
          break;
        case 'InviteCreated':
          await inviteCreated(e, trx);
          break;
        case 'InviteAccepted':
          await trx('rm_team_invites')
            .where('id', e.data.invite_id)
            .update({ status: 'accepted', accepted_user_id: e.data.user_id, accepted_at: at });
          break;
      }
    }
    await flush();
    // signed-in users' principals are cached per instance (src/auth/accounts.ts): a change in their organization drops them
    for (const org of new Set(events.map((e) => e.metadata.organization_id))) await trx.raw(`select pg_notify('aivis_team', ?)`, [org]);
  },
};
