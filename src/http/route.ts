import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { CommandContext } from '../../commands/handle';
import { decodeUtf8, NOT_UTF8 } from '../domain/raw-input';
import { Uuid } from '../domain/schemas';
import type { Principal } from '../domain/principal';
import type { Outbound } from '../net/safe-fetch';
import { keyFromHeaders, spendOrganizationBudget } from '../app/auth';
import { type AppDeps, commandContextOf } from '../app/context';
import { sendProblem } from '../app/errors';
import { badRequest, issueMessage, unauthorized } from '../app/problem';
import { toProblem } from '../app/problem';

export type { Outbound };
export { orFail, type Reads, settled } from '../app/context';
export { spendOrganizationBudget };

type Method = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
type Schema = z.ZodType | undefined;
type Out<S> = S extends z.ZodType ? z.output<S> : undefined;

/** What the HTTP layer runs with: the application's dependencies. */
export type HttpDeps = AppDeps;

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

interface RouteParts<B extends Schema, Q extends Schema, P extends Schema> {
  summary: string;
  /** not in the spec: tagged `extension` in the OpenAPI document */
  extension?: boolean;
  /** answers without a key (an invite's acceptance): no principal, no organization budget */
  public?: boolean;
  body?: B;
  query?: Q;
  params?: P;
  /** documented answer bodies by status */
  responses?: Record<number, z.ZodType>;
  /** default 200 */
  status?: number;
  /** the body is the handler's to stream (`req.raw`), of any content type: no parser reads it first */
  streamedBody?: { description: string };
  handler(ctx: RouteContext<B, Q, P>): Promise<unknown>;
}

export interface RouteDef<B extends Schema = undefined, Q extends Schema = undefined, P extends Schema = undefined> extends RouteParts<B, Q, P> {
  method: Method;
  /** fastify syntax: /api/v1/websites/:website_id */
  url: string;
  tag: string;
}

/** A route of a group: the group's tag, and its `extension` unless the route gives its own. */
interface GroupRoute<B extends Schema, Q extends Schema, P extends Schema> extends RouteParts<B, Q, P> {
  /** the documented body of the answer at `status` (`responses` where more than one status has one) */
  answer?: z.ZodType;
}

/** An area's routes: what they share (the tag, `extension`) is said once; each route says its method, path and the rest. */
export function routeGroup(shared: { tag: string; extension?: boolean }) {
  const at =
    (method: Method) =>
    <B extends Schema = undefined, Q extends Schema = undefined, P extends Schema = undefined>(
      url: string,
      def: GroupRoute<B, Q, P>,
    ): RouteDef<B, Q, P> => {
      const { answer, ...own } = def;
      return { method, url, ...shared, ...(answer && { responses: { [own.status ?? 200]: answer } }), ...own };
    };
  return { get: at('GET'), post: at('POST'), put: at('PUT'), patch: at('PATCH'), delete: at('DELETE') };
}

/** `?website_id=` of the website-scoped endpoints; missing gives 400 'website_id is required'. */
export const WebsiteQuery = z.strictObject({ website_id: Uuid });

/** The documented body of a 204 answer. */
export const NoContent = z.null().describe('No content');

/** Answers 204 with no body once `done` resolves. */
export async function noContent(ctx: { reply: FastifyReply }, done: Promise<unknown>) {
  await done;
  return ctx.reply.code(204).send();
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

/** The response header that says a read's data is behind: set when the answer carries `stale: true`. */
export const STALE_HEADER = 'x-aivis-stale';

/** Authenticates, applies the organization's general budget (with its headers), validates, runs the handler. */
export function mount(app: FastifyInstance, deps: HttpDeps, defs: RouteDef<any, any, any>[]) {
  for (const def of defs) {
    if (def.streamedBody) {
      app.register(async (scope) => {
        scope.removeAllContentTypeParsers();
        scope.addContentTypeParser('*', (_req, _payload, done) => done(null, undefined));
        mount(scope, deps, [{ ...def, streamedBody: undefined }]);
      });
      continue;
    }
    app.route({
      method: def.method,
      url: def.url,
      handler: async (req, reply) => {
        try {
          // a public route's handler has no principal and never reads it
          const found = def.public ? null : await deps.auth.authenticate(keyFromHeaders(req.headers, false));
          if (!found && !def.public) throw unauthorized();
          if (found) await spendOrganizationBudget(deps, found, (k, v) => reply.header(k, v));
          const principal = found as Principal;
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
            command: (websiteId) => commandContextOf({ deps, principal }, websiteId),
          };
          const out = await def.handler(ctx);
          if (out !== null && typeof out === 'object' && (out as { stale?: unknown }).stale === true) reply.header(STALE_HEADER, '1');
          if (!reply.sent) {
            reply.code(def.status ?? 200);
            return out;
          }
        } catch (err) {
          const p = toProblem(err);
          if (p.unexpected) req.log.error({ err }, 'request failed');
          return sendProblem(reply, p);
        }
      },
    });
  }
}

export { boundedString, label, text, Text, Uuid } from '../domain/schemas';
