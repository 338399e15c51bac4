import type { Knex } from 'knex';
import { type EventHandlers, handlerProjection, migrateSql, type Projection } from '../src/eventstore/projection';

const handlers: EventHandlers<Knex.Transaction> = {
  async ReportCreated(e, trx) {
    const d = e.data;
    await trx('rm_reports')
      .insert({
        id: d.report_id,
        organization_id: e.metadata.organization_id,
        website_id: d.website_id,
        title: d.title,
        start_date: d.start_date,
        end_date: d.end_date,
        token: d.token,
        snapshot: JSON.stringify(d.snapshot),
        created_at: e.metadata.time,
      })
      .onConflict('id')
      .ignore();
  },
  async ReportDeleted(e, trx) {
    await trx('rm_reports').where('id', e.data.report_id).delete();
  },
  async ReportScheduleCreated(e, trx) {
    const d = e.data;
    await trx('rm_report_schedules')
      .insert({
        id: d.schedule_id,
        organization_id: e.metadata.organization_id,
        website_id: d.website_id,
        frequency: d.frequency,
        recipients: JSON.stringify(d.recipients),
        created_at: e.metadata.time,
        updated_at: e.metadata.time,
      })
      .onConflict('id')
      .ignore();
  },
  async ReportScheduleUpdated(e, trx) {
    const { frequency, recipients } = e.data;
    await trx('rm_report_schedules')
      .where('id', e.data.schedule_id)
      .update({
        ...(frequency !== undefined && { frequency }),
        ...(recipients !== undefined && { recipients: JSON.stringify(recipients) }),
        updated_at: e.metadata.time,
      });
  },
  async ReportScheduleDeleted(e, trx) {
    await trx('rm_report_schedules').where('id', e.data.schedule_id).delete();
  },
  async ReportSchedulePeriodSent(e, trx) {
    await trx('rm_report_schedules')
      .where('id', e.data.schedule_id)
      .update({ last_period: e.data.period, last_report_id: e.data.report_id, last_sent_at: e.metadata.time });
  },
};

/** Website reports with their snapshots: the listing, and the public page by its token. */
export const reportsProjection: Projection = handlerProjection(
  {
    name: 'reports',
    version: 2,
    tables: ['rm_reports', 'rm_report_schedules'],
    migrate: migrateSql(`
      create table if not exists rm_reports (
        id uuid primary key,
        organization_id uuid not null,
        website_id uuid not null,
        title text not null,
        start_date text not null,
        end_date text not null,
        token text not null unique,
        snapshot jsonb not null,
        created_at timestamptz not null
      );
      create index if not exists rm_reports_website on rm_reports (website_id, created_at desc, id);
      create table if not exists rm_report_schedules (
        id uuid primary key,
        organization_id uuid not null,
        website_id uuid not null,
        frequency text not null,
        recipients jsonb not null,
        created_at timestamptz not null,
        updated_at timestamptz not null,
        last_period text,
        last_report_id uuid,
        last_sent_at timestamptz
      );
      create index if not exists rm_report_schedules_website on rm_report_schedules (website_id, created_at, id);`),
  },
  handlers,
);
