import { isDeadLettered } from '../../../queries/health/dead-letters';
import type { Reads } from '../route';
import { type Caller, dbOf } from './caller';

/**
 * A read's answer, flagged `stale: true` when a read model it reads has set the website aside (an event it could not
 * apply: the website's later data waits behind it, see /readyz). REST adds the `x-aivis-stale: 1` header (mount). The
 * check runs beside the read.
 */
export async function flagStale<T extends object>(c: Caller, websiteId: string, reads: Reads, read: Promise<T>): Promise<T | (T & { stale: true })> {
  const [body, stale] = await Promise.all([read, isDeadLettered(dbOf(c), websiteId, reads)]);
  return stale ? { ...body, stale: true as const } : body;
}
