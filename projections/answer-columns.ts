/**
 * Column lists (DDL fragments) that several read models' tables share, for the answers: each is written once here so
 * the tables that keep the same facts of an answer declare them alike. Indented as the tables' columns are.
 */

/**
 * What an answer was asked for, as a run's unit of work (ResponseRequested) and the answer recorded for it
 * (ResponseRecorded) carry it: the website, prompt, model, location, persona and schedule.
 */
export const ASKED_COLUMNS = `website_id uuid not null,
        prompt_id uuid not null,
        model text not null,
        location_id uuid,
        persona_id uuid,
        schedule_id uuid`;

/**
 * The answer's columns a selection filters by (queries/filters.ts; queries/content/list.ts answersWhere), copied onto
 * each per-answer row (its product cards, the content hub's answers and citations) so the shared filters read that
 * table alone.
 */
export const ANSWER_COLUMNS = `run_at timestamptz not null,
        prompt_id uuid not null,
        model text not null,
        location_id uuid,
        schedule_id uuid`;
