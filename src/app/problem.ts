import { z } from 'zod';
import { type DomainError, DomainErrorException, isDomainError } from '../domain/errors';
import { WrongExpectedRevisionError } from '../eventstore/port';

/**
 * What a failure becomes for whoever asked: one mapping (toProblem) for every catch site. The HTTP error path sends
 * `status`, `body` and `headers` as they are; an MCP tool answers `body.error` as its error text with the status; a
 * worker logs `problemLog(err)`. `unexpected` failures (a bug, a database gone) are logged with the error itself and
 * the caller is told only "Internal server error".
 */
export interface Problem {
  status: number;
  /** `{error}`, with the details a conflict carries */
  body: { error: string } & Record<string, unknown>;
  headers?: Record<string, string>;
  /** the DomainError kind the status stands for; `internal` for a 5xx */
  kind: ProblemKind;
  unexpected: boolean;
}

export type ProblemKind = DomainError['kind'] | 'internal';

/** An error whose status and message are the answer (input refused, not authenticated, over a limit, too large). */
export class ProblemError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly extra?: Record<string, unknown>,
    readonly headers?: Record<string, string>,
  ) {
    super(message);
  }
}

export const badRequest = (message: string) => new ProblemError(400, message);
export const unauthorized = () => new ProblemError(401, 'Unauthorized');
export const tooManyRequests = (retryAfterSeconds: number) =>
  new ProblemError(429, 'Too many requests', undefined, { 'retry-after': String(retryAfterSeconds) });

export const INTERNAL_ERROR = 'Internal server error';

const STATUS: Record<DomainError['kind'], number> = {
  invalid: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  rate_limited: 429,
  unavailable: 503,
};

const KIND_OF_STATUS: Record<number, ProblemKind> = {
  400: 'invalid',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  409: 'conflict',
  429: 'rate_limited',
  503: 'unavailable',
};
const kindOf = (status: number): ProblemKind => KIND_OF_STATUS[status] ?? (status >= 500 ? 'internal' : 'invalid');

/** A domain error as the error that answers it (429 with Retry-After, 409 with its details, else its status). */
export function problemError(e: DomainError): ProblemError {
  if (e.kind === 'rate_limited') return new ProblemError(429, e.message, undefined, { 'retry-after': String(e.retryAfterSeconds) });
  if (e.kind === 'unavailable') return new ProblemError(503, e.message, undefined, { 'retry-after': String(e.retryAfterSeconds) });
  if (e.kind === 'conflict') return new ProblemError(409, e.message, e.details);
  return new ProblemError(STATUS[e.kind], e.message);
}

function valueAt(input: unknown, path: PropertyKey[]): unknown {
  let v = input;
  for (const k of path) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<PropertyKey, unknown>)[k];
  }
  return v;
}

/** One zod issue as a sentence that names the field (`input` is what was validated, to tell missing from wrong). */
export function issueMessage(issue: z.core.$ZodIssue, input?: unknown, prefix = ''): string {
  const path = [prefix, ...issue.path.map(String)]
    .filter(Boolean)
    .join('.')
    .replace(/\.(\d+)/g, '[$1]');
  const field = path || 'body';
  if (issue.code === 'invalid_type' && valueAt(input, issue.path) === undefined) return `${field} is required`;
  if (issue.code === 'unrecognized_keys') {
    const keys = (issue as unknown as { keys: string[] }).keys;
    return `${path ? `${path}.` : ''}${keys[0]} is not allowed`;
  }
  return `${field}: ${issue.message}`;
}

/** The code of an input error whose message is the answer as it is (the body's bytes refused before parsing). */
export const BAD_BODY = 'AIVIS_BAD_BODY';

/**
 * An input error the framework raised while reading a request (a 4xx `statusCode`, a `code`): its message, except
 * the parser's own wording for a body that is not JSON, too large or of another media type.
 */
function inputMessage(err: { code?: unknown; message: string }): string {
  if (err.code === BAD_BODY) return err.message;
  if (err.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || err.code === 'FST_ERR_CTP_EMPTY_JSON_BODY' || /JSON/.test(err.message))
    return 'body must be valid JSON';
  if (err.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return 'body is too large';
  if (err.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return 'body must be application/json';
  return err.message;
}

const problemOfError = (e: ProblemError): Problem => ({
  status: e.status,
  body: { error: e.message, ...e.extra },
  ...(e.headers && { headers: e.headers }),
  kind: kindOf(e.status),
  // an answer someone chose, whatever its status
  unexpected: false,
});

/** A write that lost every round of its retries to writers of other instances: nothing was written, try again. */
const BUSY_STREAM = new ProblemError(503, 'Too many concurrent changes: try again shortly', undefined, { 'retry-after': '1' });

/** Every pooled connection stayed busy past the pool's wait: the database is overloaded, not broken. */
const POOL_BUSY = new ProblemError(503, 'The database is busy: try again shortly', undefined, { 'retry-after': '1' });

const internal = (): Problem => ({ status: 500, body: { error: INTERNAL_ERROR }, kind: 'internal', unexpected: true });

/**
 * Any failure as its answer: a ProblemError as it says; a DomainError (a value or thrown in a DomainErrorException)
 * by its kind; a zod error as 400 naming the field of its first issue; an input error of the framework (a 4xx
 * `statusCode`) as its status and message; a connection pool waited out as 503; anything else as an unexpected 500.
 */
export function toProblem(err: unknown): Problem {
  if (err instanceof ProblemError) return problemOfError(err);
  if (err instanceof WrongExpectedRevisionError) return problemOfError(BUSY_STREAM);
  // knex's own class is not an ESM named export: known by its name
  if (err instanceof Error && err.name === 'KnexTimeoutError') return problemOfError(POOL_BUSY);
  if (err instanceof DomainErrorException) return problemOfError(problemError(err.error));
  if (err instanceof z.ZodError) return problemOfError(badRequest(issueMessage(err.issues[0])));
  // a DomainError is a plain value: an Error with a `kind` of its own (an engine's, say) is not one
  if (!(err instanceof Error) && isDomainError(err) && err.kind in STATUS) return problemOfError(problemError(err));
  if (err instanceof Error) {
    const status = (err as { statusCode?: unknown }).statusCode;
    if (typeof status === 'number' && status >= 400 && status < 500)
      return problemOfError(new ProblemError(status, inputMessage(err as Error & { code?: unknown })));
  }
  return internal();
}

/** The fields a worker (or any place with nobody to answer) logs a failure with: the error, and what a caller would have been told. */
export function problemLog(err: unknown): { err: unknown; error_kind: ProblemKind; status: number } {
  const p = toProblem(err);
  return { err, error_kind: p.kind, status: p.status };
}
