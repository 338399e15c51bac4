import type { FastifyReply } from 'fastify';
import type { z } from 'zod';
import type { DomainError } from '../domain/errors';

export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly extra?: Record<string, unknown>,
    readonly headers?: Record<string, string>,
  ) {
    super(message);
  }
}

const STATUS: Record<DomainError['kind'], number> = {
  invalid: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  rate_limited: 429,
  unavailable: 503,
};

export function fromDomainError(e: DomainError): HttpError {
  if (e.kind === 'rate_limited') return new HttpError(429, e.message, undefined, { 'retry-after': String(e.retryAfterSeconds) });
  if (e.kind === 'unavailable') return new HttpError(503, e.message, undefined, { 'retry-after': String(e.retryAfterSeconds) });
  if (e.kind === 'conflict') return new HttpError(409, e.message, e.details);
  return new HttpError(STATUS[e.kind], e.message);
}

export const badRequest = (message: string) => new HttpError(400, message);
export const unauthorized = () => new HttpError(401, 'Unauthorized');

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
  const path = [prefix, ...issue.path.map(String)].filter(Boolean).join('.').replace(/\.(\d+)/g, '[$1]');
  const field = path || 'body';
  if (issue.code === 'invalid_type' && valueAt(input, issue.path) === undefined) return `${field} is required`;
  if (issue.code === 'unrecognized_keys') {
    const keys = (issue as unknown as { keys: string[] }).keys;
    return `${path ? `${path}.` : ''}${keys[0]} is not allowed`;
  }
  return `${field}: ${issue.message}`;
}

export function sendError(reply: FastifyReply, err: HttpError) {
  if (err.headers) for (const [k, v] of Object.entries(err.headers)) reply.header(k, v);
  return reply.code(err.status).send({ error: err.message, ...err.extra });
}
