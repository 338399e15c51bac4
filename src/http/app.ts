import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from 'fastify';
import type { Runtime } from '../runtime';
import { KeyAuthenticator } from './auth';
import { HttpError, sendError } from './errors';
import { registerHealth } from './health';
import { buildOpenApi } from './openapi';
import { migrateRateLimits, RateLimiter } from '../limits/rate';
import { createSafeFetcher } from '../net/safe-fetch';
import { type HttpDeps, mount, type Outbound, route, type RouteDef } from './route';
import { activityRoutes } from './routes/activity';
import { aiAccessRoutes } from './routes/ai-access';
import { apiKeyRoutes } from './routes/api-keys';
import { catalogRoutes } from './routes/catalog';
import { catalogSettingsRoutes } from './routes/catalog-settings';
import { metricsRoutes } from './routes/metrics';
import { observationsRoutes } from './routes/observations';
import { responseRoutes } from './routes/responses';
import { shoppingRoutes } from './routes/shopping';
import { websiteRoutes } from './routes/websites';
import { registerMcp } from '../mcp/server';

/** Every REST route; an area adds its list here. */
export const restRoutes: RouteDef<any, any, any>[] = [...websiteRoutes, ...apiKeyRoutes, ...activityRoutes, ...aiAccessRoutes, ...catalogRoutes, ...catalogSettingsRoutes, ...responseRoutes, ...metricsRoutes, ...observationsRoutes, ...shoppingRoutes];

export interface App {
  app: FastifyInstance;
  deps: HttpDeps;
  close(): Promise<void>;
}

export interface AppOptions {
  /** tests inject a fetcher allowed to reach local fixtures */
  outbound?: Outbound;
}

export async function buildApp(rt: Runtime, options: AppOptions = {}): Promise<App> {
  const app = Fastify({
    loggerInstance: rt.logger as FastifyBaseLogger,
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: 4 * 1024 * 1024,
    return503OnClosing: true,
  });
  await migrateRateLimits(rt.database.db);
  const auth = new KeyAuthenticator(rt.database.db);
  const stopListening = await rt.database.listen('aivis_keys', (payload) => auth.evict(payload));
  const deps: HttpDeps = { rt, auth, limiter: new RateLimiter(rt.database.db), outbound: options.outbound ?? { fetch: createSafeFetcher() } };

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
      return sendError(reply, new HttpError(405, 'Method Not Allowed: GET requests must not have a body'));
    }
  });
  app.setNotFoundHandler((_req, reply) => sendError(reply, new HttpError(404, 'Not found')));
  app.setErrorHandler((err: { statusCode?: number; code?: string; message: string }, req, reply) => {
    const status = err.statusCode ?? 500;
    if (status >= 500) {
      req.log.error({ err }, 'request failed');
      return sendError(reply, new HttpError(500, 'Internal server error'));
    }
    const message =
      err.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || err.code === 'FST_ERR_CTP_EMPTY_JSON_BODY' || /JSON/.test(err.message)
        ? 'body must be valid JSON'
        : err.code === 'FST_ERR_CTP_BODY_TOO_LARGE'
          ? 'body is too large'
          : err.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE'
            ? 'body must be application/json'
            : err.message;
    return sendError(reply, new HttpError(status, message));
  });

  registerHealth(app, rt);
  const openapiRoute = route({
    method: 'GET',
    url: '/api/v1/openapi.json',
    summary: 'This document',
    tag: 'meta',
    async handler(): Promise<unknown> {
      return buildOpenApi(allRoutes);
    },
  });
  const allRoutes: RouteDef<any, any, any>[] = [...restRoutes, openapiRoute];
  mount(app, deps, allRoutes);
  await registerMcp(app, deps);
  return {
    app,
    deps,
    close: async () => {
      await app.close();
      await stopListening();
    },
  };
}
