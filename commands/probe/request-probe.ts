import type { Knex } from 'knex';
import { z } from 'zod';
import { type DomainError, forbidden, isDomainError } from '../../src/domain/errors';
import type { DomainEvent } from '../../src/domain/events';
import { deterministicId, newId } from '../../src/domain/ids';
import { jobStream } from '../../src/domain/jobs';
import { Uuid } from '../../src/domain/schemas';
import { type Position, WrongExpectedRevisionError } from '../../src/eventstore/port';
import { admitUnderHold, type ConcurrencyLimit } from '../../src/limits/holds';
import { monthOf, reserveAllowance } from '../allowances/allowance';
import { type CommandContext, newEventsFor } from '../handle';
import { admitOnce } from '../idempotency/idempotency';

export const RequestProbe = z.strictObject({
  website_id: Uuid.nullable().default(null),
  steps: z.number().int().min(1).max(100).default(3),
  step_ms: z.number().int().min(0).max(60_000).default(100),
  fail_at_step: z.number().int().positive().nullable().default(null),
});
export type RequestProbe = z.output<typeof RequestProbe>;

export const PROBE_KEY_CONFLICT = 'Idempotency key reused with a different request';
export const PROBE_ALLOWANCE_EXHAUSTED = 'Probe allowance exhausted';

/** What admits a probe besides its input: the patterns an area's job request combines (docs/api/jobs-and-limits.md, "A new job"). */
export interface ProbeAdmission {
  /** same key and input: the same probe, nothing charged again; other input: 409 */
  idempotency_key?: string;
  /** reserved per UTC month at admission, settled when the probe ends */
  allowance?: { name: string; limit: number; on_failure: 'consumed' | 'released' };
  /** probes in progress at once per organization (429 past it) */
  concurrent?: { db: Knex; limit: ConcurrencyLimit };
}

export interface ProbeAdmitted {
  job_id: string;
  /** the key had admitted this probe before */
  replayed: boolean;
  position: Position | null;
}

/**
 * Admits a probe: its place among the organization's probes in progress, its allowance, then its stream opened by
 * ProbeRequested (with the key's RequestAdmitted when it has one). Each step is idempotent per job id, so a retry or a
 * concurrent request with the same key repeats them harmlessly; a refusal gives back what it took.
 */
export async function requestProbe(ctx: CommandContext, input: RequestProbe, admission: ProbeAdmission = {}): Promise<ProbeAdmitted | DomainError> {
  const at = ctx.now?.() ?? new Date();
  const job = { ...ctx, websiteId: input.website_id };
  const admit = async (jobId: string): Promise<(DomainEvent & { id: string })[] | DomainError> => {
    const stream = jobStream('probe', jobId);
    const reserve = async (): Promise<{ name: string; period: string } | null | DomainError> => {
      if (!admission.allowance) return null;
      const period = monthOf(at);
      const r = await reserveAllowance(job, {
        allowance: admission.allowance.name,
        period,
        reservation_id: jobId,
        subject: stream,
        limit: admission.allowance.limit,
        on_failure: admission.allowance.on_failure,
        exhausted: forbidden(PROBE_ALLOWANCE_EXHAUSTED),
      });
      return isDomainError(r) ? r : { name: admission.allowance.name, period };
    };
    const cap = admission.concurrent;
    const allowance = cap ? await admitUnderHold(cap.db, cap.limit, ctx.organizationId, jobId, stream, reserve) : await reserve();
    if (isDomainError(allowance)) return allowance;
    return [{ id: deterministicId('probe-requested', jobId), type: 'ProbeRequested', data: { job_id: jobId, ...input, allowance } }];
  };

  if (admission.idempotency_key !== undefined) {
    const r = await admitOnce(job, {
      scope: 'probe',
      key: admission.idempotency_key,
      input,
      conflictMessage: PROBE_KEY_CONFLICT,
      streamOf: (id) => jobStream('probe', id),
      admit,
    });
    return isDomainError(r) ? r : { job_id: r.resultId, replayed: r.replayed, position: r.position };
  }
  const jobId = newId();
  const events = await admit(jobId);
  if (isDomainError(events)) return events;
  try {
    const r = await ctx.store.append(jobStream('probe', jobId), newEventsFor(job, events), 'no_stream');
    return { job_id: jobId, replayed: false, position: r.position };
  } catch (err) {
    if (err instanceof WrongExpectedRevisionError) throw new Error(`probe ${jobId} exists already`);
    throw err;
  }
}
