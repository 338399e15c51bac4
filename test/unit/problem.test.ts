import { createServer, type AddressInfo, type Socket } from 'node:net';
import knex from 'knex';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { BAD_BODY, badRequest, ProblemError, problemLog, toProblem, tooManyRequests, unauthorized } from '../../src/app/problem';
import { WrongExpectedRevisionError } from '../../src/eventstore/port';
import { conflict, DomainErrorException, forbidden, invalid, notFound } from '../../src/domain/errors';

const inputError = (statusCode: number, code: string, message: string) => Object.assign(new Error(message), { statusCode, code });

describe('toProblem: one mapping from any failure to its answer', () => {
  it('given domain errors, thrown or returned, then each kind has its status and its message as {error}', () => {
    expect(toProblem(new DomainErrorException(invalid('name: too long')))).toEqual({
      status: 400,
      body: { error: 'name: too long' },
      kind: 'invalid',
      unexpected: false,
    });
    expect(toProblem(new DomainErrorException(forbidden('no')))).toMatchObject({ status: 403, body: { error: 'no' }, kind: 'forbidden' });
    expect(toProblem(notFound('Website not found'))).toMatchObject({ status: 404, body: { error: 'Website not found' }, kind: 'not_found' });
    expect(toProblem({ kind: 'unauthorized', message: 'Unauthorized' })).toMatchObject({ status: 401, kind: 'unauthorized' });
  });

  it('given a conflict with details, then 409 and the details beside the error', () => {
    expect(toProblem(new DomainErrorException(conflict('already exists', { existing_id: 'x1' })))).toEqual({
      status: 409,
      body: { error: 'already exists', existing_id: 'x1' },
      kind: 'conflict',
      unexpected: false,
    });
  });

  it('given a rate limit, as a domain error or an HTTP one, then 429 with Retry-After in seconds', () => {
    const p = toProblem(new DomainErrorException({ kind: 'rate_limited', message: 'Rate limit exceeded', retryAfterSeconds: 12 }));
    expect(p).toEqual({
      status: 429,
      body: { error: 'Rate limit exceeded' },
      headers: { 'retry-after': '12' },
      kind: 'rate_limited',
      unexpected: false,
    });
    expect(toProblem(tooManyRequests(3))).toMatchObject({ status: 429, body: { error: 'Too many requests' }, headers: { 'retry-after': '3' } });
  });

  it('given a write that lost every retry to writers of other instances, then 503 with Retry-After, nothing unexpected', () => {
    expect(toProblem(new WrongExpectedRevisionError('catalog-x', 4n, 5n))).toEqual({
      status: 503,
      body: { error: 'Too many concurrent changes: try again shortly' },
      headers: { 'retry-after': '1' },
      kind: 'unavailable',
      unexpected: false,
    });
  });

  it('given errors that are their own answer, then their status, message, details and headers as they are', () => {
    expect(toProblem(badRequest('page_size: too big'))).toMatchObject({ status: 400, body: { error: 'page_size: too big' }, kind: 'invalid' });
    expect(toProblem(unauthorized())).toMatchObject({ status: 401, body: { error: 'Unauthorized' } });
    expect(toProblem(new ProblemError(413, 'body is too large'))).toMatchObject({
      status: 413,
      body: { error: 'body is too large' },
      kind: 'invalid',
      unexpected: false,
    });
    expect(toProblem(new ProblemError(401, 'Unauthorized', undefined, { 'www-authenticate': 'Bearer' }))).toMatchObject({
      headers: { 'www-authenticate': 'Bearer' },
    });
  });

  it('given a zod error, then 400 naming the field of its first issue', () => {
    const r = z.object({ name: z.string() }).strict().safeParse({ name: 1 });
    expect(r.success).toBe(false);
    expect(toProblem(r.error)).toMatchObject({ status: 400, body: { error: expect.stringMatching(/^name\b/) }, kind: 'invalid' });
  });

  it('given input errors of the framework, then their 4xx with the messages REST documents', () => {
    expect(
      toProblem(inputError(400, 'FST_ERR_CTP_INVALID_JSON_BODY', "Body is not valid JSON but content-type is set to 'application/json'")).body,
    ).toEqual({ error: 'body must be valid JSON' });
    expect(toProblem(inputError(400, 'FST_ERR_CTP_EMPTY_JSON_BODY', 'empty')).body).toEqual({ error: 'body must be valid JSON' });
    expect(toProblem(inputError(413, 'FST_ERR_CTP_BODY_TOO_LARGE', 'Request body is too large'))).toMatchObject({
      status: 413,
      body: { error: 'body is too large' },
    });
    expect(toProblem(inputError(415, 'FST_ERR_CTP_INVALID_MEDIA_TYPE', 'Unsupported Media Type'))).toMatchObject({
      status: 415,
      body: { error: 'body must be application/json' },
    });
    expect(toProblem(inputError(400, BAD_BODY, 'body must be valid UTF-8'))).toMatchObject({
      status: 400,
      body: { error: 'body must be valid UTF-8' },
    });
  });

  it('given anything else (a bug, a lost database, a thrown string, a 5xx of the framework, an engine error with a kind of its own), then an unexpected 500 that says nothing more', () => {
    const engineError = Object.assign(new Error('provider said 429'), { kind: 'rate_limited' });
    for (const err of [
      new Error('connection terminated: password=secret'),
      'boom',
      null,
      inputError(503, 'FST_X', 'closing'),
      { kind: 'nonsense', message: 'x' },
      engineError,
    ]) {
      expect(toProblem(err)).toEqual({ status: 500, body: { error: 'Internal server error' }, kind: 'internal', unexpected: true });
    }
  });

  it("given every pooled connection busy past the pool's wait, then 503 with Retry-After: the database is overloaded, not broken", async () => {
    // a server that accepts and never answers: the pool's only connection never becomes ready
    const sockets: Socket[] = [];
    const silent = createServer((s) => sockets.push(s));
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    const port = (silent.address() as AddressInfo).port;
    const db = knex({
      client: 'pg',
      connection: { host: '127.0.0.1', port, user: 'nobody' },
      pool: { min: 0, max: 1 },
      acquireConnectionTimeout: 150,
    });
    try {
      const err = await db.raw('select 1').then(
        () => null,
        (e: unknown) => e,
      );
      expect(toProblem(err)).toEqual({
        status: 503,
        body: { error: 'The database is busy: try again shortly' },
        headers: { 'retry-after': '1' },
        kind: 'unavailable',
        unexpected: false,
      });
    } finally {
      for (const s of sockets) s.destroy();
      await db.destroy();
      await new Promise((r) => silent.close(r));
    }
  });

  it('given a failure in a worker, then it is logged with the error itself and the kind a caller would have been told', () => {
    const err = new Error('db gone');
    expect(problemLog(err)).toEqual({ err, error_kind: 'internal', status: 500 });
    expect(problemLog(new DomainErrorException(notFound('Job not found')))).toMatchObject({ error_kind: 'not_found', status: 404 });
  });
});
