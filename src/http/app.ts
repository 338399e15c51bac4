import { z } from 'zod';
import Fastify, {
  type FastifyBaseLogger,
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  LogController,
} from 'fastify';
import { decodeUtf8, jsonDeeperThan, NOT_PERCENT_UTF8, NOT_UTF8, percentDecode, TOO_DEEP } from '../domain/raw-input';
import type { Runtime } from '../runtime';
import type { TrustProxy } from '../config';
import { KeyAuthenticator } from './auth';
import { BAD_BODY, toProblem } from '../app/problem';
import { sendError, sendProblem } from '../app/errors';
import { badRequest, ProblemError } from '../app/problem';
import { registerHealth } from './health';
import { buildOpenApi } from './openapi';
import { migrateRateLimits, RateLimiter } from '../limits/rate';
import { createSafeFetcher } from '../net/safe-fetch';
import { type HttpDeps, mount, type Outbound, route, type RouteDef } from './route';
import { registerPitchPages } from './routes/pitches';
import { registerReportPages } from './routes/reports';
import { registerMcp } from '../mcp/server';
import { allTools, restRoutes } from '../areas';
import type { SeoOptions } from '../app/seo';
import { registerOAuth } from './oauth';

const openapiRoute = route({
  method: 'GET',
  url: '/api/v1/openapi.json',
  summary: 'This document',
  tag: 'meta',
  responses: { 200: z.looseObject({ openapi: z.literal('3.1.0'), paths: z.record(z.string(), z.unknown()) }) },
  async handler(): Promise<unknown> {
    return openApiDocument();
  },
});

let document: ReturnType<typeof buildOpenApi> | undefined;
/** Built once; buildApp builds it first, so a schema the generator cannot describe stops the start. */
const openApiDocument = () => (document ??= buildOpenApi(allRoutes));

/** Every route mounted through mount(): the REST routes and the OpenAPI document. */
export const allRoutes: RouteDef<any, any, any>[] = [...restRoutes, openapiRoute];

declare module 'fastify' {
  interface FastifyRequest {
    /** the JSON body's size in bytes as received (0 without one) */
    bodyBytes: number;
  }
}

/** A body refused before parsing: the message is the answer. */
const bodyError = (message: string) => Object.assign(new Error(`body ${message}`), { statusCode: 400, code: BAD_BODY });

/** The first query parameter whose percent-encoding is malformed or not UTF-8 (the parser would pass it on undecoded). */
function undecodableQuery(url: string): string | null {
  const q = url.indexOf('?');
  if (q < 0 || !url.includes('%', q)) return null;
  for (const pair of url.slice(q + 1).split('&')) {
    const eq = pair.indexOf('=');
    const key = percentDecode((eq < 0 ? pair : pair.slice(0, eq)).replace(/\+/g, ' '));
    if (key === null) return 'query';
    if (eq >= 0 && percentDecode(pair.slice(eq + 1).replace(/\+/g, ' ')) === null) return key;
  }
  return null;
}

/** The route parameter whose raw path segment does not decode (the router refuses such a path before matching it). */
function undecodableParam(routes: RouteDef<any, any, any>[], method: string, url: string): string {
  const path = url.split('?')[0];
  for (const r of routes) {
    if (r.method !== method) continue;
    const names: string[] = [];
    const pattern = r.url
      .split('/')
      .map((seg) => (seg.startsWith(':') ? (names.push(seg.slice(1)), '([^/]*)') : seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
      .join('/');
    const m = new RegExp(`^${pattern}$`).exec(path);
    const bad = m ? names.find((_, i) => percentDecode(m[i + 1]) === null) : undefined;
    if (bad) return bad;
  }
  return 'path';
}

export interface App {
  app: FastifyInstance;
  deps: HttpDeps;
  close(): Promise<void>;
}

export interface AppOptions {
  /** tests inject a fetcher allowed to reach local fixtures */
  outbound?: Outbound;
  /** the SEO area's entitlement cache and budgets (tests) */
  seo?: SeoOptions;
}

/**
 * fastify's trustProxy from TRUST_PROXY. A hop count is given as the function express and proxy-addr use for one (the
 * peer and the next n-1 addresses of X-Forwarded-For are proxies): fastify 5 takes a bare number as "trust nobody".
 */
export function trustProxyOption(t: TrustProxy): boolean | string[] | ((address: string, hop: number) => boolean) {
  return typeof t === 'number' ? (_address, hop) => hop < t : t;
}

export async function buildApp(rt: Runtime, options: AppOptions = {}): Promise<App> {
  const app = Fastify({
    loggerInstance: rt.logger as FastifyBaseLogger,
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: 4 * 1024 * 1024,
    return503OnClosing: true,
    // TRUST_PROXY: req.ip, which per-client limits key on, is the client's address as the trusted proxies forwarded it
    trustProxy: trustProxyOption(rt.config.trustProxy),
    // a path parameter's length is its schema's to refuse (external ids run to 255), with a message naming it
    routerOptions: { maxParamLength: 1024 },
    frameworkErrors: (err: FastifyError, req: FastifyRequest, reply: FastifyReply) =>
      sendError(
        reply,
        err.code === 'FST_ERR_BAD_URL'
          ? badRequest(`${undecodableParam(allRoutes, req.method, req.url)}: ${NOT_PERCENT_UTF8}`)
          : new ProblemError(err.statusCode ?? 400, err.message),
      ),
  });
  // a JSON body must be UTF-8 and nested at most MAX_JSON_DEPTH levels: both checked on the bytes, before JSON.parse
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.decorateRequest('bodyBytes', 0);
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (req, body: Buffer, done) => {
    const text = decodeUtf8(body);
    if (text === null) return done(bodyError(NOT_UTF8), undefined);
    if (jsonDeeperThan(body)) return done(bodyError(TOO_DEEP), undefined);
    req.bodyBytes = body.length;
    return parseJson(req, text, done);
  });
  await migrateRateLimits(rt.database.db);
  const auth = new KeyAuthenticator(rt.database.db);
  const stopListening = await rt.database.listen('aivis_keys', (payload) => auth.evict(payload));
  const deps: HttpDeps = {
    rt,
    auth,
    limiter: new RateLimiter(rt.database.db),
    outbound: options.outbound ?? { fetch: createSafeFetcher() },
    seo: options.seo,
  };

  // one line per request, never a header value
  app.addHook('onResponse', async (req, reply) => {
    req.log.info(
      { method: req.method, url: req.url.split('?')[0], status: reply.statusCode, ms: Math.round(reply.elapsedTime * 10) / 10 },
      'request',
    );
  });
  // a GET endpoint called with a body
  app.addHook('onRequest', async (req, reply) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      // a content type with an empty body (common on DELETE) is no body, not invalid JSON
      const len = req.headers['content-length'];
      if ((len === undefined || len === '0') && req.headers['transfer-encoding'] === undefined) delete req.headers['content-type'];
      return;
    }
    const len = req.headers['content-length'];
    if ((len !== undefined && len !== '0') || req.headers['transfer-encoding'] !== undefined) {
      return sendError(reply, new ProblemError(405, 'Method Not Allowed: GET requests must not have a body'));
    }
  });
  app.addHook('onRequest', async (req, reply) => {
    const bad = undecodableQuery(req.url);
    if (bad) return sendError(reply, badRequest(`${bad}: ${NOT_PERCENT_UTF8}`));
  });
  app.setNotFoundHandler((_req, reply) => sendError(reply, new ProblemError(404, 'Not found')));
  // what the routes did not answer themselves: the framework's input errors (the body's bytes, JSON, size, media type), else a 500
  app.setErrorHandler((err, req, reply) => {
    const p = toProblem(err);
    if (p.unexpected) req.log.error({ err }, 'request failed');
    return sendProblem(reply, p);
  });

  registerHealth(app, rt);
  openApiDocument();
  mount(app, deps, allRoutes);
  registerPitchPages(app, deps);
  registerReportPages(app, deps);
  const oauth = await registerOAuth(app, deps);
  await registerMcp(app, deps, allTools, oauth);
  return {
    app,
    deps,
    close: async () => {
      await app.close();
      await stopListening();
      await oauth.close();
    },
  };
}
