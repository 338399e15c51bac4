import type { Knex } from 'knex';
import { requestValuation, type ValuationReason } from '../../commands/ai-value/request-valuation';
import type { CommandContext } from '../../commands/handle';
import { computeValuation } from '../../queries/ai-value/compute';
import { type DueRow, valuationStates } from '../../queries/ai-value/read';
import { utcDay } from '../domain/dates';
import { SYSTEM_ACTOR } from '../domain/events';
import type { EventStore } from '../eventstore/port';
import type { SlotPool } from '../limits/slots';
import type { Logger } from '../logger';
import { every } from './every';
import { type JobSpec, type OneStepState, oneStepAggregate, perWebsite } from './jobs';

/** One valuation at a time per website, two in all (they are CPU work on the metrics' facts). */
export const AI_VALUE_SLOTS: SlotPool = { name: 'aivalue', perScope: 1, overall: 2 };
/** New answers ask for a computation at most this often per website. */
export const DEBOUNCE_MS = 2 * 60_000;

/** The request, and done once the valuation is recorded (AiValueComputed). */
export type AiValueJobState = OneStepState<'AiValueRequested'>;

/** The valuation job (docs/VALUATION.md, section 7): one step computing over the trailing 28 days and recording it. */
export function aiValueJob(): JobSpec<AiValueJobState> {
  return {
    kind: 'aivalue',
    aggregate: oneStepAggregate('AiValueRequested', 'AiValueComputed'),
    slots: perWebsite(AI_VALUE_SLOTS),
    next(s) {
      const r = s.requested;
      if (!r || s.done) return null;
      return {
        name: 'compute',
        async run({ jobId, db, command }) {
          const c = await computeValuation(db, r.website_id, command.now?.() ?? new Date());
          return {
            events: [{ type: 'AiValueComputed', data: { job_id: jobId, website_id: r.website_id, ...c, valuation: c.valuation } }],
            succeeded: true,
          };
        },
      };
    },
  };
}

/** Why the website's value is due now, and the slot that names the job; null when it is not. */
export function dueReason(row: DueRow, now: Date): { reason: ValuationReason; slot: string } | null {
  const t = now.getTime();
  const recent = row.requested_at !== null && t - row.requested_at.getTime() < DEBOUNCE_MS;
  const debounced = `at-${Math.floor(t / DEBOUNCE_MS)}`;
  // a change of economics is a person waiting for the new figure: one job per change, not debounced
  if (row.economics_changed_at !== null && (row.checked_at === null || row.economics_changed_at > row.checked_at))
    return { reason: 'economics', slot: `economics-${row.economics_changed_at.getTime()}` };
  if (!recent && row.facts_now !== null && row.facts_now !== row.facts_version && row.facts_now !== '0')
    return { reason: 'answers', slot: debounced };
  if (row.checked_at !== null && utcDay(row.checked_at) < utcDay(now)) return { reason: 'daily', slot: `day-${utcDay(now)}` };
  return null;
}

/** The websites whose value is due (feature on, website active), each requested once per slot. */
export async function aiValuePass(deps: { db: Knex; store: EventStore; now?: () => Date }): Promise<string[]> {
  const now = deps.now?.() ?? new Date();
  const rows = await valuationStates(deps.db);
  const jobs: string[] = [];
  for (const row of rows) {
    const due = dueReason(row, now);
    if (!due) continue;
    const ctx: CommandContext = {
      store: deps.store,
      organizationId: row.organization_id,
      websiteId: row.website_id,
      actor: SYSTEM_ACTOR,
      now: deps.now,
    };
    const r = await requestValuation(ctx, { website_id: row.website_id, ...due });
    if (r.requested) jobs.push(r.job_id);
  }
  return jobs;
}

/** Every 20 s on every instance (the job ids keep it to one job per slot). */
export function startAiValueScheduler(deps: { db: Knex; store: EventStore; logger: Logger; now?: () => Date }, everyMs = 20_000) {
  return every({ everyMs, firstMs: 5_000, logger: deps.logger, failure: 'AI search value pass failed' }, () => aiValuePass(deps));
}
