import type { Knex } from 'knex';
import { scheduleValue } from '../../src/domain/filters';
import type { Run, RunDetail, RunPage, RunStatus } from './views';
import { onePageAndMore, type PageRequest, pageInfo, pageRows } from '../paging';
import { iso, isoOrNull } from '../timestamps';

export type { RunStatus } from './views';

interface RunRow {
  id: string;
  website_id: string;
  schedule_id: string | null;
  trigger: string;
  day: string;
  models: string[];
  total: number;
  recorded: number;
  failed: number;
  started_at: Date;
  finished_at: Date | null;
}

export function runStatus(r: Pick<RunRow, 'total' | 'recorded' | 'failed'>): RunStatus {
  if (r.recorded + r.failed < r.total) return 'running';
  if (r.failed === 0) return 'completed';
  return r.recorded === 0 ? 'failed' : 'completed_with_failures';
}

const view = (r: RunRow): Run => ({
  run_id: r.id,
  website_id: r.website_id,
  schedule: scheduleValue(r.schedule_id),
  trigger: r.trigger,
  day: String(r.day).slice(0, 10),
  models: r.models,
  status: runStatus(r),
  total: r.total,
  recorded: r.recorded,
  failed: r.failed,
  pending: r.total - r.recorded - r.failed,
  started_at: iso(r.started_at),
  finished_at: isoOrNull(r.finished_at),
});
export type RunView = Run;

const COLUMNS = ['id', 'website_id', 'schedule_id', 'trigger', 'day', 'models', 'total', 'recorded', 'failed', 'started_at', 'finished_at'];

/** A run of the website with its failed units (why each failed); undefined when the website has no such run. */
export async function getRun(db: Knex, websiteId: string, runId: string): Promise<RunDetail | undefined> {
  const r: RunRow | undefined = await db('rm_runs').where({ website_id: websiteId, id: runId }).first(COLUMNS);
  if (!r) return undefined;
  const failures = await db('rm_run_units')
    .where({ run_id: runId, status: 'failed' })
    .orderBy('updated_at')
    .limit(100)
    .select('request_id', 'prompt_id', 'model', 'location_id', 'error_kind', 'error', 'attempts');
  return { ...view(r), failures };
}

/** The website's runs, newest first. */
export async function listRuns(db: Knex, websiteId: string, page: PageRequest): Promise<RunPage> {
  const rows: RunRow[] = await onePageAndMore(db('rm_runs').where('website_id', websiteId).orderBy('seq', 'desc'), page).select(COLUMNS);
  return { data: pageRows(rows, page).map(view), ...pageInfo(rows, page) };
}

/** A run of the website as the listing shows it (without its failures), if the read model has it. */
export async function runView(db: Knex, websiteId: string, runId: string): Promise<RunView | undefined> {
  const r: RunRow | undefined = await db('rm_runs').where({ website_id: websiteId, id: runId }).first(COLUMNS);
  return r ? view(r) : undefined;
}

/** Whether every unit of the run has an outcome (false while the read model does not have the run). */
export async function runFinished(db: Knex, runId: string): Promise<boolean> {
  const r = await db('rm_runs').where('id', runId).whereNotNull('finished_at').first('id');
  return r !== undefined;
}

/** A run holding its schedule's slot. */
export interface HeldSlot {
  run_id: string;
  organization_id: string;
  website_id: string;
  schedule_id: string | null;
}

const HELD = ['s.run_id', 's.organization_id', 's.website_id', 's.schedule_id'];

/** The runs holding a slot that have an outcome for every unit (done), and the others whose hold ran out by `now` (late). */
export async function heldSlotsToEnd(db: Knex, now: Date): Promise<{ done: HeldSlot[]; late: HeldSlot[] }> {
  // one read of the held slots for both (each pass of the run-ends worker, a few a second during runs)
  const rows: (HeldSlot & { done: boolean })[] = await db('rm_run_slots as s')
    .leftJoin('rm_runs as r', 'r.id', 's.run_id')
    .whereNull('s.ended_at')
    .andWhere((q) => q.whereNotNull('r.finished_at').orWhere('s.expires_at', '<=', now))
    .select([...HELD, db.raw('r.finished_at is not null as done')]);
  const held = (r: HeldSlot & { done: boolean }): HeldSlot => ({
    run_id: r.run_id,
    organization_id: r.organization_id,
    website_id: r.website_id,
    schedule_id: r.schedule_id,
  });
  return { done: rows.filter((r) => r.done).map(held), late: rows.filter((r) => !r.done).map(held) };
}

/** The ids among `ids` of runs the read model has, read a thousand at a time. */
export async function knownRunIds(db: Knex, ids: readonly string[]): Promise<Set<string>> {
  const known = new Set<string>();
  for (let i = 0; i < ids.length; i += 1000) {
    for (const r of await db('rm_runs')
      .whereIn('id', ids.slice(i, i + 1000))
      .select('id'))
      known.add(r.id);
  }
  return known;
}

/** A unit's status (pending until its outcome is recorded); undefined while the read model does not have it. */
export async function unitStatus(db: Knex, requestId: string): Promise<string | undefined> {
  const unit = await db('rm_run_units').where('request_id', requestId).first('status');
  return unit?.status;
}
