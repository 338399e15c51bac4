import type { FastifyInstance } from 'fastify';
import { deadLetteredSites } from '../../queries/health/dead-letters';
import { sitesOutOfLine } from '../../queries/health/out-of-line';
import { unrecordedEnds } from '../../queries/health/unrecorded';
import { factsCache } from '../../queries/metrics/metrics';
import type { Runtime } from '../runtime';

async function check(fn: () => Promise<unknown>): Promise<{ ok: boolean; error?: string }> {
  try {
    await fn();
    return { ok: true };
  } catch (e) {
    return { ok: false, error: e instanceof Error ? e.message : String(e) };
  }
}

/**
 * /healthz: the process is up. /readyz: event store, read models and bus answer, and no projection has failed (503
 * otherwise). A projection that set websites aside (dead letters), websites whose metric facts are out of line with
 * their entities, or work of the last day that ended because its outcome could not be recorded, make it `degraded` with
 * 200: everyone else is served, and every instance shares the same read models (taking instances out of rotation would
 * take the service down).
 */
export function registerHealth(app: FastifyInstance, rt: Runtime) {
  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get('/readyz', async (_req, reply) => {
    const [eventStore, readModels, bus] = await Promise.all([
      check(() => rt.store.ping()),
      check(() => rt.database.db.raw('select 1')),
      check(() => rt.bus.ping()),
    ]);
    const projections = [...rt.runners.values(), rt.relay, ...rt.followers.values()].map((r) => r.status());
    const ready = eventStore.ok && readModels.ok && bus.ok && projections.every((p) => p.status !== 'failed');
    const [setAside, outOfLine, unrecorded] = readModels.ok
      ? await Promise.all([
          deadLetteredSites(rt.database.db).catch(() => []),
          sitesOutOfLine(rt.database.db, factsCache(rt.database.db)).catch(() => []),
          unrecordedEnds(rt.database.db).catch(() => []),
        ])
      : [[], [], []];
    reply.code(ready ? 200 : 503);
    return {
      status: !ready ? 'not_ready' : setAside.length || outOfLine.length || unrecorded.length ? 'degraded' : 'ready',
      event_store: { adapter: rt.store.name, ...eventStore },
      read_models: { adapter: rt.database.kind, ...readModels },
      bus: { adapter: rt.bus.name, ...bus },
      projections,
      // websites a projection set aside on an event it cannot apply: their reads are flagged stale until a retry or a rebuild
      set_aside: setAside,
      // websites whose stored metric facts are not laid out for their brand and competitors: their metric reads derive
      // them again first (or answer 503), never serve shifted columns
      sites_out_of_line: outOfLine,
      // units and jobs of the last day that ended as failed because the store refused their outcome (what, whose, why)
      unrecorded,
      // the metric facts this instance holds in memory (FACTS_CACHE_MB) and how many websites it dropped to stay within it
      facts_cache: factsCache(rt.database.db).stats(),
      // not part of readiness: a model without a key fails its own work visibly, the rest keep running
      engines: {
        mode: rt.engines.mode,
        not_configured: rt.engines
          .status()
          .filter((e) => !e.configured)
          .map((e) => ({ model: e.model, detail: e.detail })),
      },
    };
  });
}
