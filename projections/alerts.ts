import type { Knex } from 'knex';
import { type EventHandlers, handlerProjection, migrateSql, type Projection } from '../src/eventstore/projection';

const json = (v: unknown) => JSON.stringify(v);

const handlers: EventHandlers<Knex.Transaction> = {
  async AlertRuleCreated(e, trx) {
    const d = e.data;
    await trx('rm_alert_rules')
      .insert({
        id: d.rule_id,
        organization_id: e.metadata.organization_id,
        website_id: d.website_id,
        name: d.name,
        kind: d.kind,
        params: json(d.params),
        webhook_ids: json(d.webhook_ids),
        emails: json(d.emails),
        enabled: true,
        created_at: e.metadata.time,
        updated_at: e.metadata.time,
      })
      .onConflict('id')
      .ignore();
  },
  async AlertRuleUpdated(e, trx) {
    const d = e.data;
    const row: Record<string, unknown> = { updated_at: e.metadata.time };
    if (d.name !== undefined) row.name = d.name;
    if (d.params !== undefined) row.params = json(d.params);
    if (d.webhook_ids !== undefined) row.webhook_ids = json(d.webhook_ids);
    if (d.emails !== undefined) row.emails = json(d.emails);
    if (d.enabled !== undefined) row.enabled = d.enabled;
    await trx('rm_alert_rules').where('id', d.rule_id).update(row);
  },
  async AlertRuleDeleted(e, trx) {
    await trx('rm_alert_rules').where('id', e.data.rule_id).delete();
  },
  async AlertFired(e, trx) {
    const a = e.data.alert;
    await trx('rm_alerts')
      .insert({
        id: a.id,
        organization_id: e.metadata.organization_id,
        rule_id: a.rule_id,
        website_id: a.website_id,
        kind: a.kind,
        fired_at: a.fired_at,
        summary: a.summary,
        details: json(a.details),
      })
      .onConflict('id')
      .ignore();
  },
  async AlertAcknowledged(e, trx) {
    await trx('rm_alerts').where('id', e.data.alert_id).whereNull('acknowledged_at').update({ acknowledged_at: e.metadata.time });
  },
};

/** Alert rules and the alerts they fired (alerts outlive a deleted rule). */
export const alertsProjection: Projection = handlerProjection(
  {
    name: 'alerts',
    version: 1,
    tables: ['rm_alert_rules', 'rm_alerts'],
    migrate: migrateSql(`
      create table if not exists rm_alert_rules (
        id uuid primary key,
        organization_id uuid not null,
        website_id uuid not null,
        name text not null,
        kind text not null,
        params jsonb not null,
        webhook_ids jsonb not null,
        emails jsonb not null,
        enabled boolean not null,
        created_at timestamptz not null,
        updated_at timestamptz not null
      );
      create index if not exists rm_alert_rules_site on rm_alert_rules (website_id, created_at, id);
      create table if not exists rm_alerts (
        id uuid primary key,
        organization_id uuid not null,
        rule_id uuid not null,
        website_id uuid not null,
        kind text not null,
        fired_at timestamptz not null,
        summary text not null,
        details jsonb not null,
        acknowledged_at timestamptz
      );
      create index if not exists rm_alerts_site on rm_alerts (website_id, fired_at desc, id desc);`),
  },
  handlers,
);
