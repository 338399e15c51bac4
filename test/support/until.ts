/** Polls `probe` until it returns a value other than undefined/false, or fails after `timeoutMs` with `what`. */
export async function until<T>(what: string, probe: () => Promise<T | undefined | false>, timeoutMs = 20_000, everyMs = 50): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await probe();
      if (v !== undefined && v !== false) return v as T;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/**
 * Runs `attempt` (a burst against a limit counted in fixed windows of `windowSeconds`, which start on whole multiples
 * of it); if it fails after the clock's window changed under it, the burst straddled two windows and is run once more,
 * in the new one (so the scenario must start afresh each time: a fresh organization, or counters cleared). A failure
 * within one window is thrown. That is the only way a correct limiter lets one request too many through.
 */
export async function inOneWindow(windowSeconds: number, attempt: () => Promise<void>): Promise<void> {
  const window = () => Math.floor(Date.now() / 1000 / windowSeconds);
  const w = window();
  try {
    await attempt();
  } catch (err) {
    if (window() === w) throw err;
    await attempt();
  }
}

/** `inOneWindow` for a per-minute limit. */
export const inOneMinute = (attempt: () => Promise<void>): Promise<void> => inOneWindow(60, attempt);
