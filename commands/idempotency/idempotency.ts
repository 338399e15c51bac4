import { createHash } from 'node:crypto';
import { type DomainError, conflict, isDomainError } from '../../src/domain/errors';
import type { DomainEvent, EventData } from '../../src/domain/events';
import { deterministicId } from '../../src/domain/ids';
import { type Position, WrongExpectedRevisionError } from '../../src/eventstore/port';
import { type CommandContext, newEventsFor } from '../handle';

/** SHA-256 of the input's JSON with object keys sorted: equal for inputs that normalize alike, whatever their order. */
export function fingerprintOf(input: unknown): string {
  const canonical = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(canonical);
    if (v && typeof v === 'object') {
      return Object.fromEntries(
        Object.keys(v)
          .filter((k) => (v as Record<string, unknown>)[k] !== undefined)
          .sort()
          .map((k) => [k, canonical((v as Record<string, unknown>)[k])]),
      );
    }
    return v;
  };
  return createHash('sha256')
    .update(JSON.stringify(canonical(input)))
    .digest('hex');
}

/**
 * The id of what a key's request creates, derived from (organization, scope, key): every request with that key, on
 * any instance, at any time, names the same result, so its stream is where the key is decided (expected: no stream).
 */
export const idempotentResultId = (organizationId: string, scope: string, key: string) => deterministicId('idempotency', organizationId, scope, key);

export type Admitted = EventData<'RequestAdmitted'>;

/** A request meets what its key admitted before: nothing yet (admit it), the same input (replay), or other input. */
export function decideReplay(admitted: Admitted | null, fingerprint: string, conflictMessage: string): 'admit' | 'replay' | DomainError {
  if (!admitted) return 'admit';
  return admitted.fingerprint === fingerprint ? 'replay' : conflict(conflictMessage);
}

export interface IdempotentRequest {
  /** what the key is unique within, besides the organization: an area ('pitch'), or an area and a website */
  scope: string;
  key: string;
  /** the request's normalized input: same input, same fingerprint */
  input: unknown;
  /** the area's 409 message for the key reused with other input */
  conflictMessage: string;
  /** the result's stream (a job's: `pitch-<id>`) */
  streamOf(resultId: string): string;
  /**
   * The admission's work, for a key seen for the first time: checks and reservations elsewhere, each idempotent per
   * result id (a retry, or a concurrent request with the same key, repeats them harmlessly), then the events that
   * open the result's stream (a job's request event). A domain error refuses the request and leaves the key free.
   */
  admit(resultId: string): Promise<(DomainEvent & { id?: string })[] | DomainError>;
}

export interface Admission {
  resultId: string;
  /** true: the key had admitted this input before; nothing was done again */
  replayed: boolean;
  /** position of the stream's last event (for read-your-writes) */
  position: Position | null;
}

async function admittedOn(ctx: CommandContext, stream: string): Promise<{ admitted: Admitted | null; position: Position | null }> {
  const [first] = await ctx.store.readStream(stream, { maxCount: 1 });
  if (!first) return { admitted: null, position: null };
  if (first.type !== 'RequestAdmitted') throw new Error(`stream ${stream} was not opened by an idempotent request`);
  const [last] = await ctx.store.readStream(stream, { direction: 'backwards', maxCount: 1 });
  return { admitted: first.data as Admitted, position: last.position };
}

/**
 * Admits a request once per key: the key, the input's fingerprint and the result's id go in the first event of the
 * result's stream, appended with the events the admission makes, in one append expecting no stream. Of two requests
 * racing with one key, one opens the stream and the other finds it: the same input answers the same result, other
 * input the area's 409. A request refused by `admit` records nothing, so its key can be used again.
 */
export async function admitOnce(ctx: CommandContext, req: IdempotentRequest): Promise<Admission | DomainError> {
  const resultId = idempotentResultId(ctx.organizationId, req.scope, req.key);
  const stream = req.streamOf(resultId);
  const fingerprint = fingerprintOf(req.input);
  const answer = async (): Promise<Admission | DomainError> => {
    const seen = await admittedOn(ctx, stream);
    const d = decideReplay(seen.admitted, fingerprint, req.conflictMessage);
    if (d === 'admit') throw new Error(`stream ${stream} disappeared`);
    return isDomainError(d) ? d : { resultId, replayed: true, position: seen.position };
  };

  const seen = await admittedOn(ctx, stream);
  if (seen.admitted) return answer();
  const opened = await req.admit(resultId);
  if (isDomainError(opened)) return opened;
  const admitted: DomainEvent & { id: string } = {
    // the fingerprint is part of the id: other input never passes for a repeat of this append
    id: deterministicId('request-admitted', resultId, fingerprint),
    type: 'RequestAdmitted',
    data: { scope: req.scope, key: req.key, fingerprint, result_id: resultId },
  };
  try {
    const r = await ctx.store.append(stream, newEventsFor(ctx, [admitted, ...opened]), 'no_stream');
    return r.noop ? answer() : { resultId, replayed: false, position: r.position };
  } catch (err) {
    if (err instanceof WrongExpectedRevisionError) return answer();
    throw err;
  }
}
