/**
 * Timeout, retries and the per-model concurrency limit every live engine goes through.
 *
 * Defaults (each overridable per engine through EngineOptions):
 * - timeoutMs 60 000: one attempt (every HTTP request it makes, body included) must finish within it.
 * - retries 3: after the first attempt, up to 3 more for a retryable EngineError: 429, 5xx,
 *   network failures, timeouts. auth / rejected / bad_response / not_configured are never retried.
 * - backoff: before retry n (n = 1, 2, ...) wait d/2 + random·d/2 with d = min(backoffMaxMs, backoffBaseMs·2^(n-1))
 *   (backoffBaseMs 1 000, backoffMaxMs 30 000). A Retry-After from the provider replaces that: wait
 *   exactly it plus up to 10 % (at most 1 s) of jitter. A Retry-After longer than maxRetryAfterMs
 *   (60 000) is not waited out here: the rate_limited error goes back at once with retryAfterMs,
 *   for the caller to reschedule.
 * - concurrency 4: at most 4 asks of one model in flight; further asks queue, first come first
 *   served. A queued or retrying ask keeps its place: an ask holds its slot through its retries,
 *   so a rate-limited provider is not hit by the queue meanwhile.
 */
import { EngineError } from './port';

export interface ResilienceOptions {
  timeoutMs?: number;
  retries?: number;
  concurrency?: number;
  backoffBaseMs?: number;
  backoffMaxMs?: number;
  maxRetryAfterMs?: number;
  /** Test seams. */
  random?: () => number;
  sleep?: (ms: number) => Promise<void>;
}

export const RESILIENCE_DEFAULTS = Object.freeze({
  timeoutMs: 60_000,
  retries: 3,
  concurrency: 4,
  backoffBaseMs: 1_000,
  backoffMaxMs: 30_000,
  maxRetryAfterMs: 60_000,
});

export type ResolvedResilience = Required<ResilienceOptions>;

const realSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export function resolveResilience(o: ResilienceOptions = {}): ResolvedResilience {
  const num = (v: number | undefined, d: number, min: number) => (typeof v === 'number' && Number.isFinite(v) && v >= min ? v : d);
  return {
    timeoutMs: num(o.timeoutMs, RESILIENCE_DEFAULTS.timeoutMs, 1),
    retries: Math.floor(num(o.retries, RESILIENCE_DEFAULTS.retries, 0)),
    concurrency: Math.floor(num(o.concurrency, RESILIENCE_DEFAULTS.concurrency, 1)),
    backoffBaseMs: num(o.backoffBaseMs, RESILIENCE_DEFAULTS.backoffBaseMs, 0),
    backoffMaxMs: num(o.backoffMaxMs, RESILIENCE_DEFAULTS.backoffMaxMs, 0),
    maxRetryAfterMs: num(o.maxRetryAfterMs, RESILIENCE_DEFAULTS.maxRetryAfterMs, 0),
    random: o.random ?? Math.random,
    sleep: o.sleep ?? realSleep,
  };
}

/** A FIFO semaphore. */
export class Limiter {
  private active = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(readonly limit: number) {}

  get inFlight(): number {
    return this.active;
  }

  get queued(): number {
    return this.waiting.length;
  }

  async run<T>(fn: () => Promise<T>): Promise<T> {
    if (this.active >= this.limit) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.active++;
    try {
      return await fn();
    } finally {
      const next = this.waiting.shift();
      // the slot passes straight to the next waiter, so `active` never dips below the limit under load
      if (next) next();
      else this.active--;
    }
  }
}

/** The wait before retry number `retry` (1-based) after `err`, or null when it must not be retried. */
export function retryDelay(err: EngineError, retry: number, o: ResolvedResilience): number | null {
  if (!err.retryable) return null;
  if (err.retryAfterMs !== undefined) {
    if (err.retryAfterMs > o.maxRetryAfterMs) return null;
    return err.retryAfterMs + o.random() * Math.min(1_000, err.retryAfterMs * 0.1);
  }
  const d = Math.min(o.backoffMaxMs, o.backoffBaseMs * 2 ** (retry - 1));
  return d / 2 + (o.random() * d) / 2;
}

/**
 * Runs `attempt` until it succeeds, fails with a non-retryable error, or the retries are spent.
 * The error thrown is the last attempt's, with `attempts` set. Anything that is not an EngineError
 * is a bug and propagates untouched.
 */
export async function withRetries<T>(attempt: (n: number) => Promise<T>, o: ResolvedResilience): Promise<T> {
  for (let n = 1; ; n++) {
    try {
      return await attempt(n);
    } catch (err) {
      if (!(err instanceof EngineError)) throw err;
      const wait = n <= o.retries ? retryDelay(err, n, o) : null;
      if (wait === null) {
        err.attempts = n;
        throw err;
      }
      await o.sleep(wait);
    }
  }
}
