import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { z } from 'zod';
import type { CommandContext, Handled } from '../../commands/handle';
import { DomainErrorException, type DomainError, isDomainError } from '../domain/errors';
import { decodeUtf8, NOT_UTF8 } from '../domain/raw-input';
import type { Outbound } from '../net/safe-fetch';

export type { Outbound };
import type { ReadModelName } from '../../projections';
import { type KeyAuthenticator, keyFromHeaders, type Principal } from './auth';
import { type AppDeps, commandContextOf } from '../app/context';
import { badRequest, fromDomainError, HttpError, issueMessage, sendError, unauthorized } from './errors';

type Method = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
type Schema = z.ZodType | undefined;
type Out<S> = S extends z.ZodType ? z.output<S> : undefined;


export interface HttpDeps extends AppDeps {
  auth: KeyAuthenticator;
}

export interface RouteContext<B extends Schema, Q extends Schema, P extends Schema> {
  req: FastifyRequest;
  reply: FastifyReply;
  body: Out<B>;
  query: Out<Q>;
  params: Out<P>;
  principal: Principal;
  deps: HttpDeps;
  /** context for commands issued on behalf of this request */
  command(websiteId?: string | null): CommandContext;
}

export interface RouteDef<B extends Schema = undefined, Q extends Schema = undefined, P extends Schema = undefined> {
  method: Method;
  /** fastify syntax: /api/v1/websites/:website_id */
  url: string;
  summary: string;
  tag: string;
  /** not in the spec: tagged `extension` in the OpenAPI document */
  extension?: boolean;
  body?: B;
  query?: Q;
  params?: P;
  /** documented answer bodies by status */
  responses?: Record<number, z.ZodType>;
  /** default 200 */
  status?: number;
  handler(ctx: RouteContext<B, Q, P>): Promise<unknown>;
}

/** Identity helper that keeps the three schema types linked to the handler's context. */
export const route = <B extends Schema = undefined, Q extends Schema = undefined, P extends Schema = undefined>(
  def: RouteDef<B, Q, P>,
): RouteDef<B, Q, P> => def;

function parse<S extends Schema>(schema: S, input: unknown, where: 'body' | 'query' | 'params'): Out<S> {
  if (!schema) return undefined as Out<S>;
  if (where === 'body' && (input === undefined || input === null)) input = {};
  if (where === 'body' && (typeof input !== 'object' || Array.isArray(input))) throw badRequest('body must be a JSON object');
  const r = schema.safeParse(input);
  if (!r.success) throw badRequest(issueMessage(r.error.issues[0], input));
  return r.data as Out<S>;
}

/**
 * A request header used as data (an Idempotency-Key, say), validated like any other input, the header named in the
 * message. Node refuses NUL and control bytes in headers itself and hands other bytes over one per character
 * (latin1): they are read back as UTF-8 here (400 if they are not), then `schema` decides (`text()`-based).
 */
export function headerInput<S extends z.ZodType>(headers: Record<string, string | string[] | undefined>, name: string, schema: S): z.output<S> {
  const raw = headers[name.toLowerCase()];
  if (Array.isArray(raw)) throw badRequest(`${name}: must be sent once`);
  const value = raw === undefined ? undefined : decodeUtf8(Buffer.from(raw, 'latin1'));
  if (value === null) throw badRequest(`${name}: ${NOT_UTF8}`);
  const r = schema.safeParse(value);
  if (!r.success) throw badRequest(issueMessage(r.error.issues[0], value, name));
  return r.data;
}

/** Unwraps a command result: a domain error becomes its HTTP error. */
export function orFail<T>(r: T | DomainError): T {
  if (isDomainError(r)) throw fromDomainError(r);
  return r;
}

/**
 * Spends one request of the organization's general budget (REST and MCP share it). Sets the x-rate-limit-* headers
 * through `setHeader` (also on a 429) and throws 429 with Retry-After when the budget is gone.
 */
export async function spendOrganizationBudget(deps: HttpDeps, principal: Principal, setHeader: (name: string, value: string) => void) {
  const rate = await deps.limiter.hit(`org:${principal.organizationId}`, deps.rt.config.rateLimitPerMin, 60);
  setHeader('x-rate-limit-limit', String(rate.limit));
  setHeader('x-rate-limit-remaining', String(rate.remaining));
  setHeader('x-rate-limit-reset', String(rate.resetAt));
  if (!rate.allowed) throw new HttpError(429, 'Too many requests', undefined, { 'retry-after': String(rate.retryAfterSeconds) });
}

/** Context for commands a key issues (REST and MCP alike). */
export function commandContextFor(deps: HttpDeps, principal: Principal, websiteId?: string | null): CommandContext {
  return commandContextOf({ deps, principal }, websiteId);
}

/** The response header that says a read's data is behind: set when the answer carries `stale: true`. */
export const STALE_HEADER = 'x-aivis-stale';

/** The read models a write's caller reads next: its answer, and what a client reads after it. */
export type Reads = readonly ReadModelName[];

/**
 * Runs a command and waits (bounded) until the read models its caller reads next have it, so the caller reads its
 * write next; the others (the activity feed, a website's re-derived metrics) catch up on their own.
 */
export async function settled<R>(deps: AppDeps, run: Promise<Handled<R> | DomainError>, reads: Reads): Promise<R> {
  const h = orFail(await run);
  await deps.rt.waitForReadModels(h.position, reads);
  return h.result;
}

export function toHttpError(err: unknown): HttpError | null {
  if (err instanceof HttpError) return err;
  if (err instanceof DomainErrorException) return fromDomainError(err.error);
  return null;
}

/** Authenticates, applies the organization's general budget (with its headers), validates, runs the handler. */
export function mount(app: FastifyInstance, deps: HttpDeps, defs: RouteDef<any, any, any>[]) {
  for (const def of defs) {
    app.route({
      method: def.method,
      url: def.url,
      handler: async (req, reply) => {
        try {
          const principal = await deps.auth.authenticate(keyFromHeaders(req.headers, false));
          if (!principal) throw unauthorized();
          await spendOrganizationBudget(deps, principal, (k, v) => reply.header(k, v));
          const params = parse(def.params, req.params, 'params');
          const query = parse(def.query, req.query, 'query');
          const body = parse(def.body, req.body, 'body');
          const ctx: RouteContext<any, any, any> = {
            req,
            reply,
            body,
            query,
            params,
            principal,
            deps,
            command: (websiteId) => commandContextFor(deps, principal, websiteId),
          };
          const out = await def.handler(ctx);
          if (out !== null && typeof out === 'object' && (out as { stale?: unknown }).stale === true) reply.header(STALE_HEADER, '1');
          if (!reply.sent) {
            reply.code(def.status ?? 200);
            return out;
          }
        } catch (err) {
          const h = toHttpError(err);
          if (h) return sendError(reply, h);
          req.log.error({ err }, 'request failed');
          return sendError(reply, new HttpError(500, 'Internal server error'));
        }
      },
    });
  }
}

export { boundedString, label, text, Text, Uuid } from '../domain/schemas';
