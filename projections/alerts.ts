import type { Knex } from 'knex';
import { type EventHandlers, handlerProjection, migrateSql, type Projection } from '../src/eventstore/projection';
import { CREATED_UPDATED, orgRow, updateRow } from './rows';

const ruleCreated = orgRow<'AlertRuleCreated'>({
  table: 'rm_alert_rules',
  id: 'rule_id',
  columns: ['website_id', 'name', 'kind'],
  json: ['params', 'webhook_ids', 'emails'],
  extra: () => ({ enabled: true }),
  stamps: CREATED_UPDATED,
});
const ruleUpdated = updateRow<'AlertRuleUpdated'>({ table: 'rm_alert_rules', id: 'rule_id', json: ['params', 'webhook_ids', 'emails'] });

const handlers: EventHandlers<Knex.Transaction> = {
  // an erased (deleted) rule's addresses read null on a rebuild: nothing of the rule is kept
  async AlertRuleCreated(e, trx) {
    if (e.data.emails !== null) await ruleCreated(e, trx);
  },
  async AlertRuleUpdated(e, trx) {
    const { emails, ...rest } = e.data;
    await ruleUpdated(emails === null ? { ...e, data: rest } : e, trx);
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
        details: JSON.stringify(a.details),
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
