import { deterministicId } from '../../src/domain/ids';
import { jobStream } from '../../src/domain/jobs';
import { type Position, WrongExpectedRevisionError } from '../../src/eventstore/port';
import { type CommandContext, newEventsFor } from '../handle';

export type ValuationReason = 'answers' | 'economics' | 'daily' | 'demo' | 'manual';

/**
 * Requests a valuation job of the website for a time slot (docs/VALUATION.md, section 7). The job id derives from the
 * website and the slot, so requests of one slot (several instances, a repeated pass) open one job.
 */
export async function requestValuation(
  ctx: CommandContext,
  input: { website_id: string; reason: ValuationReason; slot: string },
): Promise<{ job_id: string; requested: boolean; position: Position | null }> {
  const jobId = deterministicId('aivalue', input.website_id, input.slot);
  const at = ctx.now?.() ?? new Date();
  const job = { ...ctx, websiteId: input.website_id };
  try {
    const r = await ctx.store.append(
      jobStream('aivalue', jobId),
      newEventsFor(job, [
        {
          id: deterministicId('aivalue-requested', jobId),
          type: 'AiValueRequested',
          data: { job_id: jobId, website_id: input.website_id, reason: input.reason, requested_at: at.toISOString() },
        },
      ]),
      'no_stream',
    );
    return { job_id: jobId, requested: !r.noop, position: r.position };
  } catch (err) {
    if (err instanceof WrongExpectedRevisionError) return { job_id: jobId, requested: false, position: null };
    throw err;
  }
}
