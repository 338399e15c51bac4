/** Domain errors are values, mapped to HTTP statuses in one place (src/app/problem.ts). */
export type DomainError =
  | { kind: 'invalid'; message: string }
  | { kind: 'unauthorized'; message: string }
  | { kind: 'forbidden'; message: string }
  | { kind: 'not_found'; message: string }
  | { kind: 'conflict'; message: string; details?: Record<string, unknown> }
  | { kind: 'rate_limited'; message: string; retryAfterSeconds: number }
  /** the service cannot answer this right now, and says when to try again (503 with retry-after) */
  | { kind: 'unavailable'; message: string; retryAfterSeconds: number };

export const invalid = (message: string): DomainError => ({ kind: 'invalid', message });
export const forbidden = (message: string): DomainError => ({ kind: 'forbidden', message });
export const notFound = (message: string): DomainError => ({ kind: 'not_found', message });
export const unavailable = (message: string, retryAfterSeconds: number): DomainError => ({ kind: 'unavailable', message, retryAfterSeconds });
/** A limit or budget is spent: 429 with the seconds to wait (Retry-After); the message says which, when it has its own. */
export const rateLimited = (retryAfterSeconds: number, message = 'Rate limit exceeded'): DomainError => ({
  kind: 'rate_limited',
  message,
  retryAfterSeconds,
});
export const conflict = (message: string, details?: Record<string, unknown>): DomainError => ({ kind: 'conflict', message, details });

export const isDomainError = (x: unknown): x is DomainError =>
  typeof x === 'object' && x !== null && 'kind' in x && 'message' in x && typeof (x as { kind: unknown }).kind === 'string';

/** Thrown across layers that can't return a value (e.g. deep inside a transaction); the HTTP layer maps it. */
export class DomainErrorException extends Error {
  constructor(readonly error: DomainError) {
    super(error.message);
  }
}
