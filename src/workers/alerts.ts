import type { Knex } from 'knex';
import { type AiAccessDeps, checkAiAccess } from '../analysis/ai-access';
import { type EvaluateDeps, evaluateWebsite, migrateAlertAccess } from '../app/alerts';
import type { Bus, BusMessage } from '../bus/port';
import { type EventStore, type Position, positionFromString } from '../eventstore/port';
import type { Logger } from '../logger';
import { every } from './every';
import { websitesWithEnabledRules } from '../../queries/alerts/alerts';

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
  /** how long a website's daily claim holds (DAILY_LEASE_MS) */
  dailyLeaseMs?: number;
  checkAccess?: EvaluateDeps['checkAccess'];
}

export async function onAlertTrigger(deps: AlertWorkerDeps, msg: Pick<BusMessage, 'type' | 'data' | 'position'>) {
  const websiteId = (msg.data as { website_id: string }).website_id;
  await deps.waitForReadModels?.(positionFromString(msg.position));
  return evaluateWebsite(deps, websiteId, msg.type === 'RunEnded' ? 'run_ended' : 'import');
}

/** How long a website's daily claim holds: past it, unfinished (its instance died), the next pass of any instance takes it. */
export const DAILY_LEASE_MS = 10 * 60_000;
/** Claims older than this many days are deleted by the next pass. */
const CLAIMS_KEPT_DAYS = 7;

/**
 * Claims a website's evaluation of the UTC day for this pass: a new claim, or one left unfinished past its lease. One
 * statement, so two passes at once claim it once (the second waits on the row and sees the fresh lease).
 */
async function claimWebsiteDay(db: Knex, day: string, websiteId: string, now: Date, leaseMs: number): Promise<boolean> {
  const { rows } = await db.raw(
    `insert into alert_daily_claims as c (day, website_id, lease_until) values (?, ?, ?)
     on conflict (day, website_id) do update set lease_until = excluded.lease_until
      where c.done_at is null and c.lease_until <= ?
     returning c.website_id`,
    [day, websiteId, new Date(now.getTime() + leaseMs), now],
  );
  return rows.length > 0;
}

/**
 * A daily pass over every website with an enabled rule: each website's evaluation of the UTC day (the access checks
 * fetch once a day) is claimed by one instance and marked done when finished; a claim still unfinished after its lease
 * is taken by the next pass. A website that fails does not stop the others (its claim is retried after the lease);
 * the pass then throws the first failure. Each firing is once per key whoever evaluates.
 */
export async function dailyAlertPass(deps: EvaluateDeps, leaseMs = DAILY_LEASE_MS) {
  const clock = () => deps.now?.() ?? new Date();
  const start = clock();
  const day = start.toISOString().slice(0, 10);
  await deps
    .db('alert_daily_claims')
    .where('day', '<', new Date(start.getTime() - CLAIMS_KEPT_DAYS * 86_400_000).toISOString().slice(0, 10))
    .delete();
  const sites = await websitesWithEnabledRules(deps.db);
  let failure: { err: unknown } | null = null;
  for (const website_id of sites) {
    if (!(await claimWebsiteDay(deps.db, day, website_id, clock(), leaseMs))) continue;
    try {
      await evaluateWebsite(deps, website_id, 'daily');
      await deps.db('alert_daily_claims').where({ day, website_id }).update({ done_at: clock() });
    } catch (err) {
      failure ??= { err };
    }
  }
  if (failure) throw failure.err;
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
        dailyAlertPass(deps, deps.dailyLeaseMs),
      )
    : null;
  return {
    async stop() {
      await daily?.stop();
      await consumer.stop();
    },
  };
}
