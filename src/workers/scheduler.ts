import type { Knex } from 'knex';
import { RUN_IN_PROGRESS } from '../../commands/responses/run-slot';
import { startRun } from '../../commands/responses/start-run';
import { knownRunIds, runFinished } from '../../queries/responses/runs';
import { isDomainError } from '../domain/errors';
import { SYSTEM_ACTOR } from '../domain/events';
import { deterministicId } from '../domain/ids';
import { utcDay } from '../domain/dates';
import type { EventStore } from '../eventstore/port';
import type { Logger } from '../logger';
import { every } from './every';
import { activeSchedules, schedulableWebsites } from '../../queries/catalog/schedules';

const DAY_MS = 86_400_000;
const dayNumber = (day: string) => Math.floor(Date.parse(`${day}T00:00:00Z`) / DAY_MS);
const dayOf = (n: number) => utcDay(new Date(n * DAY_MS));

export interface ScheduleWindow {
  frequency: 'daily' | 'weekly';
  starts_on: string | null;
  ends_on: string | null;
  /** the day a weekly schedule without starts_on counts its weeks from */
  anchor: string;
}

/**
 * The slot a schedule fires for on `today` (YYYY-MM-DD, UTC), or null when it does not fire: daily, every day of
 * its window; weekly, once in each week counted from starts_on (or from the day it was created), the week's first
 * day being its slot, so an instance that was down on that day still fires it later that week. The window is
 * inclusive on both sides.
 */
export function dueSlot(s: ScheduleWindow, today: string): string | null {
  if (s.starts_on !== null && today < s.starts_on) return null;
  if (s.ends_on !== null && today > s.ends_on) return null;
  if (s.frequency === 'daily') return today;
  const anchor = dayNumber(s.starts_on ?? s.anchor);
  const t = dayNumber(today);
  if (t < anchor) return null;
  return dayOf(anchor + Math.floor((t - anchor) / 7) * 7);
}

/** The run of one schedule's slot: the same id on every instance, so the event store lets exactly one start it. */
export const scheduledRunId = (websiteId: string, scheduleKey: string, slot: string) =>
  deterministicId('scheduled-run', websiteId, scheduleKey, slot);

export interface SchedulerDeps {
  store: EventStore;
  db: Knex;
  logger: Logger;
  now?: () => Date;
}

interface Due {
  organization_id: string;
  website_id: string;
  schedule_id: string | null;
  slot: string;
  run_id: string;
}

/**
 * One pass: every active website with active prompts, its `default` schedule (daily, unbounded) and each of its
 * active, unarchived custom schedules; starts the runs due today that no instance has started, through the same
 * slot as a manual start (a slot whose schedule has a run in progress waits for a later pass). Returns the runs
 * this pass started.
 */
export async function schedulePass(deps: SchedulerDeps): Promise<string[]> {
  const now = deps.now?.() ?? new Date();
  const today = utcDay(now);
  const sites = await schedulableWebsites(deps.db);
  if (!sites.length) return [];
  const schedules = await activeSchedules(
    deps.db,
    sites.map((s) => s.id),
  );
  const due: Due[] = [];
  const orgOf = new Map(sites.map((s) => [s.id, s.organization_id]));
  for (const s of sites) {
    due.push({
      organization_id: s.organization_id,
      website_id: s.id,
      schedule_id: null,
      slot: today,
      run_id: scheduledRunId(s.id, 'default', today),
    });
  }
  for (const x of schedules) {
    const slot = dueSlot({ frequency: x.frequency, starts_on: x.starts_on, ends_on: x.ends_on, anchor: utcDay(new Date(x.created_at)) }, today);
    if (slot)
      due.push({
        organization_id: orgOf.get(x.website_id)!,
        website_id: x.website_id,
        schedule_id: x.id,
        slot,
        run_id: scheduledRunId(x.website_id, x.id, slot),
      });
  }
  const known = await knownRunIds(
    deps.db,
    due.map((d) => d.run_id),
  );
  const started: string[] = [];
  const finished = (runId: string) => runFinished(deps.db, runId);
  for (const d of due) {
    if (known.has(d.run_id)) continue;
    const ctx = {
      store: deps.store,
      organizationId: d.organization_id,
      websiteId: d.website_id,
      actor: SYSTEM_ACTOR,
      now: deps.now,
      runFinished: finished,
    };
    const r = await startRun(ctx, { run_id: d.run_id, website_id: d.website_id, schedule_id: d.schedule_id, trigger: 'scheduled', day: today });
    if (isDomainError(r)) {
      // a run of the schedule still in progress: a later pass starts this slot's run once it has ended
      const busy = r.message === RUN_IN_PROGRESS;
      deps.logger[busy ? 'debug' : 'warn'](
        { website_id: d.website_id, schedule_id: d.schedule_id, slot: d.slot, error: r.message },
        'scheduled run not started',
      );
      continue;
    }
    if (r.result.started) {
      started.push(d.run_id);
      deps.logger.info(
        { website_id: d.website_id, schedule_id: d.schedule_id ?? 'default', slot: d.slot, run_id: d.run_id, units: r.result.units },
        'scheduled run started',
      );
    }
  }
  return started;
}

/** Runs schedulePass now and every tickMs until stopped. */
export function startScheduler(deps: SchedulerDeps & { tickMs?: number }): { stop(): Promise<void> } {
  const tickMs = deps.tickMs ?? 60_000;
  return every({ everyMs: tickMs, firstMs: 0, logger: deps.logger, failure: 'scheduler pass failed' }, () => schedulePass(deps));
}
