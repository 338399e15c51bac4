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
 * Runs `attempt` (a burst against a per-minute limit; the limiter's windows start on whole minutes); if it fails after
 * the clock's minute changed under it, the burst straddled two windows and is run once more, in the new one (so the
 * scenario must use a fresh organization each time). A failure within one minute is thrown. That is the only way a
 * correct limiter lets one request too many through, and it leaves almost a whole minute for the second run.
 */
export async function inOneMinute(attempt: () => Promise<void>): Promise<void> {
  const minute = () => Math.floor(Date.now() / 60_000);
  const m = minute();
  try {
    await attempt();
  } catch (err) {
    if (minute() === m) throw err;
    await attempt();
  }
}
