import { afterAll, beforeAll } from 'vitest';

/**
 * Something a suite starts before its tests and closes after them (a fixture site, an SMTP server). Hooks run in
 * order before the tests and in reverse order after: what is started first is closed last.
 */
export function useStarted<T extends { close(): Promise<unknown> }>(start: () => Promise<T>, ready: (t: T) => unknown): void {
  let started: T | undefined;
  beforeAll(async () => {
    started = await start();
    await ready(started);
  });
  afterAll(async () => started?.close());
}
