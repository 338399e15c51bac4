import type { FastifyInstance } from 'fastify';
import type { Runtime } from '../runtime';

async function check(fn: () => Promise<unknown>): Promise<{ ok: boolean; error?: string }> {
  try {
    await fn();
    return { ok: true };
  } catch (e) {
    return { ok: false, error: e instanceof Error ? e.message : String(e) };
  }
}

/** /healthz: the process is up. /readyz: event store, read models and bus answer, and no projection has failed. */
export function registerHealth(app: FastifyInstance, rt: Runtime) {
  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get('/readyz', async (_req, reply) => {
    const [eventStore, readModels, bus] = await Promise.all([
      check(() => rt.store.ping()),
      check(() => rt.database.db.raw('select 1')),
      check(() => rt.bus.ping()),
    ]);
    const projections = [...rt.runners.values(), rt.relay].map((r) => r.status());
    const ready = eventStore.ok && readModels.ok && bus.ok && projections.every((p) => p.status !== 'failed');
    reply.code(ready ? 200 : 503);
    return {
      status: ready ? 'ready' : 'not_ready',
      event_store: { adapter: rt.store.name, ...eventStore },
      read_models: { adapter: rt.database.kind, ...readModels },
      bus: { adapter: rt.bus.name, ...bus },
      projections,
      // not part of readiness: a model without a key fails its own work visibly, the rest keep running
      engines: { mode: rt.engines.mode, not_configured: rt.engines.status().filter((e) => !e.configured).map((e) => ({ model: e.model, detail: e.detail })) },
    };
  });
}
