import type { Knex } from 'knex';
import type { AnswerAnalysis } from '../../src/analysis/answer';
import { ANSWER_COLUMNS } from '../answer-columns';
import type { Recorded } from './handlers';
import type { TrackedEntity } from './writers';

/** The content hub's two tables of the answers read model: rm_content_answers and rm_content_cites. */
export const CONTENT_TABLES_SQL = `
      create table if not exists rm_content_answers (
        response_id uuid primary key,
        website_id uuid not null,
        ${ANSWER_COLUMNS},
        mentioned boolean not null
      );
      -- covering: a count of a date range is an index-only scan
      create index if not exists rm_content_answers_site_time on rm_content_answers (website_id, run_at) include (prompt_id, model, location_id, schedule_id, mentioned);
      create table if not exists rm_content_cites (
        response_id uuid not null,
        website_id uuid not null,
        normalized_url text not null,
        ${ANSWER_COLUMNS},
        mentioned boolean not null,
        primary key (response_id, normalized_url)
      );
      create index if not exists rm_content_cites_url on rm_content_cites (website_id, normalized_url, run_at) include (prompt_id, model, location_id, schedule_id, mentioned);`;

/** Whether an analysis mentions the website's brand (its is_self entity): the answers listing's `mentioned`. */
export const brandMentioned = (a: AnswerAnalysis, brandId: string | undefined) =>
  brandId !== undefined && a.mentions.some((m) => m.entity_id === brandId);
export const brandOf = (entities: readonly TrackedEntity[] | undefined) => entities?.find((e) => e.is_self)?.id;

/**
 * The content hub's rows of new answers (queries/content): per answer what its figures select on and whether it
 * mentions the brand (rm_content_answers), and per cited normalized URL (engine citations and URLs in the text, as
 * analysis normalizes them) one row (rm_content_cites): the citation join by URL. `mentioned` is the answers
 * listing's brand mention (the same analysis), kept in line by every re-derivation.
 */
export async function insertContentRows(
  trx: Knex.Transaction,
  fresh: Recorded[],
  analyses: Map<string, AnswerAnalysis>,
  tracked: Map<string, TrackedEntity[]>,
): Promise<void> {
  const answers: unknown[][] = [[], [], [], [], [], [], [], []];
  const cites: unknown[][] = [[], [], [], [], [], [], [], [], []];
  for (const e of fresh) {
    const d = e.data;
    const a = analyses.get(d.response_id)!;
    const mentioned = brandMentioned(a, brandOf(tracked.get(d.website_id)));
    const row = [d.response_id, d.website_id, d.run_at, d.prompt_id, d.model, d.location_id, d.schedule_id, mentioned];
    for (let i = 0; i < row.length; i++) answers[i].push(row[i]);
    for (const s of a.sources) {
      const c = [d.response_id, d.website_id, s.normalized_url, d.run_at, d.prompt_id, d.model, d.location_id, d.schedule_id, mentioned];
      for (let i = 0; i < c.length; i++) cites[i].push(c[i]);
    }
  }
  await trx.raw(
    `insert into rm_content_answers (response_id, website_id, run_at, prompt_id, model, location_id, schedule_id, mentioned)
     select * from unnest(?::uuid[], ?::uuid[], ?::timestamptz[], ?::uuid[], ?::text[], ?::uuid[], ?::uuid[], ?::boolean[])
     on conflict (response_id) do nothing`,
    answers as unknown as readonly Knex.RawBinding[],
  );
  if (cites[0].length) {
    await trx.raw(
      `insert into rm_content_cites (response_id, website_id, normalized_url, run_at, prompt_id, model, location_id, schedule_id, mentioned)
       select * from unnest(?::uuid[], ?::uuid[], ?::text[], ?::timestamptz[], ?::uuid[], ?::text[], ?::uuid[], ?::uuid[], ?::boolean[])
       on conflict (response_id, normalized_url) do nothing`,
      cites as unknown as readonly Knex.RawBinding[],
    );
  }
}
