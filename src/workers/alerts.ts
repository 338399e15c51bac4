import type { Knex } from 'knex';
import { type AiAccessDeps, checkAiAccess } from '../analysis/ai-access';
import { type EvaluateDeps, evaluateWebsite, migrateAlertAccess } from '../app/alerts';
import type { Bus, BusMessage } from '../bus/port';
import { type EventStore, type Position, positionFromString } from '../eventstore/port';
import type { Logger } from '../logger';
import { every } from './every';

/** What ends a run or brings answers in: the rules of its website are evaluated then. */
export const ALERT_BUS_TYPES = ['RunEnded', 'ResponsesImported'] as const;

export interface AlertWorkerDeps {
  db: Knex;
  store: EventStore;
  bus: Bus;
  logger: Logger;
  now?: () => Date;
  /** waits (bounded) until the runs, answers and alerts read models have passed a position */
  waitForReadModels?: (position: Position) => Promise<unknown>;
  /** run the daily pass (SCHEDULER=on, as the other schedules) */
  daily?: boolean;
  dailyEveryMs?: number;
  checkAccess?: EvaluateDeps['checkAccess'];
}

export async function onAlertTrigger(deps: AlertWorkerDeps, msg: Pick<BusMessage, 'type' | 'data' | 'position'>) {
  const websiteId = (msg.data as { website_id: string }).website_id;
  await deps.waitForReadModels?.(positionFromString(msg.position));
  return evaluateWebsite(deps, websiteId, msg.type === 'RunEnded' ? 'run_ended' : 'import');
}

/**
 * A daily pass over every website with an enabled rule: the first instance to claim the UTC day runs it (the access
 * checks fetch once a day); each firing is once per key whoever evaluates.
 */
export async function dailyAlertPass(deps: EvaluateDeps) {
  const day = (deps.now?.() ?? new Date()).toISOString().slice(0, 10);
  const claimed = await deps.db('alert_daily_passes').insert({ day }).onConflict('day').ignore().returning('day');
  if (!claimed.length) return;
  const sites = await deps.db('rm_alert_rules').where('enabled', true).distinct('website_id');
  for (const s of sites) await evaluateWebsite(deps, s.website_id, 'daily');
}

/** The daily access check of a website's domain: the AI access check, outbound through the given (safe) fetcher. */
export const accessCheckThrough =
  (outbound: AiAccessDeps): NonNullable<EvaluateDeps['checkAccess']> =>
  (domain) =>
    checkAiAccess(domain, { fetch: outbound.fetch, baseUrl: outbound.baseUrl });

/** The durable consumer of run ends and imports (shared by instances), and the daily pass. */
export async function startAlertWorkers(deps: AlertWorkerDeps): Promise<{ stop(): Promise<void> }> {
  await migrateAlertAccess(deps.db);
  const consumer = await deps.bus.consume({
    durable: 'alerts',
    types: ALERT_BUS_TYPES,
    concurrency: 2,
    handler: async (msg) => {
      await onAlertTrigger(deps, msg);
    },
  });
  const daily = deps.daily
    ? every({ everyMs: deps.dailyEveryMs ?? 3600_000, firstMs: 60_000, logger: deps.logger, failure: 'daily alert pass failed' }, () =>
        dailyAlertPass(deps),
      )
    : null;
  return {
    async stop() {
      await daily?.stop();
      await consumer.stop();
    },
  };
}
