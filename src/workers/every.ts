import type { Logger } from '../logger';

/** A periodic task: `pass` runs after `firstMs`, then `everyMs` after each pass ends; stop() waits for a pass in flight. */
export function every(
  opts: { everyMs: number; firstMs: number; logger: Pick<Logger, 'error'>; failure: string },
  pass: () => Promise<unknown>,
): { stop(): Promise<void> } {
  let stopped = false;
  let running: Promise<unknown> = Promise.resolve();
  let timer: NodeJS.Timeout | null = null;
  const tick = () => {
    if (stopped) return;
    running = pass()
      .catch((err) => opts.logger.error({ err }, opts.failure))
      .finally(() => {
        if (!stopped) timer = setTimeout(tick, opts.everyMs);
      });
  };
  if (opts.firstMs <= 0) tick();
  else timer = setTimeout(tick, opts.firstMs);
  return {
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running;
    },
  };
}
