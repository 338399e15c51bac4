import type { Knex } from 'knex';
import { MODEL_IDS } from '../../src/domain/models';

import type { PromptSchedule } from './views';

export type { PromptSchedule } from './views';

/** The `default` selection: every run without a custom schedule, all history before schedules existed. */
export const DEFAULT_SCHEDULE: PromptSchedule = Object.freeze({
  id: 'default',
  name: 'Default',
  models: [...MODEL_IDS],
  starts_on: null,
  ends_on: null,
  frequency: 'daily',
  is_active: true,
  samples_per_prompt: 1,
  archived: false,
}) as PromptSchedule;

interface Row {
  id: string;
  name: string;
  models: string[];
  starts_on: string | null;
  ends_on: string | null;
  frequency: 'daily' | 'weekly';
  is_active: boolean;
  samples_per_prompt: number;
  archived_at: Date | null;
}

const view = (r: Row): PromptSchedule => ({
  id: r.id,
  name: r.name,
  models: r.models,
  starts_on: r.starts_on,
  ends_on: r.ends_on,
  frequency: r.frequency,
  is_active: r.is_active && !r.archived_at,
  samples_per_prompt: r.samples_per_prompt,
  archived: r.archived_at !== null,
});

const columns = ['id', 'name', 'models', 'starts_on', 'ends_on', 'frequency', 'is_active', 'samples_per_prompt', 'archived_at'] as const;

/** `default` first, then the custom schedules in creation order, archived ones included (they stay queryable). */
export async function listSchedules(db: Knex, websiteId: string): Promise<PromptSchedule[]> {
  const rows: Row[] = await db('rm_prompt_schedules').where('website_id', websiteId).orderBy('seq').select(columns);
  return [{ ...DEFAULT_SCHEDULE, models: [...DEFAULT_SCHEDULE.models] }, ...rows.map(view)];
}

export async function getSchedule(db: Knex, websiteId: string, id: string): Promise<PromptSchedule | undefined> {
  const r: Row | undefined = await db('rm_prompt_schedules').where({ website_id: websiteId, id }).first(columns);
  return r ? view(r) : undefined;
}

/** The active websites with at least one active prompt: what the scheduler starts runs for. */
export async function schedulableWebsites(db: Knex): Promise<{ id: string; organization_id: string }[]> {
  return db('rm_websites as w')
    .where('w.status', 'active')
    .whereExists(db('rm_prompts as p').whereRaw('p.website_id = w.id').andWhere('p.status', 'active').whereNull('p.soft_deleted_at'))
    .select('w.id', 'w.organization_id');
}

/** A custom schedule as the scheduler reads it. */
export interface ActiveSchedule {
  id: string;
  website_id: string;
  frequency: 'daily' | 'weekly';
  starts_on: string | null;
  ends_on: string | null;
  created_at: Date;
}

/** The websites' active, unarchived custom schedules. */
export async function activeSchedules(db: Knex, websiteIds: readonly string[]): Promise<ActiveSchedule[]> {
  return db('rm_prompt_schedules')
    .whereIn('website_id', [...websiteIds])
    .whereNull('archived_at')
    .andWhere('is_active', true)
    .select('id', 'website_id', 'frequency', 'starts_on', 'ends_on', 'created_at');
}
