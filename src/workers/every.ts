import type { Logger } from '../logger';
import { problemLog } from '../app/problem';

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
      .catch((err) => opts.logger.error(problemLog(err), opts.failure))
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

/** `every` for a sweep: the first pass after at most 5 s, then `everyMs` after each; a failed pass is logged as `failure`. */
export function sweepEvery(everyMs: number, logger: Pick<Logger, 'error'>, failure: string, pass: () => Promise<unknown>): { stop(): Promise<void> } {
  return every({ everyMs, firstMs: Math.min(everyMs, 5_000), logger, failure }, pass);
}
