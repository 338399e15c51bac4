import { ConfigError, loadConfig } from './config';
import { DataDirLockedError } from './embedded-lock';
import { buildApp } from './http/app';
import { createLogger } from './logger';
import { openRuntime } from './runtime';

async function main() {
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig();
  } catch (e) {
    if (e instanceof ConfigError) {
      process.stderr.write(`${e.message}\n`);
      process.exit(1);
    }
    throw e;
  }
  const logger = createLogger(config.logLevel);
  let rt: Awaited<ReturnType<typeof openRuntime>>;
  try {
    rt = await openRuntime(config, logger);
  } catch (e) {
    if (e instanceof DataDirLockedError) {
      process.stderr.write(`${e.message}\n`);
      process.exit(1);
    }
    throw e;
  }
  await rt.startProjections();
  await rt.startWorkers();
  const { app, close: closeHttp } = await buildApp(rt);
  const { bootstrapEmbedded } = await import('./bootstrap');
  await app.listen({ host: config.host, port: config.port });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  logger.info(
    { mode: config.embedded ? 'embedded' : 'servers', event_store: rt.store.name, bus: rt.bus.name, port },
    `aivis listening on http://${config.host}:${port}`,
  );
  if (config.embedded) await bootstrapEmbedded(rt, `http://${config.host}:${port}`);

  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    logger.info({ signal }, 'shutting down: draining requests');
    const force = setTimeout(() => process.exit(1), 15_000);
    force.unref();
    try {
      await closeHttp(); // stops accepting, waits for in-flight requests
      await rt.close();
    } catch (err) {
      // said, not left to an unhandled rejection (which exits 1 with a bare stack, or none once stderr is gone)
      logger.error({ err }, 'shutdown failed');
      process.exit(1);
    }
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
}

main().catch((err) => {
  process.stderr.write(`aivis failed to start: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
