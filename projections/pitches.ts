import type { Knex } from 'knex';
import { type EventHandlers, handlerProjection, type Projection, migrateSql } from '../src/eventstore/projection';
import { CREATED_UPDATED, insertRow } from './rows';

const json = (v: unknown) => JSON.stringify(v);

const handlers: EventHandlers<Knex.Transaction> = {
  PitchRequested: insertRow({
    table: 'rm_pitches',
    id: 'job_id',
    columns: ['website_url', 'company_url', 'domain', 'country', 'language', 'report_token'],
    extra: (e) => ({ organization_id: e.metadata.organization_id, models: json(e.data.models), status: 'processing' }),
    stamps: CREATED_UPDATED,
    idempotent: true,
  }),
  async PitchSiteResearched(e, trx) {
    await trx('rm_pitches')
      .where('id', e.data.job_id)
      .update({
        company_name: e.data.company_name,
        company_description: e.data.company_description,
        research_note: e.data.research_note ?? null,
        updated_at: e.metadata.time,
      });
  },
  async PitchPlanWritten(e, trx) {
    await trx('rm_pitches')
      .where('id', e.data.job_id)
      .update({
        competitors: json(e.data.competitors.map((c) => ({ ...c, mentions: 0, sentiment: 0 }))),
        prompts: json(e.data.prompts),
        updated_at: e.metadata.time,
      });
  },
  async PitchAnswersRecorded(e, trx) {
    await trx.raw(
      `update rm_pitches set answered_models = answered_models || ?::jsonb, updated_at = ?
        where id = ? and not answered_models @> ?::jsonb`,
      [json([e.data.model]), e.metadata.time, e.data.job_id, json([e.data.model])],
    );
  },
  async PitchReportCompiled(e, trx) {
    const d = e.data;
    await trx('rm_pitches')
      .where('id', d.job_id)
      .update({
        competitors: json(d.competitors),
        attributes: json(d.attributes),
        sources: json(d.sources),
        metrics: json(d.metrics),
        model_stats: json(d.models),
        sentiment: json(d.sentiment),
        updated_at: e.metadata.time,
      });
  },
  async JobSucceeded(e, trx) {
    await trx('rm_pitches').where('id', e.data.job_id).update({ status: 'completed', finished_at: e.metadata.time, updated_at: e.metadata.time });
  },
  async JobFailed(e, trx) {
    await trx('rm_pitches')
      .where('id', e.data.job_id)
      .update({ status: 'failed', error_kind: e.data.error_kind, error: e.data.message, finished_at: e.metadata.time, updated_at: e.metadata.time });
  },
};

/** Pitch reports: the report as the GET and the public page show it, filled in as its job goes. */
export const pitchesProjection: Projection = handlerProjection(
  {
    name: 'pitches',
    version: 1,
    tables: ['rm_pitches'],
    streamPrefixes: { JobSucceeded: 'pitch-', JobFailed: 'pitch-' },
    migrate: migrateSql(`
        create table if not exists rm_pitches (
          id uuid primary key,
          organization_id uuid not null,
          website_url text not null,
          company_url text not null,
          domain text not null,
          company_name text,
          company_description text,
          research_note text,
          country text not null,
          language text not null,
          models jsonb not null,
          report_token text not null,
          status text not null,
          competitors jsonb not null default '[]',
          prompts jsonb not null default '[]',
          attributes jsonb not null default '[]',
          sources jsonb not null default '[]',
          metrics jsonb,
          model_stats jsonb,
          sentiment jsonb,
          answered_models jsonb not null default '[]',
          error_kind text,
          error text,
          deleted_at timestamptz,
          created_at timestamptz not null,
          updated_at timestamptz not null,
          finished_at timestamptz
        );
        alter table rm_pitches add column if not exists research_note text;
        create unique index if not exists rm_pitches_token on rm_pitches (report_token);
        create index if not exists rm_pitches_org on rm_pitches (organization_id, created_at desc, id);`),
  },
  handlers,
  (e) => !e.type.startsWith('Job') || e.streamId.startsWith('pitch-'),
);
