import type { Knex } from 'knex';
import { signOutUser } from '../src/auth/grants';
import { TEAM_EVENT_TYPES } from '../src/domain/events';
import { SYSTEM_ROLE_IDS } from '../src/domain/principal';
import { type Projection, migrateSql } from '../src/eventstore/projection';

/**
 * The organization's people and their access (commands/team): custom roles, users, organization members, explicit
 * website memberships, groups with their websites and members, invites. What the team queries and a signed-in user's
 * principal read.
 */
/** A new row (its id first); a row already there (the event delivered again) is kept as it is. */
const newRow = (trx: Knex.Transaction, table: string, row: Record<string, unknown>) => trx(table).insert(row).onConflict('id').ignore();

/** Memberships with a role: a membership already there (same `key` columns) takes the new role_id, the rest is kept. */
const setRoles = (trx: Knex.Transaction, table: string, key: string[], rows: Record<string, unknown>[]) =>
  trx(table).insert(rows).onConflict(key).merge(['role_id']);

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
          await newRow(trx, 'rm_team_users', { id: e.data.user_id, organization_id: org, email: e.data.email, email_verified: true, created_at: at });
          await setRoles(
            trx,
            'rm_team_members',
            ['organization_id', 'user_id'],
            [{ organization_id: org, user_id: e.data.user_id, role_id: SYSTEM_ROLE_IDS[e.data.role], created_at: at }],
          );
          break;
        case 'UserCreated':
          await newRow(trx, 'rm_team_users', {
            id: e.data.user_id,
            organization_id: org,
            email: e.data.email,
            first_name: e.data.first_name,
            last_name: e.data.last_name,
            email_verified: e.data.email_verified,
            created_at: at,
          });
          break;
        case 'UserPasswordSet':
          await trx('rm_team_users').where('id', e.data.user_id).update({ password_hash: e.data.password_hash });
          // a new password signs the user out of every MCP client and browser session that used the old one
          await signOutUser(trx, e.data.user_id, at);
          break;
        case 'RoleCreated':
          await newRow(trx, 'rm_team_roles', {
            id: e.data.role_id,
            organization_id: org,
            name: e.data.name,
            slug: e.data.slug,
            permissions: JSON.stringify(e.data.permissions),
            created_at: at,
          });
          break;
        case 'RoleDeleted':
          await trx('rm_team_roles').where('id', e.data.role_id).delete();
          break;
        case 'OrganizationMemberAdded':
        case 'OrganizationMemberRoleChanged':
          await setRoles(
            trx,
            'rm_team_members',
            ['organization_id', 'user_id'],
            [{ organization_id: org, user_id: e.data.user_id, role_id: e.data.role_id, created_at: at }],
          );
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
          await newRow(trx, 'rm_team_groups', {
            id: e.data.group_id,
            organization_id: org,
            name: e.data.name,
            external_id: e.data.external_id,
            billing_enabled: e.data.billing_enabled,
            created_at: at,
            updated_at: at,
          });
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
          await newRow(trx, 'rm_team_invites', {
            id: e.data.invite_id,
            organization_id: org,
            batch_id: e.data.batch_id,
            type: e.data.type,
            target_id: e.data.target_id,
            role_id: e.data.role_id,
            email: e.data.email,
            first_name: e.data.first_name ?? null,
            last_name: e.data.last_name ?? null,
            token_hash: e.data.token_hash,
            expires_at: e.data.expires_at,
            status: 'pending',
            created_at: at,
          });
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
