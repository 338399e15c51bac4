import type { Knex } from 'knex';
import { type EventHandlers, handlerProjection, migrateSql, type Projection } from '../src/eventstore/projection';
import { CREATED_UPDATED, orgRow, updateRow } from './rows';

const handlers: EventHandlers<Knex.Transaction> = {
  ReportCreated: orgRow({
    table: 'rm_reports',
    id: 'report_id',
    columns: ['website_id', 'title', 'start_date', 'end_date', 'token'],
    json: ['snapshot'],
  }),
  async ReportDeleted(e, trx) {
    await trx('rm_reports').where('id', e.data.report_id).delete();
  },
  ReportScheduleCreated: orgRow({
    table: 'rm_report_schedules',
    id: 'schedule_id',
    columns: ['website_id', 'frequency'],
    json: ['recipients'],
    stamps: CREATED_UPDATED,
  }),
  ReportScheduleUpdated: updateRow({ table: 'rm_report_schedules', id: 'schedule_id', json: ['recipients'] }),
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
