import type { Knex } from 'knex';
import { endRun } from '../../commands/responses/run-slot';
import { isDomainError } from '../domain/errors';
import { SYSTEM_ACTOR } from '../domain/events';
import { comparePositions, type EventStore, type Position } from '../eventstore/port';
import type { Logger } from '../logger';
import { problemLog } from '../app/problem';
import { heldSlotsToEnd } from '../../queries/responses/runs';

export interface RunEndsDeps {
  store: EventStore;
  db: Knex;
  logger: Logger;
  now?: () => Date;
  /** waits (bounded) until the runs read model has passed a position */
  waitForRuns?: (position: Position) => Promise<unknown>;
}

/**
 * One pass: records the end of every run that holds its schedule's slot and has an outcome for every unit (as the
 * runs read model says), and of every run whose hold has run out. The end is decided on the slot's stream under an
 * id derived from the run, so instances passing at once record each end once. Returns the runs this pass ended.
 */
export async function recordRunEnds(deps: RunEndsDeps): Promise<{ finished: string[]; expired: string[] }> {
  const now = deps.now?.() ?? new Date();
  const { done, late } = await heldSlotsToEnd(deps.db, now);
  const ended = { finished: [] as string[], expired: [] as string[] };
  for (const [reason, held] of [
    ['finished', done],
    ['expired', late],
  ] as const) {
    for (const h of held) {
      const ctx = {
        store: deps.store,
        organizationId: h.organization_id,
        websiteId: h.website_id,
        actor: SYSTEM_ACTOR,
        correlationId: h.run_id,
        now: deps.now,
      };
      const r = await endRun(ctx, { website_id: h.website_id, schedule_id: h.schedule_id }, h.run_id, reason);
      if (!isDomainError(r) && r.result) ended[reason].push(h.run_id);
    }
  }
  if (ended.expired.length) deps.logger.warn({ runs: ended.expired }, 'runs whose end was never recorded expired, freeing their schedules');
  return ended;
}

/** Pokes closer together than this make one pass: a run's outcomes come in bursts, and its end can wait that long. */
const COALESCE_MS = 250;

/**
 * Records run ends soon after a unit's outcome (poke), and every `everyMs` whatever happens (a poke lost with an
 * instance, an expired hold).
 */
export function startRunEnds(deps: RunEndsDeps & { everyMs?: number }): { poke(position: Position | null): void; stop(): Promise<void> } {
  const everyMs = deps.everyMs ?? 30_000;
  let stopped = false;
  let target: Position | null = null;
  let poked = false;
  let running: Promise<void> | null = null;
  let soon: NodeJS.Timeout | null = null;
  const pass = async () => {
    const wait = target;
    target = null;
    poked = false;
    if (wait && deps.waitForRuns) await deps.waitForRuns(wait);
    await recordRunEnds(deps);
  };
  const run = () => {
    soon = null;
    if (stopped || running) return;
    running = pass()
      .catch((err) => deps.logger.error(problemLog(err), 'recording run ends failed'))
      .finally(() => {
        running = null;
        if (poked && !stopped) soon = setTimeout(run, COALESCE_MS);
      });
  };
  const timer = setInterval(() => {
    poked = true;
    if (!soon) run();
  }, everyMs);
  return {
    poke(position) {
      if (stopped) return;
      if (position && (!target || comparePositions(position, target) > 0)) target = position;
      poked = true;
      if (!soon && !running) soon = setTimeout(run, COALESCE_MS);
    },
    async stop() {
      stopped = true;
      clearInterval(timer);
      if (soon) clearTimeout(soon);
      await running;
    },
  };
}
