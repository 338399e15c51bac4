import type { Knex } from 'knex';
import { settleAllowance } from '../../commands/allowances/allowance';
import type { Bus } from '../bus/port';
import { SYSTEM_ACTOR } from '../domain/events';
import { deterministicId } from '../domain/ids';
import { type JobKinds, jobOfStream } from '../domain/jobs';
import { type EventStore, WrongExpectedRevisionError } from '../eventstore/port';
import { releaseHolds } from '../limits/holds';
import { promoteQueued } from '../limits/slots';
import type { Logger } from '../logger';
import { jobWorkerName, type JobSpec, poolOf, wakeJobs } from './jobs';
import { sweepEvery } from './every';
import { lostJobs, orphanHolds, type SweptJob, unsettledReservations } from '../../queries/jobs/lost';

export interface JobSweeperDeps {
  db: Knex;
  store: EventStore;
  bus: Bus;
  logger: Logger;
  /** the job kinds this instance runs */
  specs: readonly JobSpec<any>[];
  /** every kind of job (the registry's) */
  kinds: JobKinds;
  /** a job whose last step, heartbeat or request is older than this counts as lost (default 60 s) */
  staleMs?: number;
  /** wakes of one job after which it fails as abandoned (its workers kept dying on it; default 5) */
  maxWakes?: number;
  /** jobs one pass looks at per category (default 500) */
  limit?: number;
}

export interface SweepReport {
  /** lost jobs sent to their workers again */
  woken: number;
  /** queued jobs started because slots were free */
  promoted: number;
  /** jobs failed after too many wakes */
  abandoned: number;
  /** places and reservations of ended (or never created) jobs given back or settled */
  settled: number;
}

/**
 * Finds jobs their workers lost and sends them again: a job requested but never taken up (a bus that lost the message),
 * a running job whose heartbeat stopped (its instance died mid-step; NATS redelivers it too, the in-process bus does
 * not), an ended job whose slot or places were not given back. Starts queued jobs that fit (a release whose promotions
 * were lost). A job is woken once per period by one instance (a conditional upsert), and failed as abandoned after
 * `maxWakes`, so none is left processing.
 */
export async function sweepJobs(deps: JobSweeperDeps): Promise<SweepReport> {
  const report: SweepReport = { woken: 0, promoted: 0, abandoned: 0, settled: 0 };
  if (!deps.specs.length) return report;
  const db = deps.db;
  const stale = `${Math.max(0, Math.round((deps.staleMs ?? 60_000) / 1000))} seconds`;
  const kinds = deps.specs.map((s) => s.kind);
  const limit = deps.limit ?? 500;
  // a kind whose queue holds messages has its requests on the way: only running jobs can be lost then
  const busy = new Set<string>();
  for (const k of kinds) if ((await deps.bus.backlog(jobWorkerName(k))) > 0) busy.add(k);

  const candidates = await lostJobs(db, kinds, [...busy], stale, limit);
  if (candidates.length) {
    // one instance wakes a job per period: the first to move its claim
    const claimed = await db.raw(
      `insert into aivis_job_wakes as w (job_id, at, count) select unnest(?::text[]), now(), 1
       on conflict (job_id) do update set at = now(), count = w.count + 1 where w.at < now() - ?::interval
       returning job_id, count`,
      [candidates.map((c) => c.job_id), stale],
    );
    const counts = new Map<string, number>((claimed.rows as { job_id: string; count: number }[]).map((r) => [r.job_id, Number(r.count)]));
    const toWake: SweptJob[] = [];
    for (const c of candidates) {
      const count = counts.get(c.job_id);
      if (count === undefined) continue;
      if (count > (deps.maxWakes ?? 5)) {
        if (await abandon(deps, c)) report.abandoned++;
      }
      toWake.push(c);
    }
    report.woken += await wakeJobs(deps, toWake, `wake.${Date.now()}`);
  }

  for (const spec of deps.specs) {
    const started = await promoteQueued(db, poolOf(spec));
    report.promoted += await wakeJobs(deps, started, 'started');
  }

  // places held by ended jobs, or by admissions that never opened their job's stream
  const done = await db.raw(
    `delete from aivis_limit_holds h using rm_jobs j where j.id = h.holder_id and j.status in ('succeeded', 'failed') returning h.holder_id`,
  );
  report.settled += done.rows.length;
  for (const o of await orphanHolds(db, stale, limit)) {
    if ((await deps.store.readStream(o.subject, { maxCount: 1 })).length === 0) report.settled += await releaseHolds(db, o.holder_id);
  }
  // reservations of ended jobs whose own settlement was lost with their process
  for (const r of await unsettledReservations(db, limit)) {
    const ctx = { store: deps.store, organizationId: r.organization_id, websiteId: r.website_id, actor: SYSTEM_ACTOR };
    await settleAllowance(ctx, { allowance: r.allowance, period: r.period, reservation_id: r.reservation_id, ended: r.status });
    report.settled++;
  }
  if (report.woken || report.abandoned || report.promoted) deps.logger.warn({ ...report }, 'jobs lost on the way sent again');
  return report;
}

/** Fails a job its workers kept losing (appended on its stream like any end; its next wake settles it). */
async function abandon(
  deps: JobSweeperDeps,
  c: { job_id: string; kind: string; stream_id: string; organization_id: string; website_id: string | null },
): Promise<boolean> {
  const job = jobOfStream(deps.kinds, c.stream_id);
  if (!job) return false;
  const events = await deps.store.readStream(c.stream_id);
  if (events.some((e) => e.type === 'JobSucceeded' || e.type === 'JobFailed')) return false;
  const last = events[events.length - 1];
  try {
    await deps.store.append(
      c.stream_id,
      [
        {
          id: deterministicId('job-ended', job.jobId),
          type: 'JobFailed',
          data: {
            job_id: job.jobId,
            kind: job.kind,
            error_kind: 'abandoned',
            message: 'the job stopped making progress: its workers were lost too many times',
          },
          metadata: {
            organization_id: c.organization_id,
            website_id: c.website_id,
            actor: SYSTEM_ACTOR,
            correlation_id: job.jobId,
            causation_id: job.jobId,
            time: new Date().toISOString(),
          },
        },
      ],
      last.revision,
    );
    return true;
  } catch (err) {
    if (err instanceof WrongExpectedRevisionError) return false;
    throw err;
  }
}

export function startJobSweeper(deps: JobSweeperDeps & { everyMs?: number }): { stop(): Promise<void> } {
  return sweepEvery(deps.everyMs ?? 15_000, deps.logger, 'sweep of jobs failed', () => sweepJobs(deps));
}
